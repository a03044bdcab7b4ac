"""Every card shows its words as words: markup in what a model, a recording or a user wrote
is shown as typed, never obeyed, and the card's own emphasis is never shown as tags."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel, QPushButton

from agent.types import Action, LatentState, Proposal, Target
from widgets.latent_panel import LatentStatePanel
from widgets.notifications import Level, Notice, NoticeCard
from widgets.proposal import MACRO_ADVICE, ProposalCard

TAGGED = "<b>Wi-Fi</b> & <i>more</i><br>"


def shown(label: QLabel) -> str:
    """What a label puts on the screen, as text."""
    if label.textFormat() == Qt.TextFormat.PlainText:
        return label.text()
    doc = QTextDocument()
    doc.setHtml(label.text())
    return doc.toPlainText()


def tagged_proposal() -> Proposal:
    action = Action.tap(100, 200, target=Target(element_id="7", description=TAGGED))
    return Proposal(action, rationale=TAGGED, evidence=(f"text match [7] {TAGGED!r}",), plan=(TAGGED,),
                    planner=TAGGED)


def test_a_proposal_card_shows_model_words_as_typed(qtbot):
    card = ProposalCard()
    qtbot.addWidget(card)
    card.set_proposal(tagged_proposal(), why=TAGGED)
    card.set_screen(TAGGED, TAGGED)
    for label in (card.title, card.rationale, card.on_screen, card.evidence, card.plan, card.planner):
        assert "<b>Wi-Fi</b>" in shown(label), label.objectName()


def test_the_working_card_and_the_streamed_reply_show_tags_as_typed(qtbot):
    card = ProposalCard()
    qtbot.addWidget(card)
    card.set_working(TAGGED, 1, 2, 3.0)
    card.set_streamed(TAGGED)
    assert "<b>Wi-Fi</b>" in shown(card.rationale) and "<b>Wi-Fi</b>" in shown(card.stream)


def test_the_question_card_shows_the_agents_reason_as_typed(qtbot):
    card = ProposalCard()
    qtbot.addWidget(card)
    card.set_proposal(tagged_proposal())
    card.set_question("Is the task done?", TAGGED)
    assert shown(card.rationale) == TAGGED


def test_a_failed_step_and_a_macro_step_that_needs_you_render_their_advice(qtbot):
    card = ProposalCard()
    qtbot.addWidget(card)
    card.set_proposal(tagged_proposal(), why="plain")  # the previous card was plain text
    card.set_failed(f"no element matched {TAGGED}")
    text = shown(card.rationale)
    assert "<br>" not in text.replace(TAGGED, "") and "<b>Demonstrate</b>" not in text
    assert "Demonstrate it on the mirror" in text and TAGGED in text
    card.set_proposal(tagged_proposal(), why="plain")
    card.set_failed("the step's element was not found (it found the element)", title="Macro step 2 needs you",
                    advice=MACRO_ADVICE)
    text = shown(card.rationale)
    assert "<b>" not in text and "<br>" not in text
    assert text.startswith("the step's element was not found (it found the element)")
    assert "Demonstrate the step on the mirror" in text
    assert shown(card.title) == "Macro step 2 needs you"


def test_offered_alternatives_keep_their_ampersands(qtbot):
    card = ProposalCard()
    qtbot.addWidget(card)
    card.set_alternatives([("tap Network & internet", Action.tap(1, 2))])
    buttons = card.alternatives.findChildren(QPushButton)
    assert [b.text().replace("&&", "&") for b in buttons] == ["tap Network & internet"]


def test_latent_estimates_and_notices_show_tags_as_typed(qtbot):
    panel = LatentStatePanel()
    qtbot.addWidget(panel)
    panel.set_state(LatentState(screen_summary=TAGGED, performed_action=TAGGED))
    assert shown(panel.values["screen_summary"]) == TAGGED
    panel.set_note(f"Off for {TAGGED}", "turn on", off=True)
    assert TAGGED in shown(panel.note)
    card = NoticeCard(Notice(Level.WARNING, TAGGED, TAGGED))
    qtbot.addWidget(card)
    card.resize(600, 40)
    assert card.message.shown_text().startswith("<b>Wi-Fi</b>")
