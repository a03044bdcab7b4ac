"""The window's guards: the consent dialog shows exactly what would be sent and answers
once / for this task / no, the Secrets dialog keeps values without ever showing them,
the card names the model that proposed a step, and "Ask bigger model" is offered only
when a bigger model is configured."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QListWidget, QPlainTextEdit

from agent.privacy import ConsentAnswer, ConsentKind, ConsentQuestion, Redactor
from agent.types import Action, Decision, DecisionKind, LLMCall, Proposal
from app.gui.guards import DialogConsentGate, VaultController, on_gui
from app.vault import FileVault
from widgets.consent_dialog import ConsentDialog
from widgets.proposal import DecisionBar, ProposalCard

SECRET = "Tulip7Harbor"


def _send_question() -> ConsentQuestion:
    text, replaced = Redactor().redact("[3] text \"+1 555-0199\"\n[4] text \"Your verification code is 482913\"")
    return ConsentQuestion(ConsentKind.SEND, "gpt-x", "https://llm.example.net/v1", "Open my messages",
                           reason="the model server is not on this machine", sent=f"[user]\n{text}",
                           replaced=replaced, remote=True)


def test_the_consent_dialog_shows_exactly_the_redacted_request(qtbot) -> None:
    q = _send_question()
    dlg = ConsentDialog(q)
    qtbot.addWidget(dlg)
    shown = dlg.findChild(QPlainTextEdit, "consentSent").toPlainText()
    assert shown == q.sent and "<phone-1>" in shown and "555" not in shown
    words = " ".join(label.text() for label in dlg.findChildren(QLabel))
    assert "1 phone number, 1 digit run" in words and "llm.example.net" in words
    dlg.findChild(object, "consent_once").click()
    assert dlg.answer is ConsentAnswer.ONCE
    dlg2 = ConsentDialog(q)
    qtbot.addWidget(dlg2)
    dlg2.reject()  # closing it sends nothing
    assert dlg2.answer is ConsentAnswer.NO


def test_the_escalation_question_remembers_for_the_task(qtbot) -> None:
    q = ConsentQuestion(ConsentKind.ESCALATE, "qwen2.5-coder-0.5b", goal="Turn off Wi-Fi",
                        reason="you rejected 2 proposals on this screen")
    dlg = ConsentDialog(q)
    qtbot.addWidget(dlg)
    assert "qwen2.5-coder-0.5b" in dlg.windowTitle()
    dlg.findChild(object, "consent_task").click()
    assert dlg.answer is ConsentAnswer.TASK


def test_a_worker_waits_for_the_answer_given_on_the_gui_thread(qtbot) -> None:
    from app.gui.workers import GuiPoster

    poster = GuiPoster()
    gate = DialogConsentGate(poster, lambda: None)
    answers: list[ConsentAnswer] = []
    seen: list[bool] = []

    def click_when_shown() -> None:  # runs in the dialog's own event loop, as the user would
        if gate.dialog is not None and gate.dialog.isVisible():
            seen.append(True)
            gate.dialog.findChild(object, "consent_once").click()
        else:
            QTimer.singleShot(20, click_when_shown)

    QTimer.singleShot(20, click_when_shown)
    worker = threading.Thread(target=lambda: answers.append(gate.ask(_send_question())))
    worker.start()
    qtbot.waitUntil(lambda: bool(answers), timeout=10000)
    worker.join(5)
    assert seen == [True]
    assert answers == [ConsentAnswer.ONCE]
    assert on_gui(poster, lambda: 7, 0) == 7  # on the GUI thread itself: asked directly
    poster.close()


def test_stopping_the_run_while_the_question_is_open_answers_no_and_closes_it(qtbot) -> None:
    from app.gui.workers import GuiPoster

    poster = GuiPoster()
    stopped = threading.Event()
    gate = DialogConsentGate(poster, lambda: None, cancelled=stopped.is_set)
    answers: list[ConsentAnswer] = []

    def stop_when_shown() -> None:  # runs in the dialog's own event loop
        if gate.dialog is not None and gate.dialog.isVisible():
            stopped.set()  # the user stops the run instead of answering
        else:
            QTimer.singleShot(20, stop_when_shown)

    QTimer.singleShot(20, stop_when_shown)
    worker = threading.Thread(target=lambda: answers.append(gate.ask(_send_question())))
    worker.start()
    qtbot.waitUntil(lambda: bool(answers) and gate.dialog is None, timeout=10000)  # answered, and closed
    worker.join(5)
    assert stopped.is_set() and answers == [ConsentAnswer.NO]
    poster.close()


def test_a_worker_waiting_for_an_answer_stops_waiting_when_the_window_closes(qtbot) -> None:
    from app.gui.workers import GuiPoster

    poster = GuiPoster()
    answers: list[int] = []
    worker = threading.Thread(target=lambda: answers.append(on_gui(poster, lambda: 7, 0)))
    worker.start()
    time.sleep(0.3)  # the question is posted (the GUI thread is busy: it is not shown) ...
    poster.close()  # ... and the window closes
    worker.join(10)
    assert not worker.is_alive() and answers == [0]


def test_the_secrets_dialog_keeps_values_it_never_shows(qtbot, tmp_path) -> None:
    vault = FileVault(tmp_path)
    ctl = VaultController(lambda: None, open_vault=lambda: vault)
    dlg = ctl.show()
    qtbot.addWidget(dlg)
    boxes = dlg.boxes
    boxes.name.setText("library_password")
    boxes.value.setText(SECRET)
    boxes.again.setText(SECRET + "x")
    dlg.save.click()
    assert "differ" in dlg.problem.text() and vault.names() == []
    boxes.value.setText(SECRET)
    boxes.again.setText(SECRET)
    dlg.save.click()
    assert vault.names() == ["library_password"] and vault.value("library_password") == SECRET
    names = dlg.findChild(QListWidget, "vaultNames")
    assert [names.item(i).text() for i in range(names.count())] == ["library_password"]
    assert all(SECRET not in w.text() for w in dlg.findChildren(QLineEdit))  # the boxes were cleared
    assert all(SECRET not in w.text() for w in dlg.findChildren(QLabel))
    assert "encrypted file" in dlg.where.text()
    names.setCurrentRow(0)
    dlg.copy.click()
    assert QApplication.clipboard().text() == "{{secret:library_password}}"
    dlg.delete.click()
    assert vault.names() == []
    dlg.close()


def test_the_card_names_the_model_and_why_it_was_asked(qtbot) -> None:
    card = ProposalCard()
    qtbot.addWidget(card)
    call = LLMCall("plan", "smollm2-135m", "p")
    card.set_proposal(Proposal(Action.open_app("Clock"), llm_calls=(call,)))
    assert card.model.isVisibleTo(card) and "smollm2-135m" in card.model.text()
    big = Proposal(Action.open_app("Clock"), model="qwen2.5-coder-0.5b", escalated="you rejected 2 proposals",
                   llm_calls=(call, LLMCall("plan", "qwen2.5-coder-0.5b", "p")))
    card.set_proposal(big)
    assert "bigger model" in card.model.text() and "qwen2.5-coder-0.5b" in card.model.text()
    assert "you rejected 2 proposals" in card.model.text()
    card.set_working("planning")
    assert not card.model.isVisibleTo(card)


@pytest.mark.parametrize("bigger", ["", "qwen2.5-coder-0.5b"])
def test_ask_the_bigger_model_only_when_there_is_one(qtbot, bigger: str) -> None:
    bar = DecisionBar()
    qtbot.addWidget(bar)
    bar.set_bigger_model(bigger)
    bar.set_enabled(True)
    got: list[Decision] = []
    bar.decided.connect(got.append)
    button = bar.buttons[DecisionKind.ESCALATE]
    assert button.isVisibleTo(bar) == bool(bigger)
    bar.trigger(DecisionKind.ESCALATE)
    assert [d.kind for d in got] == ([DecisionKind.ESCALATE] if bigger else [])
    if bigger:
        assert bigger in button.toolTip()
        bar.set_failed_step(True)  # a failed step has no proposal to hand over
        assert not button.isEnabled()
