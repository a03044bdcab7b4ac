"""Recording demonstrations and replaying them on changed screens (a replay is a run of
the agent loop whose proposals come from the macro)."""

from __future__ import annotations

import pytest

from agent.events import Executed, Finished, Rejected
from agent.macros.editing import MissingParameter, parameterize
from agent.macros.recorder import Recorder
from agent.macros.replay import NeedDemonstration, Replayer, run_unattended
from agent.types import Action, ActionType, Decision, DecisionKind, EpisodeStatus
from tests.macros.fakephone import FRENCH, PKG, FakePhone, Variant
from tests.macros.sim_support import drive_replay
from vision.geometry import Size


def record_new_alarm(phone: FakePhone, name: str = "Wake up"):
    rec = Recorder()
    for what in ("tab_alarm", "add", None, "save"):
        act = Action.type_text(name) if what is None else Action.tap(*phone.center_of(what))
        before = phone.observe()
        if act.type is ActionType.TYPE:
            phone.input_text(act.text)
        else:
            phone.tap(act.touch.x, act.touch.y)
        rec.record(act, before, phone.observe())
    return rec.build("new alarm", app=PKG)


def replayer_for(phone: FakePhone, **kw) -> Replayer:
    return Replayer(device=phone, parser=phone.parser, **kw)


def test_recorded_tap_becomes_semantic_step_with_fingerprint():
    phone = FakePhone()
    macro = record_new_alarm(phone)
    first = macro.steps[0]
    assert first.description == "tap the 'Alarm' tab in the top tab bar"
    fp = first.target.fingerprint
    assert fp.text == "Alarm" and fp.resource_id.endswith("tab_alarm") and fp.block_role == "tab_bar"
    assert fp.kind == "button" and 0 <= fp.rel_x <= 0.34 and len(fp.crop_hash) == 16
    assert first.action.touch is not None  # raw coordinates kept
    assert first.screen_before != first.screen_after
    assert macro.steps[1].description == "tap the 'add' button"
    assert macro.steps[2].description.startswith("type 'Wake up' into the")
    assert macro.app == PKG and macro.version == 1


def test_replay_on_the_same_phone_matches_by_exact_id():
    macro = record_new_alarm(FakePhone())
    phone = FakePhone()
    result = run_unattended(replayer_for(phone), macro)
    assert result.succeeded, result.message
    assert result.levels == ("exact_id", "exact_id", "not_needed", "exact_id")
    assert phone.screen == "saved" and phone.typed == ["Wake up"]
    assert not result.repaired and result.macro.version == 1


def test_replay_on_tablet_in_french_with_new_ids_uses_resource_ids():
    macro = record_new_alarm(FakePhone())
    phone = FakePhone(Variant(size=Size(1600, 2560), lang=FRENCH, renumber_ids=True))
    result = run_unattended(replayer_for(phone), macro)
    assert result.succeeded, result.message
    assert result.levels[0] == "resource_id" and result.levels[3] == "resource_id"
    assert phone.screen == "saved"


def test_without_resource_ids_text_and_icon_label_levels_carry_the_replay():
    macro = record_new_alarm(FakePhone())
    phone = FakePhone(Variant(size=Size(1440, 3200), drop_resource_ids=True, renumber_ids=True, dark=True))
    result = run_unattended(replayer_for(phone), macro)
    assert result.succeeded, result.message
    assert result.levels == ("text", "icon_label", "not_needed", "text")


def test_french_without_ids_falls_back_to_fingerprint_similarity():
    macro = record_new_alarm(FakePhone())
    phone = FakePhone(Variant(lang=FRENCH, drop_resource_ids=True, renumber_ids=True))
    result = run_unattended(replayer_for(phone), macro)
    assert result.succeeded, result.message
    assert result.levels[0] == "text"  # "Alarme" is close enough to "Alarm"
    assert result.levels[3] == "fingerprint"  # "Enregistrer" is not "Save"


def test_llm_grounder_is_the_last_resort_and_gets_the_step_words():
    macro = record_new_alarm(FakePhone())
    phone = FakePhone(Variant(drop_resource_ids=True, renumber_ids=True, shift_save=True, lang=FRENCH))
    asked = []

    def grounder(words, parse):
        asked.append(words)
        ok = [e for e in parse.elements if e.text == "OK"]
        return ok[0].id if ok else None

    result = run_unattended(replayer_for(phone, grounder=grounder), macro)
    assert result.succeeded, result.message
    assert result.levels[3] == "llm_grounder"
    assert asked == ["tap the 'Save' button in the form"]


def test_missing_element_asks_for_a_demonstration_and_the_repair_is_the_next_version():
    macro = record_new_alarm(FakePhone())
    phone = FakePhone(Variant(drop_resource_ids=True, renumber_ids=True, shift_save=True, lang=FRENCH))
    asked: list[NeedDemonstration] = []

    def demonstrate(ev):
        asked.append(ev)
        return Action.tap(*phone.center_of("save"))

    result = run_unattended(replayer_for(phone), macro, demonstrate=demonstrate)
    assert result.succeeded and result.repaired
    assert len(asked) == 1 and asked[0].index == 3 and "could not find" in asked[0].reason
    assert result.macro.version == 2 and result.macro.id == macro.id
    assert result.macro.steps[3].target.fingerprint.text == "OK"
    # the repaired step stays repaired: the next replay on the same variant needs no help
    phone2 = FakePhone(Variant(drop_resource_ids=True, renumber_ids=True, shift_save=True, lang=FRENCH))
    again = run_unattended(replayer_for(phone2), result.macro)
    assert again.succeeded and not again.repaired
    assert again.levels[3] in ("text", "exact_id", "fingerprint")


def test_unattended_replay_that_cannot_find_a_step_fails_without_guessing():
    macro = record_new_alarm(FakePhone())
    phone = FakePhone(Variant(drop_resource_ids=True, renumber_ids=True, shift_save=True, lang=FRENCH))
    result = run_unattended(replayer_for(phone), macro)
    assert result.status == "failed" and "Save" in result.message
    assert phone.screen == "new_alarm"  # nothing was tapped blindly


def test_wrong_effect_is_detected_and_undone_before_asking():
    macro = record_new_alarm(FakePhone())
    phone = FakePhone()
    # sabotage: the add button now goes back to the home screen
    import tests.macros.fakephone as fp

    saved = dict(fp.TRANSITIONS)
    fp.TRANSITIONS[("alarms", "add")] = "saved"
    fp.TRANSITIONS[("saved", "done")] = "saved"
    try:
        events = []
        result = run_unattended(replayer_for(phone), macro, demonstrate=lambda ev: events.append(ev))
    finally:
        fp.TRANSITIONS.clear()
        fp.TRANSITIONS.update(saved)
    assert result.status == "failed"
    assert events and events[0].index == 1 and "wrong effect" in events[0].reason
    assert "undone with back" in events[0].reason and phone.keys


def test_missing_app_is_reported_before_any_step():
    macro = record_new_alarm(FakePhone())
    phone = FakePhone(installed=("com.other",))
    events = list(replayer_for(phone).run(macro))
    result = run_unattended(replayer_for(phone), macro)
    finished = [e for e in events if isinstance(e, Finished)]
    assert finished and finished[0].status is EpisodeStatus.IMPOSSIBLE
    why = finished[0].episode.steps[-1].proposal.rationale  # the stored step says why
    assert PKG in why and "not installed" in why
    assert result.status == "app_missing" and "not installed" in result.message and phone.taps == []


def test_open_app_failure_counts_as_missing_app_when_the_device_cannot_list_apps():
    macro = record_new_alarm(FakePhone())
    phone = FakePhone(installed=("com.other",))
    phone.installed_apps = None  # this device cannot list apps
    result = run_unattended(replayer_for(phone), macro)
    assert result.status == "app_missing" and "could not be opened" in result.message


def test_parameters_are_filled_at_run_time_and_missing_ones_are_named():
    macro = parameterize(record_new_alarm(FakePhone()), 2, "label")
    assert macro.parameters == ("label",) and macro.steps[2].action.text == "{label}"
    with pytest.raises(MissingParameter, match=r"\{label\}"):
        replayer_for(FakePhone()).run(macro, {})
    phone = FakePhone()
    result = run_unattended(replayer_for(phone), macro, {"label": "Gym"})
    assert result.succeeded and phone.typed == ["Gym"]


def test_per_step_approval_yields_each_step_and_reject_skips_it():
    macro = record_new_alarm(FakePhone())
    phone = FakePhone()
    seen = []

    def answer(index, ev):
        seen.append(index)
        if index == 2:
            return Decision(DecisionKind.REJECT, feedback="do not type")
        return Decision(DecisionKind.APPROVE)

    result, events = drive_replay(replayer_for(phone, approve_each=True).start(macro), answer)
    # the setup step (open the app) and the finishing step are asked too: they are not macro steps
    assert [i for i in seen if i is not None] == [0, 1, 2, 3]
    assert result.succeeded and phone.typed == [] and result.steps[2].skipped
    assert sum(isinstance(e, Rejected) for e in events) == 1
    assert result.steps[2].words == "skipped" and result.steps[0].words.startswith("found by its id")


def test_approval_abort_stops_the_replay():
    macro = record_new_alarm(FakePhone())
    phone = FakePhone()
    result = run_unattended(replayer_for(phone, approve_each=True), macro,
                            approve=lambda ev: Decision(DecisionKind.ABORT))
    assert result.status == "aborted" and phone.taps == []


def test_demonstrated_text_equal_to_a_parameter_value_stays_a_parameter():
    macro = parameterize(record_new_alarm(FakePhone()), 2, "label")
    phone = FakePhone()

    def answer(index, ev):
        if index == 2:
            return Decision(DecisionKind.EDIT, action=Action.type_text("Gym"))
        return Decision(DecisionKind.APPROVE)

    result, events = drive_replay(replayer_for(phone, approve_each=True).start(macro, {"label": "Gym"}), answer)
    assert result.repaired and result.macro.steps[2].action.text == "{label}"
    assert any(isinstance(e, Executed) and e.record.decision.kind is DecisionKind.EDIT for e in events)


def test_an_agent_grounder_can_serve_as_the_last_cascade_level():
    from agent.grounding.base import Grounded
    from agent.macros.reidentify import grounder_from_agent

    class PickOK:
        def ground(self, action, ctx):
            el = [e for e in ctx.parse.elements if e.text == "OK"][0]
            assert action.target.description == "tap the 'Save' button in the form"
            return Grounded(action, element=el)

    macro = record_new_alarm(FakePhone())
    phone = FakePhone(Variant(drop_resource_ids=True, renumber_ids=True, shift_save=True, lang=FRENCH))
    result = run_unattended(replayer_for(phone, grounder=grounder_from_agent(PickOK())), macro)
    assert result.succeeded and result.levels[3] == "llm_grounder"
