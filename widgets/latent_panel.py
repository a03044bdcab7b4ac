"""The latent-state panel: the agent's five estimates for the current step, with the
ones that changed since the previous step highlighted, each row explained on hover.
While the next step's estimates are being made the shown ones are greyed
(``set_stale``); the confidence row shows only when there is a measure.  Display only;
no I/O.
"""

from __future__ import annotations

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
CHANGED_STYLE = "background:#fff3c4; border-left:4px solid #f9a825; padding:3px; color:#222;"
PLAIN_STYLE = "padding:3px; border-left:4px solid transparent;"


class LatentStatePanel(QWidget):
    """Five labelled values plus a confidence bar."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._state: LatentState | None = None
        self._changed: tuple[str, ...] = ()
        form = QFormLayout(self)
        # in a narrow column each value goes under its title and gets the whole width
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.values: dict[str, QLabel] = {}
        self.titles: dict[str, QLabel] = {}
        for aspect, title in TITLES.items():
            label = QLabel("—")
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
            label.setStyleSheet(CHANGED_STYLE if changed else PLAIN_STYLE)
            label.setToolTip(HELP[aspect] + ("\n(changed since the previous step)" if changed else ""))
        self._stale = False
        measured = state is not None and state.confidence is not None
        if measured:
            assert state is not None and state.confidence is not None
            self.confidence.setValue(round(state.confidence * 100))
        self.confidence.setVisible(measured)
        self._confidence_title.setVisible(measured)

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
