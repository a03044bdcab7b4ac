"""Specifications for the parse inspector, latent-state panel, proposal card and decision bar."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from agent.types import Action, DecisionKind
from widgets.latent_panel import LatentStatePanel
from widgets.parse_inspector import ParseInspector, estimate_tokens
from widgets.proposal import DecisionBar, ProposalCard

from .samples import sample_latent, sample_parse, sample_proposal


@pytest.fixture
def inspector(qtbot):
    w = ParseInspector()
    qtbot.addWidget(w)
    w.set_parse(sample_parse())
    return w


def test_inspector_lists_every_element_under_its_block(inspector):
    assert sorted(inspector.visible_element_ids()) == sorted(e.id for e in sample_parse().elements)
    assert "7 elements" in inspector.summary.text() and "2 blocks" in inspector.summary.text()


def test_inspector_filter_keeps_only_matching_elements(inspector):
    inspector.filter_edit.setText("bluetooth")
    assert inspector.visible_element_ids() == ["e3"]
    inspector.filter_edit.setText("switch")
    assert inspector.visible_element_ids() == ["e2"]
    inspector.filter_edit.setText("")
    assert len(inspector.visible_element_ids()) == 7


def test_inspector_shows_timings_with_a_total_and_the_description_with_tokens(inspector):
    t = inspector.timings
    stages = [t.item(r, 0).text() for r in range(t.rowCount())]
    assert stages == ["detect", "ocr", "blocks", "total"]
    assert float(t.item(3, 1).text()) == pytest.approx(41.5 + 310.2 + 3.1, abs=0.1)
    desc = sample_parse().description
    assert inspector.description.toPlainText() == desc
    assert f"≈ {estimate_tokens(desc)} tokens" in inspector.token_label.text()


def test_token_estimate_is_about_four_characters_per_token():
    assert estimate_tokens("") == 0
    assert estimate_tokens("x" * 400) == 100


def test_clicking_a_row_emits_the_element_and_external_selection_does_not(inspector, qtbot):
    with qtbot.assertNotEmitted(inspector.elementSelected):
        inspector.select_element("e2")
    assert inspector.selected_id() == "e2"
    idx = inspector._find("e3")
    with qtbot.waitSignal(inspector.elementSelected) as sig:
        inspector.tree.setCurrentIndex(idx)
    assert sig.args == ["e3"]


def test_a_new_parse_keeps_the_selection_when_the_element_still_exists(inspector):
    inspector.select_element("e2")
    inspector.set_parse(sample_parse())
    assert inspector.selected_id() == "e2"


def test_latent_panel_highlights_only_the_aspects_that_changed(qtbot):
    panel = LatentStatePanel()
    qtbot.addWidget(panel)
    before = sample_latent()
    after = sample_latent(progression="2 of 3 subgoals done", completion=True, completion_reason="Wi-Fi is off")
    panel.set_state(after, before)
    assert set(panel.changed) == {"progression", "completion"}
    assert "#fff3c4" in panel.values["progression"].styleSheet()
    assert "#fff3c4" not in panel.values["screen_summary"].styleSheet()
    assert panel.text_of("completion").startswith("✔ complete")
    assert panel.confidence.value() == 80


def test_latent_panel_first_step_marks_all_filled_aspects_new(qtbot):
    panel = LatentStatePanel()
    qtbot.addWidget(panel)
    panel.set_state(sample_latent(), None)
    assert set(panel.changed) == {"performed_action", "screen_summary", "progression", "mistakes", "completion"}
    panel.set_state(None)
    assert panel.text_of("mistakes") == "—"


def test_proposal_card_shows_action_rationale_evidence_and_plan(qtbot):
    card = ProposalCard()
    qtbot.addWidget(card)
    from agent.explain import confidence_of

    proposal = sample_proposal()
    card.set_proposal(proposal, confidence=confidence_of(proposal))
    assert card.title.text() == "Tap Wi-Fi switch"
    assert "turns Wi-Fi off" in card.rationale.text()
    assert "Network settings" in card.evidence.text()
    assert "check it is off" in card.plan.text()
    assert card.confidence.value() == 72 and "model's score" in card.confidence.text()


@pytest.fixture
def bar(qtbot):
    b = DecisionBar()
    qtbot.addWidget(b)
    b.show()
    qtbot.waitExposed(b)
    b.set_enabled(True)
    return b


def test_approve_button_emits_an_approve_decision(bar, qtbot):
    with qtbot.waitSignal(bar.decided) as sig:
        qtbot.mouseClick(bar.buttons[DecisionKind.APPROVE], Qt.MouseButton.LeftButton)
    assert sig.args[0].kind is DecisionKind.APPROVE


def test_reject_without_feedback_asks_for_it_and_emits_nothing(bar, qtbot):
    with qtbot.assertNotEmitted(bar.decided):
        bar.trigger(DecisionKind.REJECT)
    assert bar.hint.isVisibleTo(bar)


def test_reject_with_feedback_carries_it_to_the_planner(bar, qtbot):
    bar.feedback.setText("that is the wrong switch")
    with qtbot.waitSignal(bar.decided) as sig:
        bar.trigger(DecisionKind.REJECT)
    assert sig.args[0].kind is DecisionKind.REJECT and sig.args[0].feedback == "that is the wrong switch"
    assert bar.feedback.text() == ""


def test_keyboard_shortcuts_decide(bar, qtbot):
    with qtbot.waitSignal(bar.decided) as sig:
        qtbot.keyClick(bar, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert sig.args[0].kind is DecisionKind.APPROVE
    with qtbot.waitSignal(bar.editRequested):
        qtbot.keyClick(bar, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    with qtbot.waitSignal(bar.demonstrateRequested):
        qtbot.keyClick(bar, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    with qtbot.waitSignal(bar.decided) as sig:
        qtbot.keyClick(bar, Qt.Key.Key_X, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert sig.args[0].kind is DecisionKind.ABORT


def test_a_disabled_bar_ignores_buttons_and_shortcuts(bar, qtbot):
    bar.set_enabled(False)
    with qtbot.assertNotEmitted(bar.decided):
        bar.trigger(DecisionKind.APPROVE)
        qtbot.keyClick(bar, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)


def test_proposal_card_without_confidence_hides_the_bar(qtbot):
    from agent.types import Proposal

    card = ProposalCard()
    qtbot.addWidget(card)
    card.set_proposal(Proposal(action=Action.simple("back")))
    assert card.title.text() == "Go back"
    assert not card.confidence.isVisibleTo(card)
