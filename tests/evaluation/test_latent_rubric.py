"""The LLM-free rubric that judges latent-state estimates against the phone's truth."""

from __future__ import annotations

from evaluation.latent import (
    judge_completion,
    judge_mistakes,
    judge_performed,
    judge_progression,
    score_records,
    truth_mistake,
)


def rec(**kw):
    base = {
        "index": 1,
        "commanded": "tap Wi-Fi",
        "performed": "tap Wi-Fi",
        "performed_kind": "tap",
        "performed_target": "Wi-Fi",
        "performed_text": "",
        "performed_matches_commanded": True,
        "truth_complete": False,
        "reached": [],
        "reached_ever": [],
        "checkpoints": ["Was the Settings app opened?", "Was Wi-Fi turned off?"],
        "estimate": {"performed_action": "I tapped the Wi-Fi switch", "progression": "", "mistakes": "No mistakes",
                     "completion": False},
    }
    base.update(kw)
    return base


def est(**kw):
    e = {"performed_action": "", "progression": "", "mistakes": "No mistakes have been made.", "completion": False}
    e.update(kw)
    return e


def test_performed_action_naming_the_element_hit_is_correct() -> None:
    assert judge_performed(rec()) is True


def test_performed_action_naming_another_element_is_wrong() -> None:
    assert judge_performed(rec(estimate=est(performed_action="I tapped Bluetooth"))) is False


def test_performed_action_of_the_wrong_kind_is_wrong() -> None:
    assert judge_performed(rec(estimate=est(performed_action="I scrolled past Wi-Fi"))) is False


def test_a_negated_estimate_is_wrong_when_the_action_happened() -> None:
    assert judge_performed(rec(estimate=est(performed_action="I did not tap Wi-Fi"))) is False


def test_when_the_tap_was_lost_only_saying_nothing_happened_is_correct() -> None:
    lost = {"performed": "", "performed_kind": "", "performed_target": "", "performed_matches_commanded": False}
    assert judge_performed(rec(**lost, estimate=est(performed_action="Nothing happened; the tap had no effect"))) is True
    assert judge_performed(rec(**lost, estimate=est(performed_action="I tapped Wi-Fi"))) is False


def test_typing_is_judged_on_the_typed_text() -> None:
    typed = {"performed": "type 'milk'", "performed_kind": "type", "performed_target": "", "performed_text": "milk"}
    assert judge_performed(rec(**typed, estimate=est(performed_action="typed milk into the note"))) is True
    assert judge_performed(rec(**typed, estimate=est(performed_action="typed bread"))) is False


def test_the_first_step_has_no_previous_action_to_judge() -> None:
    assert judge_performed(rec(index=0)) is None


def test_completion_is_judged_only_when_estimated() -> None:
    assert judge_completion(rec(truth_complete=True, estimate=est(completion=True))) is True
    assert judge_completion(rec(truth_complete=True, estimate=est(completion=False))) is False
    assert judge_completion(rec(estimate=est(completion=None))) is None


def test_a_slip_or_a_lost_checkpoint_is_an_outstanding_mistake() -> None:
    assert truth_mistake(rec(performed_matches_commanded=False))
    assert truth_mistake(rec(reached=[], reached_ever=["Was the Settings app opened?"]))
    assert not truth_mistake(rec())


def test_mistake_estimates_are_judged_on_presence() -> None:
    slip = {"performed_matches_commanded": False}
    assert judge_mistakes(rec(**slip, estimate=est(mistakes="I tapped Bluetooth instead of Wi-Fi"))) is True
    assert judge_mistakes(rec(**slip, estimate=est(mistakes="No mistakes have been made."))) is False
    assert judge_mistakes(rec(estimate=est(mistakes="None"))) is True


def test_progression_must_mention_every_reached_checkpoint() -> None:
    reached = {"reached": ["Was the Settings app opened?"], "reached_ever": ["Was the Settings app opened?"]}
    assert judge_progression(rec(**reached, estimate=est(progression="You have opened the Settings app"))) is True
    assert judge_progression(rec(**reached, estimate=est(progression="You have looked at the clock"))) is False
    assert judge_progression(rec(estimate=est(progression="anything"))) is None


def test_scores_report_baselines_and_hard_cases() -> None:
    records = [
        rec(index=0),
        rec(),
        rec(performed_matches_commanded=False, performed_target="Bluetooth", performed="tap Bluetooth",
            estimate=est(performed_action="tapped Bluetooth by mistake", mistakes="I hit Bluetooth")),
        rec(truth_complete=True, estimate=est(performed_action="tapped Wi-Fi", completion=True)),
    ]
    s = score_records(records)
    pa = s["performed_action"]
    assert (pa.judged, pa.correct, pa.not_judged) == (3, 3, 1)
    assert pa.baseline == 2 / 3  # the slip defeats "performed = commanded"
    assert (pa.hard_judged, pa.hard_correct) == (1, 1)
    comp = s["completion"]
    assert comp.judged == 4 and comp.correct == 4 and comp.baseline == 3 / 4
    assert s["mistakes"].hard_judged == 1
