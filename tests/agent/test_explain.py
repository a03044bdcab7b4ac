"""The proposal card's reason line: the model's own words where it gave some, else the
grounding evidence, never a raw JSON reply."""

from __future__ import annotations

from agent.explain import why_line
from agent.types import Action, ActionType, LatentState, Proposal, Target


def tap(words: str) -> Action:
    return Action(ActionType.TAP, target=Target(description=words))


def test_a_structured_replys_why_is_the_reason_not_its_json():
    p = Proposal(tap("Settings"), rationale='{"action": {"element": "Settings [8]", "type": "tap"}, '
                                            '"why": "Wi-Fi is switched off in Settings."}')
    assert why_line(p) == "Wi-Fi is switched off in Settings."


def test_json_without_a_reason_falls_back_to_the_grounding_evidence():
    p = Proposal(tap("Network & internet"), rationale='{"action": {"element": "Network & internet [4]", "type": "tap"}}',
                 evidence=("text match [4] 'Network & internet' sim=0.93",))
    line = why_line(p, "Turn off Wi-Fi")
    assert line.startswith("'Network & internet' is the entry on this screen") and "Turn off Wi-Fi" in line
    assert "{" not in line


def test_a_free_text_thought_is_cut_to_one_sentence_and_done_says_why():
    assert why_line(Proposal(tap("Display"), rationale="Display holds the theme. Then I will look for dark.")) == \
        "Display holds the theme."
    done = Proposal(Action.simple(ActionType.COMPLETE), latent=LatentState(completion_reason="Wi-Fi shows Off."))
    assert why_line(done) == "Wi-Fi shows Off."
    assert why_line(Proposal(Action.open_app("Clock"), rationale="open Clock")) == "The task is done in Clock."
