"""The proposal card (what the agent wants to do and why) and the decision bar
(Approve / Edit / Reject with feedback / Demonstrate / Abort, each with a shortcut).

The confidence row shows only where there is a measure of it, named ("confidence 92 % ·
grounding margin"); the caller says which (``agent.explain.confidence_of``), and without
one the row is hidden, never left empty.  While the model works the card says so: the stage, which model call of the step, the
seconds so far and the reply as it streams in.  After repeated rejections it offers
other candidates, each one click (``alternativePicked``).  When the question is "Is the
task done?" the bar's Approve and Reject answer yes and no.  The planner line says when no
model chose the step (``Proposal.source``: the app map, the screen's evidence).

Every line shows text as text: what comes from a model, a recording or the user (an
action's words, a reason, a streamed reply) is never read as markup; the card's own
emphasis (the failed step's advice) is the only rich text, with the inserted reason
escaped.

The card says which model proposed the step, and when the step went to the bigger model,
why.  With a bigger model configured the bar offers "Ask the bigger model" (the same
step proposed again by it).

The bar emits finished ``Decision`` objects for approve, reject, abort and "ask the
bigger model", and intent
signals for edit and demonstrate (the window opens the action editor or switches the
mirror to demonstration).  No I/O.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from agent.memory.types import HEALED, MEMORY
from agent.types import Action, Decision, DecisionKind, Proposal
from widgets.icons import icon
from widgets.shortcuts import key_for

SHORTCUTS = {
    DecisionKind.APPROVE: key_for("Approve the proposal"),
    DecisionKind.EDIT: key_for("Edit the proposed action"),
    DecisionKind.REJECT: key_for("Reject (type the reason first)"),
    DecisionKind.DEMONSTRATE: key_for("Demonstrate the step on the mirror"),
    DecisionKind.ABORT: key_for("Abort at this step"),
    DecisionKind.ESCALATE: key_for("Ask the bigger model for this step"),
}


REJECT_PLACEHOLDER = "Why reject? The planner reads this (required to reject)"
#: What the user can do about a step the agent could not produce (rich text: the card's own words).
FAILED_ADVICE = ("<b>Demonstrate</b> it on the mirror or <b>Edit</b> the action to perform it yourself; "
                 "<b>Reject</b> lets the agent try again; <b>Abort</b> stops the task.")
#: The same for a macro step that could not be found again.
MACRO_ADVICE = ("<b>Demonstrate</b> the step on the mirror (it replaces the recorded one in the next version); "
                "<b>Reject</b> skips it; <b>Abort</b> stops the replay.")


class Confidence(Protocol):
    """A confidence to show: value 0..1, the measure's name, where the figure comes from."""

    @property
    def value(self) -> float: ...

    @property
    def measure(self) -> str: ...

    @property
    def detail(self) -> str: ...


#: A step no model chose, in the card's words (``Proposal.source``).
SOURCE_WORDS = {"map": "from the app map, no model call", "screen": "from the screen's evidence, no model call"}


def planner_line(proposal: Proposal) -> str:
    """"planner: zeroshot-+map · from the app map, no model call" ("" without a planner)."""
    if not proposal.planner:
        return ""
    source = SOURCE_WORDS.get(proposal.source, "")
    return f"planner: {proposal.planner}" + (f" · {source}" if source else "")


class ProposalCard(QFrame):
    """The proposed action in words, its reason, confidence, evidence and future plan."""

    alternativePicked = Signal(object)  # Action: one of the offered candidates

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("proposalCard")
        self.title = QLabel("No proposal")
        f = self.title.font()
        f.setPointSizeF(f.pointSizeF() * 1.35)
        f.setBold(True)
        self.title.setFont(f)
        self.title.setWordWrap(True)
        self.source = QLabel("")  # where a proposal with no model behind it came from (memory, a heal)
        self.source.setObjectName("proposalSource")
        self.source.setWordWrap(True)
        self.source.hide()
        self.sensitive = QLabel("⚠ sensitive action: check carefully")
        self.sensitive.setStyleSheet("color:#b00020; font-weight:bold")
        self.sensitive.hide()
        self.screen_changed = QLabel("⚠ The phone's screen has changed since this step was planned: "
                                     "check the mirror before approving")
        self.screen_changed.setWordWrap(True)
        self.screen_changed.setStyleSheet("color:#b26a00; font-weight:bold")
        self.screen_changed.hide()
        self.rationale = QLabel("")
        self.rationale.setWordWrap(True)
        self.rationale.setObjectName("proposalWhy")
        self.working = QProgressBar()  # busy while the model works
        self.working.setRange(0, 0)
        self.working.setTextVisible(False)
        self.working.setMaximumHeight(8)
        self.working.hide()
        self.stream = QLabel("")
        self.stream.setWordWrap(True)
        self.stream.setObjectName("proposalStream")
        self.stream.setStyleSheet("color:#555; font-family:monospace; background:#f4f4f4; padding:4px;")
        self.stream.hide()
        self.alternatives = QWidget()
        self._alt_layout = QHBoxLayout(self.alternatives)
        self._alt_layout.setContentsMargins(0, 0, 0, 0)
        self.alternatives.hide()
        self.confidence = QProgressBar()
        self.confidence.setRange(0, 100)
        self.confidence.setFormat("confidence %p%")
        self.evidence = QLabel("")
        self.evidence.setWordWrap(True)
        self.evidence.setTextFormat(Qt.TextFormat.RichText)
        self.plan = QLabel("")
        self.plan.setWordWrap(True)
        self.plan.setTextFormat(Qt.TextFormat.RichText)
        self.planner = QLabel("")
        self.planner.setStyleSheet("color:#666")
        self.planner.setWordWrap(True)  # "planner: … · from the app map, no model call" must not widen the panel
        self.model = QLabel("")  # which model proposed the step; the bigger one stands out
        self.model.setObjectName("proposalModel")
        self.model.setWordWrap(True)
        self.model.setTextFormat(Qt.TextFormat.RichText)
        self.model.hide()
        self.on_screen = QLabel("")  # what the parse says the screen is, beside the model's view of it
        self.on_screen.setObjectName("proposalScreen")
        self.on_screen.setWordWrap(True)
        self.on_screen.setStyleSheet("color:#555")
        self.on_screen.hide()
        for label in (self.title, self.source, self.sensitive, self.screen_changed, self.rationale, self.stream,
                      self.planner, self.on_screen):
            label.setTextFormat(Qt.TextFormat.PlainText)  # words from models, recordings and users are not markup
        lay = QVBoxLayout(self)
        for w in (self.title, self.source, self.model, self.sensitive, self.screen_changed, self.working, self.rationale,
                  self.stream,
                  self.alternatives, self.confidence, self.on_screen, self.evidence, self.plan, self.planner):
            lay.addWidget(w)
        lay.addStretch(1)
        self._proposal: Proposal | None = None
        self.set_proposal(None)

    def set_proposal(self, proposal: Proposal | None, why: str = "", confidence: Confidence | None = None) -> None:
        """Show ``proposal`` with ``why`` as its reason line and ``confidence`` with its
        measure's name (the caller words and measures them; no confidence: no row)."""
        self._proposal = proposal
        self.screen_changed.hide()
        self.set_screen("")
        self.working.hide()
        self.stream.hide()
        self.set_alternatives(())
        self.model.hide()
        if proposal is None:
            self.source.hide()
            self.title.setText("No proposal")
            for w in (self.rationale, self.evidence, self.plan, self.planner):
                w.setText("")
            self.confidence.hide()
            self.sensitive.hide()
            return
        self.title.setText(_capitalise(proposal.action.describe()))
        self._show_source(proposal)
        self._show_model(proposal)
        self.rationale.setTextFormat(Qt.TextFormat.PlainText)
        self.rationale.setText(f"Why: {why}" if why else (proposal.rationale or "no reason given"))
        self.sensitive.setVisible(proposal.sensitive)
        self._show_confidence(confidence)
        self.evidence.setText(
            "<b>Grounding evidence</b><ul>" + "".join(f"<li>{_esc(e)}</li>" for e in proposal.evidence) + "</ul>"
            if proposal.evidence else ""
        )
        self.plan.setText(
            "<b>Future plan</b><ol>" + "".join(f"<li>{_esc(s)}</li>" for s in proposal.plan) + "</ol>"
            if proposal.plan else ""
        )
        self.planner.setText(planner_line(proposal))

    def _show_source(self, proposal: Proposal) -> None:
        """A remembered step says whose decision it repeats and when; a healed macro step says
        that the model found its element and that approving keeps it in the macro."""
        text, style = source_line(proposal)
        self.source.setText(text)
        self.source.setStyleSheet(style)
        self.source.setVisible(bool(text))

    def _show_model(self, proposal: Proposal) -> None:
        models = list(dict.fromkeys(c.model for c in proposal.llm_calls if c.model))
        model = proposal.model or (models[-1] if models else "")
        if proposal.escalated:
            self.model.setText(f"⬆ Proposed by the bigger model <b>{_esc(model)}</b> — {_esc(proposal.escalated)}")
            self.model.setStyleSheet("color:#4a148c; background:#f3e5f5; padding:4px; border-radius:4px")
        elif model:
            self.model.setText(f"Proposed by <b>{_esc(model)}</b>")
            self.model.setStyleSheet("color:#555")
        self.model.setToolTip("Model calls of this step: " + ", ".join(models) if models else "")
        self.model.setVisible(bool(model))

    def set_screen(self, gist: str, detail: str = "") -> None:
        """The screen the proposal is for, as its parse describes it ("" hides the line);
        ``detail`` (its entries, say) is the line's tooltip."""
        self.on_screen.setText(f"On screen: {gist}" if gist else "")
        self.on_screen.setToolTip(detail or "What the screen's parse says is in front: the app and the page")
        self.on_screen.setVisible(bool(gist))

    def _show_confidence(self, confidence: Confidence | None) -> None:
        if confidence is None:
            self.confidence.hide()
            return
        self.confidence.setValue(round(max(0.0, min(1.0, confidence.value)) * 100))
        self.confidence.setFormat(f"confidence %p% · {confidence.measure}")
        self.confidence.setToolTip(confidence.detail or confidence.measure)
        self.confidence.show()

    @property
    def proposal(self) -> Proposal | None:
        return self._proposal

    def set_working(self, stage: str, call: int = 0, calls: int = 0, seconds: float = 0.0) -> None:
        """The model is working on the next proposal: say on what, which call, how long."""
        self._proposal = None
        self.set_alternatives(())
        for w in (self.evidence, self.plan, self.planner):
            w.setText("")
        self.confidence.hide()
        self.sensitive.hide()
        self.screen_changed.hide()
        self.set_screen("")
        self.model.hide()
        self.title.setText("The agent is thinking…")
        where = f" — call {call} of {calls}" if call and calls else ""
        self.rationale.setTextFormat(Qt.TextFormat.PlainText)
        self.rationale.setText(f"{_capitalise(stage)}{where}, {seconds:.0f} s")
        self.working.show()

    def set_streamed(self, text: str) -> None:
        """The model's reply so far (its last few lines)."""
        tail = text[-400:]
        self.stream.setText(tail)
        self.stream.setVisible(bool(tail.strip()) and self.working.isVisible())

    def set_alternatives(self, choices: tuple[tuple[str, Action], ...] | list[tuple[str, Action]]) -> None:
        """Candidates to pick in one click instead of the proposal (words, action)."""
        while self._alt_layout.count():
            item = self._alt_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        if not choices:
            self.alternatives.hide()
            return
        self._alt_layout.addWidget(QLabel("Or pick:"))
        for words, action in choices:
            b = QPushButton(words.replace("&", "&&"))  # "&" would underline the next letter
            b.setObjectName("alternative")
            b.setToolTip(f"Do “{words}” instead (counts as an edit)")
            b.clicked.connect(lambda _=False, a=action: self.alternativePicked.emit(a))
            self._alt_layout.addWidget(b)
        self._alt_layout.addStretch(1)
        self.alternatives.show()

    def set_question(self, question: str, detail: str = "") -> None:
        """Ask the user something about the task itself ("Is the task done?")."""
        self.title.setText(question)
        self.rationale.setTextFormat(Qt.TextFormat.PlainText)
        self.rationale.setText(detail)
        self.working.hide()
        self.stream.hide()

    def set_failed(self, reason: str, title: str = "The agent could not do this step",
                   advice: str = FAILED_ADVICE) -> None:
        """A step the user must do: ``title``, why (``reason``, shown as text) and what the
        user can do (``advice``: the card's own rich text, ``FAILED_ADVICE`` or ``MACRO_ADVICE``)."""
        self.set_proposal(None)
        self.title.setText(title)
        self.rationale.setTextFormat(Qt.TextFormat.RichText)
        self.rationale.setText(f"{_esc(reason)}<br><br>{advice}")

    def set_screen_changed(self, changed: bool) -> None:
        """Warn that the live screen is no longer the frame the proposal was planned on."""
        self.screen_changed.setVisible(changed and self._proposal is not None)


class DecisionBar(QWidget):
    """Approve / Edit / Reject (with feedback) / Demonstrate / Abort."""

    decided = Signal(object)  # Decision (approve, reject, abort)
    editRequested = Signal()
    demonstrateRequested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.feedback = QLineEdit(placeholderText=REJECT_PLACEHOLDER)
        self.failed_step = False
        self.confirm = False
        self.hint = QLabel("")
        self.hint.setStyleSheet("color:#b00020")
        specs = [
            (DecisionKind.APPROVE, "Approve", "mdi6.check-bold", "#2e7d32"),
            (DecisionKind.EDIT, "Edit…", "mdi6.pencil", "#1565c0"),
            (DecisionKind.REJECT, "Reject", "mdi6.close-thick", "#c62828"),
            (DecisionKind.DEMONSTRATE, "Demonstrate", "mdi6.gesture-tap", "#6a1b9a"),
            (DecisionKind.ABORT, "Abort", "mdi6.stop-circle", "#424242"),
            (DecisionKind.ESCALATE, "Ask bigger model", "mdi6.arrow-up-bold-circle-outline", "#6a1b9a"),
        ]
        self.buttons: dict[DecisionKind, QPushButton] = {}
        # two rows of three, so the bar fits a narrow dock (1024 px wide windows)
        row = QGridLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        for n, (kind, text, icon_name, color) in enumerate(specs):
            b = QPushButton(icon(icon_name, color), text)
            b.setObjectName(f"decision_{kind.value}")
            b.setToolTip(f"{text.rstrip('…')} ({SHORTCUTS[kind]})")
            b.clicked.connect(lambda _=False, k=kind: self.trigger(k))
            row.addWidget(b, n // 3, n % 3)
            self.buttons[kind] = b
            sc = QShortcut(QKeySequence(SHORTCUTS[kind]), self)
            sc.setContext(Qt.ShortcutContext.WindowShortcut)
            sc.activated.connect(lambda k=kind: self.trigger(k))
        self.buttons[DecisionKind.APPROVE].setDefault(True)
        self.bigger_model = ""
        self.buttons[DecisionKind.ESCALATE].hide()
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.feedback)
        lay.addWidget(self.hint)
        lay.addLayout(row)
        self.hint.hide()
        self.feedback.returnPressed.connect(lambda: self.trigger(DecisionKind.REJECT))
        self.set_enabled(False)

    def set_enabled(self, enabled: bool) -> None:
        """Enable the bar while a proposal awaits a decision."""
        self._enabled = enabled
        self.failed_step = False
        if self.confirm:
            self.set_confirm(False)
        self.feedback.setPlaceholderText(REJECT_PLACEHOLDER)
        for b in self.buttons.values():
            b.setEnabled(enabled)
        self.feedback.setEnabled(enabled)
        if not enabled:
            self.hint.hide()

    def set_bigger_model(self, model: str) -> None:
        """Offer "Ask the bigger model" for ``model`` ("" hides it: no bigger model configured)."""
        self.bigger_model = model
        b = self.buttons[DecisionKind.ESCALATE]
        b.setToolTip(f"Ask {model} for this step instead ({SHORTCUTS[DecisionKind.ESCALATE]})" if model else "")
        b.setVisible(bool(model))

    def set_confirm(self, confirm: bool) -> None:
        """The question is "Is the task done?": Approve says yes, Reject says no (no reason needed)."""
        self.confirm = confirm
        self.buttons[DecisionKind.ESCALATE].setEnabled(self._enabled and not confirm)
        self.buttons[DecisionKind.APPROVE].setText("Yes, it is done" if confirm else "Approve")
        self.buttons[DecisionKind.REJECT].setText("Not done yet" if confirm else "Reject")
        self.feedback.setPlaceholderText("What is still missing? (optional)" if confirm else REJECT_PLACEHOLDER)

    def set_failed_step(self, failed: bool) -> None:
        """A failed step has nothing to approve: Reject retries, no reason needed."""
        self.failed_step = failed
        self.buttons[DecisionKind.APPROVE].setEnabled(self._enabled and not failed)
        self.buttons[DecisionKind.ESCALATE].setEnabled(self._enabled and not failed)
        self.feedback.setPlaceholderText("Reject lets the agent try this step again" if failed
                                         else REJECT_PLACEHOLDER)

    @property
    def enabled(self) -> bool:
        return self._enabled

    def trigger(self, kind: DecisionKind) -> None:
        if not self._enabled:
            return
        if kind is DecisionKind.APPROVE:
            if self.failed_step:
                return
            self.decided.emit(Decision(DecisionKind.APPROVE))
        elif kind is DecisionKind.ABORT:
            self.decided.emit(Decision(DecisionKind.ABORT, feedback=self.feedback.text().strip()))
        elif kind is DecisionKind.ESCALATE:
            if self.bigger_model and not self.failed_step and not self.confirm:
                self.decided.emit(Decision(DecisionKind.ESCALATE))
        elif kind is DecisionKind.REJECT:
            text = self.feedback.text().strip()
            if not text and self.failed_step:
                text = "try this step again"
            if not text and self.confirm:
                text = "not done yet"
            if not text:
                self.hint.setText("Type what is wrong first, then Reject (Enter in the box rejects).")
                self.hint.show()
                self.feedback.setFocus()
                return
            self.hint.hide()
            self.decided.emit(Decision(DecisionKind.REJECT, feedback=text))
            self.feedback.clear()
        elif kind is DecisionKind.EDIT:
            self.editRequested.emit()
        elif kind is DecisionKind.DEMONSTRATE:
            self.demonstrateRequested.emit()


_MEMORY_STYLE = "color:#1b5e20; background:#e8f5e9; padding:4px; font-weight:bold"
_HEAL_STYLE = "color:#8a4b00; background:#fff3e0; padding:4px; font-weight:bold"


def source_line(proposal: Proposal) -> tuple[str, str]:
    """The card's line on where a proposal came from, and its style ("" when the model or
    the screen's evidence proposed it: the planner line says so)."""
    if proposal.planner == MEMORY:
        said = next((e for e in proposal.evidence if e.startswith("memory: ")), "")
        when = said[len("memory: "):].split("; ")[0] if said else ""
        calls = "no model call" if not proposal.llm_calls else "one model call to match the task"
        return f"★ From memory: you {when} · {calls}" if when else f"★ From memory · {calls}", _MEMORY_STYLE
    healed = next((e for e in proposal.evidence if e.startswith(HEALED)), "")
    if healed:
        return (f"✚ Healed step — {healed[len(HEALED):]}. Approve runs it and keeps it in the macro's next "
                "version; Reject lets you show the step.", _HEAL_STYLE)
    return "", ""


def _capitalise(s: str) -> str:
    return s[:1].upper() + s[1:]


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
