"""The latent-state panel: the agent's five estimates for the current step, with the
ones that changed since the previous step highlighted, each row explained on hover.
While the next step's estimates are being made the shown ones are greyed
(``set_stale``); the confidence row shows only when there is a measure.  It always says
something: when the run makes no estimates, a line says why above greyed rows
(``set_note``), with one link ("turn on") the caller acts on (``linkActivated``); before
the first estimate, that they will appear here.
Display only; no I/O.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFormLayout, QLabel, QProgressBar, QWidget

from agent.types import LatentState

TITLES = {
    "performed_action": "Performed action",
    "screen_summary": "Screen summary",
    "progression": "Progress",
    "mistakes": "Mistakes",
    "completion": "Completion",
}
#: What each row means, on hover.
HELP = {
    "performed_action": "What the agent thinks the last action really did on the phone (it can differ from "
                        "what was commanded: a missed tap, a dialog in the way).",
    "screen_summary": "What the agent thinks the current screen is, in a few words.",
    "progression": "How far the task has got: the steps done so far that count toward the goal.",
    "mistakes": "Anything the agent thinks went wrong so far and needs undoing.",
    "completion": "Whether the agent thinks the goal is reached, and why.",
    "confidence": "How sure the estimate is (the model's own score); hidden when there is no measure.",
}
STALE_STYLE = "padding:3px; border-left:4px solid transparent; color:#9e9e9e;"
NOTE_STYLE = "color:#555; padding:2px 3px;"
#: What the panel says before the first estimate of a run (when no note says more).
WAITING = "The agent's estimates appear here at each step of a run"
CHANGED_STYLE = "background:#fff3c4; border-left:4px solid #f9a825; padding:3px; color:#222;"
PLAIN_STYLE = "padding:3px; border-left:4px solid transparent;"


class LatentStatePanel(QWidget):
    """Five labelled values plus a confidence bar, under a line saying why they are off."""

    linkActivated = Signal(str)  # the note's link: what it offers ("turn on", "turn off")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._state: LatentState | None = None
        self._changed: tuple[str, ...] = ()
        self._off = False
        self._note = ""  # the caller's note, as rich text ("" for none)
        form = QFormLayout(self)
        # in a narrow column each value goes under its title and gets the whole width
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.note = QLabel("")
        self.note.setObjectName("latentNote")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.RichText)
        self.note.setStyleSheet(NOTE_STYLE)
        self.note.linkActivated.connect(self.linkActivated.emit)
        self.note.hide()
        form.addRow(self.note)
        self.values: dict[str, QLabel] = {}
        self.titles: dict[str, QLabel] = {}
        for aspect, title in TITLES.items():
            label = QLabel("—")
            label.setTextFormat(Qt.TextFormat.PlainText)  # the model's words, never markup
            label.setWordWrap(True)
            label.setStyleSheet(PLAIN_STYLE)
            label.setObjectName(f"latent_{aspect}")
            head = QLabel(f"<b>{title}</b>")
            head.setToolTip(HELP[aspect])
            self.values[aspect] = label
            self.titles[aspect] = head
            form.addRow(head, label)
        self.confidence = QProgressBar()
        self.confidence.setRange(0, 100)
        self.confidence.setFormat("confidence %p%")
        self.confidence.setToolTip(HELP["confidence"])
        self._confidence_title = QLabel("<b>Confidence</b>")
        self._confidence_title.setToolTip(HELP["confidence"])
        form.addRow(self._confidence_title, self.confidence)
        self._stale = False
        self.set_state(None)

    def set_state(self, state: LatentState | None, previous: LatentState | None = None) -> None:
        self._state = state
        self._changed = state.changed_aspects(previous) if state is not None else ()
        for aspect, label in self.values.items():
            label.setText(self._text(state, aspect))
            changed = aspect in self._changed
            label.setStyleSheet(CHANGED_STYLE if changed else STALE_STYLE if self._off and state is None
                                else PLAIN_STYLE)
            label.setToolTip(HELP[aspect] + ("\n(changed since the previous step)" if changed else ""))
        self._stale = False
        if hasattr(self, "note"):
            self._show_note()
        measured = state is not None and state.confidence is not None
        if measured:
            assert state is not None and state.confidence is not None
            self.confidence.setValue(round(state.confidence * 100))
        self.confidence.setVisible(measured)
        self._confidence_title.setVisible(measured)

    def set_note(self, text: str, link: str = "", *, off: bool = False) -> None:
        """A line above the rows ("" hides it): ``text``, then ``link`` as one click; with
        ``off`` the rows are greyed (this run makes no estimates)."""
        body = _esc(text)
        if text and link:
            body += f' — <a href="{_esc(link)}">{_esc(link)}</a>'
        self._note = body
        self._off = off
        self._show_note()
        if off:
            for label in self.values.values():
                label.setText("—")
                label.setStyleSheet(STALE_STYLE)

    def _show_note(self) -> None:
        """The caller's note, else, before the first estimate, what will appear here."""
        body = self._note or (_esc(WAITING) if self._state is None else "")
        self.note.setText(body)
        self.note.setVisible(bool(body))

    @property
    def note_text(self) -> str:
        """The note as plain words ("" when hidden)."""
        return self.note.text() and _plain(self.note.text())

    @property
    def off(self) -> bool:
        return self._off

    def set_stale(self, stale: bool = True) -> None:
        """Grey the shown estimates: they belong to the previous step while new ones are made."""
        self._stale = stale
        for aspect, label in self.values.items():
            label.setStyleSheet(STALE_STYLE if stale else (CHANGED_STYLE if aspect in self._changed else PLAIN_STYLE))

    @property
    def stale(self) -> bool:
        return self._stale

    @staticmethod
    def _text(state: LatentState | None, aspect: str) -> str:
        if state is None:
            return "—"
        if aspect == "completion":
            verdict = {True: "✔ complete", False: "not yet", None: "unknown"}[state.completion]
            return f"{verdict} — {state.completion_reason}" if state.completion_reason else verdict
        return getattr(state, aspect) or "—"

    @property
    def changed(self) -> tuple[str, ...]:
        return self._changed

    def text_of(self, aspect: str) -> str:
        return self.values[aspect].text()


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _plain(html: str) -> str:
    import re

    text = re.sub(r"<[^>]+>", "", html)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
