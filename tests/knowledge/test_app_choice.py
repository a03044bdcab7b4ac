"""Which app a goal needs, from the model's next-word likelihoods (agent.knowledge.app_choice):
each installed app's name scored as the first word of the model's answer, above the name's
prior, and used only to order the home screen's icons when the goal names none of them."""

from __future__ import annotations

import pytest

from agent.knowledge.app_choice import AppChooser
from agent.knowledge.guide import MapGuide
from agent.knowledge.guided import GuidedPlanner
from agent.knowledge.ranker import Policy, StepRanker
from agent.llm.base import LLMError
from agent.llm.openai_client import OpenAIClient
from agent.planners.base import PlanContext
from agent.types import LLMCall
from tests.knowledge.recording_planner import Recorder
from vision.geometry import Rect, Size
from vision.types import Element, ElementKind, ScreenParse

#: What the model's answer starts with after a neutral task: it likes "Settings" whatever is asked.
PRIOR = {" Settings": -1.0, " Clock": -4.0, " Files": -3.0, " Calendar": -3.0, " app": -2.0}


class Words:
    """A completion server's next-word answers: the neutral question gets ``PRIOR``, any
    other the distribution it was made with; every prompt asked is kept."""

    model = "scripted"

    def __init__(self, goal_words: dict[str, float]) -> None:
        self.goal_words, self.asked = goal_words, []

    def next_words(self, prompt: str, k: int = 100) -> tuple[dict[str, float], LLMCall]:
        self.asked.append(prompt)
        words = PRIOR if "do something" in prompt else self.goal_words
        return dict(words), LLMCall(purpose="next words", model=self.model, prompt=prompt)


def test_an_app_the_goal_makes_likelier_than_its_prior_comes_first_even_when_another_is_likelier_outright():
    chooser = AppChooser(Words({" Settings": -0.9, " Clock": -1.5, " Files": -3.5}))
    odds = chooser.rank("Start the stopwatch", ["Settings", "Clock", "Files", "Calendar"])
    assert odds.best == "Clock"  # -1.5 over its prior -4.0, while Settings barely moved
    assert [name for name, _ in odds.ranked] == ["Clock", "Settings", "Files"]  # Calendar: not in the answer
    assert len(odds.calls) == 2  # the neutral question and the goal's


def test_the_neutral_question_is_asked_once_per_chooser():
    words = Words({" Clock": -0.5})
    chooser = AppChooser(words)
    chooser.rank("Start the stopwatch", ["Clock", "Settings"])
    again = chooser.rank("Set a timer", ["Clock", "Settings"])
    assert sum("do something" in p for p in words.asked) == 1 and len(again.calls) == 1


def test_a_token_names_an_app_only_when_it_begins_the_name_with_three_letters_or_is_the_whole_name():
    chooser = AppChooser(Words({" C": -0.1, " Cal": -1.0, " Go": -0.2}))
    odds = chooser.rank("Add an event", ["Calendar", "Clock", "Go", "Google Maps"])
    assert dict(odds.ranked).keys() == {"Calendar", "Go"}  # " C" names nothing; " Go" names only "Go"


def test_the_question_is_written_in_the_models_turn_format():
    words = Words({" Clock": -0.5})
    AppChooser(words, turns="gemma").rank("Start the stopwatch", ["Clock"])
    assert words.asked[-1].startswith("<start_of_turn>user\n") and "Start the stopwatch" in words.asked[-1]
    assert words.asked[-1].endswith("<start_of_turn>model\nOpen the")


def test_a_server_that_cannot_say_or_an_unknown_turn_format_gives_no_ranking():
    class Refuses(Words):
        def next_words(self, prompt: str, k: int = 100) -> tuple[dict[str, float], LLMCall]:
            raise LLMError("no completions endpoint")

    assert AppChooser(Refuses({})).rank("Show me my texts", ["Messages"]).ranked == ()
    assert not AppChooser.usable(Words({}), "alpaca") and not AppChooser.usable(object(), "chatml")


# ---- on the home screen ------------------------------------------------------------------
class HomePhone:
    """A phone showing its home screen, with these apps installed."""

    def __init__(self, *apps: str) -> None:
        self.apps = apps

    def foreground(self) -> tuple[str, str]:
        return "com.example.launcher", "Home"

    def installed_apps(self) -> list[tuple[str, str]]:
        return [(name, f"com.example.{name.lower()}") for name in self.apps]


def home(*names: str) -> ScreenParse:
    return ScreenParse(Size(1080, 2400), tuple(
        Element(str(i), ElementKind.BUTTON, Rect(100 + 200 * i, 800, 280 + 200 * i, 980), text=n, clickable=True)
        for i, n in enumerate(names)))


def guided(words: Words, device: object) -> tuple[GuidedPlanner, Recorder]:
    inner = Recorder()
    ranker = StepRanker({"own": 10.0, "bias_done": -6.0}, Policy(act=1.01, done=1.01, mass=0.5))
    return GuidedPlanner(inner, MapGuide([]), device, ranker=ranker, small_model=True,
                         apps=AppChooser(words)), inner


APPS = ("Settings", "Calendar", "Clock", "Files")


def test_on_the_home_screen_a_goal_naming_no_app_is_offered_the_app_the_model_finds_likeliest_first():
    words = Words({" Settings": -0.9, " Clock": -1.5})
    planner, inner = guided(words, HomePhone(*APPS))
    step = planner.propose(PlanContext("Start the stopwatch", home(*APPS), ""))
    ctx = inner.seen[-1]
    assert ctx.offer[0] == "2"  # Clock
    assert any("'Clock'" in n for n in ctx.notes)
    assert [c.purpose for c in step.llm_calls] == ["next words", "next words"]  # counted with the step


def test_the_model_is_asked_once_per_goal_and_a_turned_down_app_makes_way_for_the_next():
    from agent.types import Action, Target

    words = Words({" Settings": -0.9, " Clock": -1.5, " Files": -2.0})
    planner, inner = guided(words, HomePhone(*APPS))
    parse = home(*APPS)
    planner.propose(PlanContext("Start the stopwatch", parse, ""))
    clock = parse.elements[2]
    rejected = Action.tap(clock.rect.center.x, clock.rect.center.y, Target(element_id="2", point=clock.rect.center, description="Clock"))
    second = planner.propose(PlanContext("Start the stopwatch", parse, "", rejected=(rejected,)))
    assert inner.seen[-1].offer[0] == "3"  # Files: above its prior too, now the likeliest left
    assert second.llm_calls == () and len(words.asked) == 2


@pytest.mark.parametrize("where", ["goal names an app", "inside an app"])
def test_the_model_is_not_asked_where_the_goal_names_an_app_shown_or_off_the_home_screen(where):
    words = Words({" Clock": -0.1})

    class InApp(HomePhone):
        def foreground(self) -> tuple[str, str]:
            return "com.example.clock", "Main"

    device = HomePhone(*APPS) if where == "goal names an app" else InApp(*APPS)
    planner, inner = guided(words, device)
    goal = "Delete the old invoice in Files" if where == "goal names an app" else "Start the stopwatch"
    planner.propose(PlanContext(goal, home(*APPS), ""))
    assert words.asked == []
    if where == "goal names an app":
        assert inner.seen[-1].offer[0] == "3"  # Files, by the goal's own words


def test_llama_cpp_server_gives_the_next_words_and_the_chooser_ranks_installed_apps(smollm2_url):
    from tests.smollm2_server import ALIAS

    client = OpenAIClient(model=ALIAS, base_url=smollm2_url)
    try:
        words, call = client.next_words("<|im_start|>user\nName a fruit.<|im_end|>\n<|im_start|>assistant\n", 20)
        assert len(words) >= 10 and all(p <= 0.0 for p in words.values()) and call.purpose == "next words"
        odds = AppChooser(client, "chatml").rank("Set an alarm for 7 AM", ["Clock", "Settings", "Calendar", "Files"])
        assert odds.ranked and {name for name, _ in odds.ranked} <= {"Clock", "Settings", "Calendar", "Files"}
    finally:
        client.close()


def test_on_a_phone_in_another_language_an_app_is_scored_by_the_likelier_of_its_shown_and_package_names():
    chooser = AppChooser(Words({" Clock": -0.5, " Settings": -1.0}))
    odds = chooser.rank("Starte die Stoppuhr", ["Uhr", "Einstellungen"], {"Uhr": ("Clock",), "Einstellungen": ("Settings",)})
    assert odds.best == "Uhr" and {name for name, _ in odds.ranked} == {"Uhr", "Einstellungen"}
