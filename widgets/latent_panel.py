"""The latent-state panel: the agent's five estimates for the current step, with the
ones that changed since the previous step highlighted.  Display only; no I/O.
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
        for aspect, title in TITLES.items():
            label = QLabel("—")
            label.setWordWrap(True)
            label.setStyleSheet(PLAIN_STYLE)
            label.setObjectName(f"latent_{aspect}")
            self.values[aspect] = label
            form.addRow(f"<b>{title}</b>", label)
        self.confidence = QProgressBar()
        self.confidence.setRange(0, 100)
        self.confidence.setFormat("confidence %p%")
        form.addRow("<b>Confidence</b>", self.confidence)
        self.set_state(None)

    def set_state(self, state: LatentState | None, previous: LatentState | None = None) -> None:
        self._state = state
        self._changed = state.changed_aspects(previous) if state is not None else ()
        for aspect, label in self.values.items():
            label.setText(self._text(state, aspect))
            changed = aspect in self._changed
            label.setStyleSheet(CHANGED_STYLE if changed else PLAIN_STYLE)
            label.setToolTip("changed since the previous step" if changed else "")
        if state is not None and state.confidence is not None:
            self.confidence.setValue(round(state.confidence * 100))
            self.confidence.setFormat("confidence %p%")
            self.confidence.setEnabled(True)
        else:
            self.confidence.setValue(0)
            self.confidence.setFormat("no confidence estimate")
            self.confidence.setEnabled(False)

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
