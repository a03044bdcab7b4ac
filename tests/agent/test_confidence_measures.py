"""The proposal card's confidence is a named measure or nothing (issue 26, item 4).

A tap whose target the grounder picked from a ranked list of entries gets the grounding
margin: the best match's similarity, scaled down when another entry comes close.  A model's
own score, the agreement of CoT-SC samples and a macro's match keep their own names.  A
proposal with no measure at all has no confidence (the card hides the row)."""

from __future__ import annotations

import pytest

from agent.commands import parse_command
from agent.explain import confidence_of
from agent.grounding.base import ElementGrounder, GroundContext
from agent.grounding.ladder import LadderGrounder
from agent.grounding.match import margin_confidence, runner_up
from agent.types import Action, ActionType, Proposal, Target
from tests.agent.screens import SIZE, el, settings_parse
from vision.types import ElementKind, ScreenParse


def tap(words: str) -> Action:
    return Action(ActionType.TAP, target=Target(description=words))


def test_the_margin_maps_a_clear_lead_to_high_and_a_tie_to_zero():
    assert margin_confidence(1.0, 0.3) == 1.0  # exact, and nothing else comes within 0.5
    assert margin_confidence(1.0, 0.8) == pytest.approx(0.4)
    assert margin_confidence(0.9, 0.9) == 0.0  # two equally good entries: no idea which
    assert margin_confidence(0.8, 0.0) == pytest.approx(0.8)  # never above the match itself
    assert all(0.0 <= margin_confidence(b / 10, r / 10) <= 1.0 for b in range(11) for r in range(11))


def test_a_row_and_its_own_label_are_one_entry_not_rivals():
    row = el("7", "Display", 450)
    label = el("8", "Display", 450, ElementKind.TEXT)  # the same box: the row's own title
    other = el("9", "Display size", 900)
    parse = ScreenParse(SIZE, (row, label, other))
    assert runner_up("Display", parse, row) == pytest.approx(round(2 * 7 / (7 + 12), 3))


def test_a_clear_text_match_gives_a_high_grounding_margin_named_so():
    parse = settings_parse()
    g = ElementGrounder().ground(parse_command("tap Display", SIZE), GroundContext("Turn on dark mode", parse))
    shown = confidence_of(Proposal(g.action, evidence=g.evidence))
    assert shown is not None and shown.measure == "grounding margin"
    assert shown.value >= 0.9 and "'Display'" in shown.detail


def test_the_ladders_text_level_carries_the_margin_too():
    g = LadderGrounder(client=None).ground(parse_command("tap Network & internet", SIZE),
                                           GroundContext("Turn off Wi-Fi", settings_parse()))
    shown = confidence_of(Proposal(g.action, evidence=g.evidence))
    assert shown is not None and shown.measure == "grounding margin" and shown.value >= 0.9


def test_two_entries_with_the_same_words_give_a_low_margin():
    parse = ScreenParse(SIZE, (el("1", "Delete", 300), el("2", "Delete", 900)))
    g = ElementGrounder().ground(parse_command("tap Delete", SIZE), GroundContext("g", parse))
    shown = confidence_of(Proposal(g.action, evidence=g.evidence))
    assert shown is not None and shown.value == 0.0


def test_a_target_named_by_id_has_no_measure_and_no_confidence():
    parse = settings_parse()
    action = Action(ActionType.TAP, target=Target(element_id="3"))
    g = ElementGrounder().ground(action, GroundContext("g", parse))
    assert confidence_of(Proposal(g.action, evidence=g.evidence)) is None
    assert confidence_of(Proposal(tap("Display"))) is None


def test_a_models_own_score_and_sample_agreement_keep_their_names():
    voted = Proposal(tap("Display"), confidence=0.6, evidence=("votes: tap Display ×3, tap Sound ×1",
                                                                "reply: unreadable sample (no JSON)"))
    shown = confidence_of(voted)
    assert shown is not None and (shown.measure, shown.value) == ("agreement 3/5", 0.6)
    assessed = Proposal(tap("Display"), confidence=0.7, evidence=("assessment: follow (it is the way)",))
    assert confidence_of(assessed).measure == "model's score"  # type: ignore[union-attr]
    # the model's score wins over the grounding margin when both exist
    both = Proposal(tap("Display"), confidence=0.4, evidence=("text match [3] 'Display' sim=1.0 next=0.2",))
    assert confidence_of(both).measure == "model's score"  # type: ignore[union-attr]
