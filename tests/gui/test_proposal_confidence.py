"""The card's confidence row: shown with its measure's name where there is a measure, hidden
(not left empty) where there is none."""

from __future__ import annotations

from agent.explain import confidence_of
from agent.types import Action, ActionType, Proposal, Target
from widgets.proposal import ProposalCard


def _tap(words: str, **kw) -> Proposal:
    return Proposal(Action(ActionType.TAP, target=Target(description=words)), **kw)


def test_a_clear_grounding_winner_shows_a_high_confidence_named_grounding_margin(qtbot):
    card = ProposalCard()
    qtbot.addWidget(card)
    card.show()
    p = _tap("Network & internet", evidence=("text match [4] 'Network & internet' sim=1.0 next=0.35",))
    card.set_proposal(p, why="'Network & internet' leads to Wi-Fi.", confidence=confidence_of(p))
    assert card.confidence.isVisible()
    assert card.confidence.value() >= 90
    assert "grounding margin" in card.confidence.text() and "%" in card.confidence.text()
    assert "next entry" in card.confidence.toolTip()


def test_sample_agreement_is_shown_as_k_of_n(qtbot):
    card = ProposalCard()
    qtbot.addWidget(card)
    card.show()
    p = _tap("Display", confidence=0.6, evidence=("votes: tap Display ×3, tap Sound ×2",))
    card.set_proposal(p, confidence=confidence_of(p))
    assert card.confidence.isVisible() and "agreement 3/5" in card.confidence.text()
    assert card.confidence.value() == 60


def test_no_measure_hides_the_row(qtbot):
    card = ProposalCard()
    qtbot.addWidget(card)
    card.show()
    measured = _tap("Display", evidence=("text match [3] 'Display' sim=1.0 next=0.1",))
    card.set_proposal(measured, confidence=confidence_of(measured))
    assert card.confidence.isVisible()
    bare = _tap("Display", evidence=("element id [3]",))
    assert confidence_of(bare) is None
    card.set_proposal(bare, confidence=confidence_of(bare))
    assert card.confidence.isHidden()
