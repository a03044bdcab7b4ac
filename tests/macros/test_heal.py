"""A replay heals the step it cannot find again, with one model call and the user's yes.

The dark-theme macro is recorded on the English phone and replayed on the German phone
whose list rows changed places: the Dark theme switch is no longer where it was, its words
are other words, and the fingerprint alone cannot tell it from its new neighbour.  The
model (the scripted server over real HTTP, answering with the element that reads
"Dunkles Design") is asked once; the healed step waits for the user whatever the
autonomy; approved, the macro's next version says how the step was healed and replays
with no model call; rejected, no version is made.
"""

from __future__ import annotations

import json
import re

import pytest

from agent.cost import HEALED, run_cost
from agent.events import AwaitingDecision, Finished
from agent.macros.heal import HealAnswer, ModelHealer
from agent.macros.io import export_json, import_json
from agent.macros.recorder import Observation, Recorder
from agent.macros.replay import Replayer
from agent.planners.base import ASK_USER
from agent.types import Action, Decision, DecisionKind
from phone.virtual.i18n import translate
from phone.virtual.phone import VirtualPhone
from vision.types import ScreenParse

DEMO = ("Settings", "Display", "Dark theme")


class Tree:
    def parse(self, screen) -> ScreenParse:
        from vision.hierarchy import parse_uiautomator

        tp = parse_uiautomator(screen.hierarchy_xml, screen.size)
        return ScreenParse(screen.size, tp.elements, tp.blocks)


def recorded():
    phone = VirtualPhone()
    rec = Recorder()

    def observe() -> Observation:
        s = phone.screenshot(with_hierarchy=True)
        return Observation(Tree().parse(s), s.image, s.foreground_package)

    for words in DEMO:
        before = observe()
        c = next(e for e in phone.ground_truth().elements if e.text == words).rect.center
        phone.tap(c.x, c.y)
        rec.record(Action.tap(c.x, c.y), before, observe())
    return rec.build("dark theme", description="turn on the dark theme")


def knowing_model(prompt: str) -> str:
    """A model that knows German: it names the element that reads "Dark theme" in German."""
    listed = json.loads(prompt.split("size [w, h]):\n", 1)[1].split("\n\n")[0])["UI elements"]
    want = translate("Dark theme", "de")
    hit = next((e["id"] for e in listed if e["text"] == want), None)
    return json.dumps({"element": hit, "reason": "the same switch in German"})


@pytest.fixture
def model():
    from agent.llm.ollama_client import OllamaClient
    from tests.agent.conftest import FAST
    from tests.agent.fake_ollama import FakeLLMServer

    with FakeLLMServer(responder=knowing_model) as server:
        client = OllamaClient(model="fake-model:latest", host=server.url, policy=FAST)
        yield server, client
        client.close()


def replay(macro, client, answer, layout="reordered", lang="de"):
    """Replay ``macro`` unattended ("Run on…"): ``answer`` decides each question put to the user."""
    phone = VirtualPhone(lang=lang, layout=layout)
    replay = Replayer(phone, Tree(), healer=ModelHealer(client) if client is not None else None).start(macro)
    asked: list[AwaitingDecision] = []
    gen, reply, episode = replay.events, None, None
    try:
        while True:
            ev = gen.send(reply)
            reply = None
            if isinstance(ev, AwaitingDecision):
                asked.append(ev)
                reply = answer(replay, ev)
            elif isinstance(ev, Finished):
                episode = ev.episode
    except StopIteration as stop:
        result = stop.value
    return result, asked, episode, phone


def healed(ev: AwaitingDecision) -> bool:
    return any(e.startswith(HEALED) for e in ev.proposal.evidence)


def test_an_approved_heal_makes_a_new_version_that_says_how_and_replays_with_no_model_call(model):
    server, client = model
    macro = recorded()
    result, asked, episode, phone = replay(macro, client, lambda r, ev: Decision(DecisionKind.APPROVE))
    assert result.succeeded and phone.state["settings"]["dark_theme"] is True
    heals = [ev for ev in asked if healed(ev)]
    assert len(heals) == 1 and len(asked) == 1  # only the healed step was put to the user (autonomy auto)
    assert any(e.startswith(ASK_USER) for e in heals[0].proposal.evidence)
    assert run_cost(episode).model_calls == 1 == server.chat_requests
    assert result.healed == 1 and result.macro.version == 2
    note = result.macro.steps[2].healed
    assert note is not None and note.chose == translate("Dark theme", "de") and note.missed.startswith("ambiguous")
    assert [s.healed is None for s in result.macro.steps] == [True, True, False]
    # the new version finds its element again by itself: no question, no model call
    again, asked_again, episode_again, phone_again = replay(result.macro, client, lambda r, ev: Decision(
        DecisionKind.ABORT))
    assert again.succeeded and not asked_again and phone_again.state["settings"]["dark_theme"] is True
    assert run_cost(episode_again).model_calls == 0 and server.chat_requests == 1


def test_a_rejected_heal_makes_no_version_and_the_step_waits_for_the_user(model):
    _, client = model
    macro = recorded()
    result, asked, _, phone = replay(macro, client, lambda r, ev: Decision(DecisionKind.REJECT, feedback="no"))
    assert healed(asked[0]) and replay_question(asked[1])
    assert not result.repaired and result.healed == 0 and result.macro.version == 1
    assert phone.state["settings"]["dark_theme"] is False


def replay_question(ev: AwaitingDecision) -> bool:
    return any(e.startswith("blocked: ") for e in ev.proposal.evidence)


def test_an_ambiguous_match_never_runs_without_the_user(model):
    macro = recorded()
    result, asked, episode, phone = replay(macro, None, lambda r, ev: Decision(DecisionKind.ABORT))
    assert len(asked) == 1 and replay_question(asked[0])
    assert re.search(r"ambiguous", asked[0].reason + asked[0].proposal.rationale)
    assert phone.state["settings"]["dark_theme"] is False and phone.state["settings"] == VirtualPhone(
        lang="de").state["settings"]
    assert run_cost(episode).model_calls == 0


def test_steps_that_match_make_no_model_call(model):
    server, client = model
    result, asked, episode, _ = replay(recorded(), client, lambda r, ev: Decision(DecisionKind.ABORT),
                                       layout="default", lang="en")
    assert result.succeeded and not asked and server.chat_requests == 0 and run_cost(episode).model_calls == 0


def test_export_and_import_keep_how_a_step_was_healed(model):
    _, client = model
    result, *_ = replay(recorded(), client, lambda r, ev: Decision(DecisionKind.APPROVE))
    back = import_json(export_json(result.macro))
    assert back.steps[2].healed == result.macro.steps[2].healed and back.steps[2].healed is not None
    assert json.loads(export_json(result.macro))["version"] == 2
    old = json.loads(export_json(result.macro))
    old["version"] = 1
    for s in old["data"]["steps"]:
        s.pop("healed")
    assert import_json(json.dumps(old)).steps[2].healed is None  # an export from before healing reads


# ---- what a healed step is aimed at ------------------------------------------------------------


class Picks:
    """A healer whose model answers with the element ``eid`` (the planner's side of the seam)."""

    def __init__(self, eid: str) -> None:
        self.eid = eid

    def heal(self, step, parse, missed, cancel=None):
        return HealAnswer(parse.element(self.eid), "the one the step means", model="m")


def propose_healed(step, now: ScreenParse, eid: str):
    from agent.macros.planner import Eyes, MacroPlanner
    from agent.macros.types import Macro
    from agent.planners.base import PlanContext

    macro = Macro("m", steps=(step,))
    planner = MacroPlanner(macro, macro, Eyes(Tree()), start_in_app=False, healer=Picks(eid))
    return planner.propose(PlanContext(goal="", parse=now, screen=""))


def test_a_doubted_swipe_is_healed_into_the_chosen_list_in_its_recorded_direction():
    """Two lists that look alike: the recorded swipe's list is doubted, the model picks the lower one,
    and the healed swipe runs inside it, the finger moving up as recorded (not a tap, not an error)."""
    from agent.macros.recorder import make_step
    from vision.geometry import Rect, Size
    from vision.types import Element, ElementKind

    size = Size(1080, 2400)

    def lst(eid: str, top: int, bottom: int) -> Element:
        return Element(eid, ElementKind.CONTAINER, Rect(0, top, 1080, bottom), scrollable=True)

    step = make_step(Action.swipe(540, 1600, 540, 800), Observation(ScreenParse(size, (lst("a", 200, 2200),))))
    now = ScreenParse(size, (lst("a", 200, 1100), lst("b", 1200, 2100)))
    proposal = propose_healed(step, now, "b")
    a = proposal.action
    assert healed_evidence(proposal) and a.target is not None and a.target.element_id == "b"
    assert a.touch is not None and a.lift is not None
    assert now.element("b").rect.contains(a.touch) and now.element("b").rect.contains(a.lift)
    assert a.lift.y < a.touch.y and a.lift.x == a.touch.x


def test_a_healed_tap_on_a_row_found_in_the_pixels_goes_where_taps_on_it_go():
    """The healed tap lands on the row's title line (``aim_at``), not the middle of the row."""
    from agent.grounding.base import aim_at
    from agent.macros.recorder import make_step
    from vision.geometry import Rect, Size
    from vision.types import Element, ElementKind, ElementSource

    size = Size(1080, 2400)

    def row(eid: str, top: int, title: str) -> tuple[Element, Element]:
        r = Element(eid, ElementKind.CONTAINER, Rect(0, top, 1080, top + 300), label=f"{title} · details",
                    class_name="list_item", source=ElementSource.DETECTOR, clickable=True)
        return r, Element(eid + "t", ElementKind.TEXT, Rect(40, top + 20, 600, top + 80), text=title,
                          source=ElementSource.DETECTOR)

    step = make_step(Action.tap(540, 450), Observation(ScreenParse(size, row("a", 300, "Wi-Fi"))))
    now = ScreenParse(size, (*row("a", 300, "WLAN"), *row("b", 700, "WLAN")))
    proposal = propose_healed(step, now, "b")
    want = aim_at(Action.tap(1, 1), now.element("b"), now).touch
    assert healed_evidence(proposal) and want != now.element("b").rect.center
    assert proposal.action.touch == want and proposal.action.target.element_id == "b"


def healed_evidence(proposal) -> bool:
    return any(e.startswith(HEALED) for e in proposal.evidence)
