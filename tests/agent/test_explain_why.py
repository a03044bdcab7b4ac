"""The card's why speaks of the proposed element and is never the user's own note handed
back: a why that copies the prompt (a rejection reason, a demonstration note, the task) or
names something else gives way to the sentence saying what grounded the step."""

from __future__ import annotations

from agent.explain import copies_prompt, names_target, why_line
from agent.feedback import correction_note
from agent.types import Action, ActionType, DecisionKind, LLMCall, Proposal, Target
from vision.geometry import Rect, Size
from vision.types import Element, ElementKind, ScreenParse

SCREEN = ScreenParse(Size(1080, 2400), elements=(
    Element("5", ElementKind.BUTTON, Rect(40, 400, 300, 600), label="Calendar", clickable=True),
    Element("6", ElementKind.BUTTON, Rect(340, 400, 600, 600), label="Settings", clickable=True),
))


def tap(element_id: str, words: str) -> Action:
    return Action.tap(100, 500, target=Target(element_id=element_id, description=f"{words} [{element_id}]"))


def prompt(*notes: str) -> LLMCall:
    body = "\n".join(["Screen 1080x2400, app launcher:", "  [5] button (Calendar)", "  [6] button (Settings)",
                      *notes, "The task is: Turn on airplane mode"])
    return LLMCall("plan", "builtin", body)


def proposal(action: Action, why: str, *notes: str, evidence: tuple[str, ...] = ("element id [5]",)) -> Proposal:
    return Proposal(action, rationale=f'{{"action": {{"type": "tap"}}, "why": "{why}"}}', evidence=evidence,
                    llm_calls=(prompt(*notes),))


REJECTED = 'The user rejected "open Clock" on this screen and said: Airplane mode is in Settings, not Clock. Do not propose it again.'


def test_a_rejection_reason_handed_back_is_not_the_why():
    p = proposal(tap("5", "Calendar"), "Airplane mode is in Settings, not Clock", REJECTED)
    line = why_line(p, "Turn on airplane mode", SCREEN)
    assert "Clock" not in line
    assert line == "The model chose 'Calendar' from the entries on this screen, without a reason about it."


def test_the_demonstration_note_handed_back_is_not_the_why():
    note = correction_note(DecisionKind.DEMONSTRATE, tap("5", "Calendar"), tap("6", "Settings"))
    p = proposal(tap("6", "Settings"), note.replace('"', "'"), note)
    assert "learn from this correction" not in why_line(p, "Turn on airplane mode", SCREEN)
    assert copies_prompt(note, [note])


def test_a_why_that_speaks_of_the_element_is_shown():
    p = proposal(tap("6", "Settings"), "Airplane mode is one of the settings", REJECTED, evidence=("element id [6]",))
    assert why_line(p, "Turn on airplane mode", SCREEN) == "Airplane mode is one of the settings"


def test_a_why_about_another_element_gives_way_to_the_grounding_sentence():
    p = proposal(tap("5", "Calendar"), "The clock app has an alarm tab",
                 evidence=("text match [5] 'Calendar' sim=0.41 next=0.30",))
    line = why_line(p, "Turn on airplane mode", SCREEN)
    assert line.startswith("'Calendar' is the entry on this screen whose words best match")


def test_the_task_read_back_is_a_copy_but_a_why_built_on_it_is_not():
    calls = [prompt().prompt]
    assert copies_prompt("Turn on airplane mode", calls)
    assert not copies_prompt("To turn on airplane mode open Settings first", calls)
    assert not copies_prompt("Settings", calls), "a name alone is never a copy"


def test_names_are_matched_by_their_words_and_stems():
    settings = Proposal(tap("6", "Settings"))
    assert names_target("the setting for flight mode lives there", settings, SCREEN)
    assert not names_target("it is the right place", settings, SCREEN)
    assert names_target("anything", Proposal(Action.simple(ActionType.BACK))), "no element: nothing to name"
    assert names_target("Settings has it", Proposal(Action.open_app("Settings")))


def test_a_reply_that_only_restates_its_action_is_no_why():
    p = proposal(tap("6", "Settings"), "tap [6] Settings", evidence=("no grounding needed",))
    assert why_line(p, "Turn on airplane mode", SCREEN) == \
        "The model chose 'Settings' from the entries on this screen, without a reason about it."


def test_a_thought_action_reply_gives_its_thought_as_the_why_and_only_when_it_explains():
    named = Proposal(tap("6", "Settings"), rationale="Thought: Airplane mode is one of the settings.\nAction: tap Settings")
    assert why_line(named, "Turn on airplane mode", SCREEN) == "Airplane mode is one of the settings."
    copied = Proposal(tap("5", "Calendar"), rationale="Thought: Airplane mode is in Settings, not Clock\nAction: tap Calendar",
                      evidence=("element id [5]",), llm_calls=(prompt(REJECTED),))
    assert why_line(copied, "Turn on airplane mode", SCREEN) == \
        "The model chose 'Calendar' from the entries on this screen, without a reason about it."


def test_evidence_in_words_that_names_the_element_is_the_grounding_sentence():
    p = proposal(tap("6", "Settings"), "The goal has been reached",
                 evidence=("reply: structured", "Screen evidence: the likeliest next step here is 'Settings' [6].",
                           "no grounding needed"))
    assert why_line(p, "Turn on airplane mode", SCREEN) == "The likeliest next step here is 'Settings'."
