"""The step timeline: one row per step (thumbnail, action, outcome); selecting a row
shows that step's decision, latent state, prompts and raw LLM replies.

Takes ``Step`` objects and optional RGB thumbnails; emits ``stepSelected(index)`` so the
window can show that step's screen and parse on the mirror.  No I/O.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from agent.types import Step, StepOutcome
from widgets.frames import thumbnail_pixmap
from widgets.icons import icon

OUTCOME_ICONS = {
    StepOutcome.EXECUTED: ("mdi6.check-circle", "#2e7d32"),
    StepOutcome.REJECTED: ("mdi6.close-circle", "#c62828"),
    StepOutcome.ABORTED: ("mdi6.stop-circle", "#424242"),
    StepOutcome.FINISHED: ("mdi6.flag-checkered", "#1565c0"),
    StepOutcome.ERROR: ("mdi6.alert-circle", "#e65100"),
}
INDEX_ROLE = Qt.ItemDataRole.UserRole + 1


def step_summary(step: Step) -> str:
    """One line: the executed (or proposed) action and the outcome."""
    action = step.executed or (step.proposal.action if step.proposal else None)
    what = action.describe() if action else "(no action)"
    how = ""
    if step.decision is not None:
        how = f" [{step.decision.kind.value}]"
    return f"{step.index + 1}. {what}{how} — {step.outcome.value}"


class StepTimeline(QWidget):
    """A list of steps with a details pane for the selected one."""

    stepSelected = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._steps: dict[int, Step] = {}
        self.list = QListWidget()
        self.list.setIconSize(QSize(44, 96))
        self.list.setSpacing(2)
        self.details = QTextBrowser()
        self.prompts = QPlainTextEdit(readOnly=True)
        self.replies = QPlainTextEdit(readOnly=True)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.details, "Step")
        self.tabs.addTab(self.prompts, "Prompts")
        self.tabs.addTab(self.replies, "LLM replies")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.list)
        split.addWidget(self.tabs)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(split)
        self.list.currentItemChanged.connect(self._on_current)

    def clear(self) -> None:
        self._steps.clear()
        self.list.clear()
        self.details.clear()
        self.prompts.clear()
        self.replies.clear()

    def add_step(self, step: Step, thumbnail: np.ndarray | None = None) -> None:
        """Add ``step`` (or replace the row with the same index)."""
        self._steps[step.index] = step
        item = self._item(step.index)
        if item is None:
            item = QListWidgetItem()
            item.setData(INDEX_ROLE, step.index)
            self.list.addItem(item)
        item.setText(step_summary(step))
        name, color = OUTCOME_ICONS.get(step.outcome, ("mdi6.circle", "#888"))
        item.setIcon(icon(name, color) if thumbnail is None else _thumb_icon(thumbnail))
        item.setToolTip(step.error or step_summary(step))
        self.list.scrollToItem(item)
        if self.list.currentItem() is item:
            self._show(step)

    def _item(self, index: int) -> QListWidgetItem | None:
        for r in range(self.list.count()):
            it = self.list.item(r)
            if it.data(INDEX_ROLE) == index:
                return it
        return None

    def count(self) -> int:
        return self.list.count()

    def step(self, index: int) -> Step | None:
        return self._steps.get(index)

    def select_step(self, index: int) -> None:
        item = self._item(index)
        if item is not None:
            self.list.setCurrentItem(item)

    def _on_current(self, current: QListWidgetItem | None, previous: QListWidgetItem | None) -> None:
        if current is None:
            return
        index = int(current.data(INDEX_ROLE))
        step = self._steps.get(index)
        if step is not None:
            self._show(step)
            self.stepSelected.emit(index)

    def _show(self, step: Step) -> None:
        self.details.setHtml(step_html(step))
        calls = step.proposal.llm_calls if step.proposal else ()
        self.prompts.setPlainText(
            "\n\n".join(f"=== {c.purpose} · {c.model} · attempt {c.attempt} ===\n{c.prompt}" for c in calls)
            or "(no LLM calls recorded for this step)"
        )
        self.replies.setPlainText(
            "\n\n".join(
                f"=== {c.purpose} · {c.latency_ms:.0f} ms"
                + (f" · {c.prompt_tokens}+{c.completion_tokens} tokens" if c.prompt_tokens is not None else "")
                + (f" · ERROR {c.error}" if c.error else "")
                + f" ===\n{c.reply}"
                for c in calls
            )
            or "(no LLM replies recorded for this step)"
        )


def _thumb_icon(rgb: np.ndarray):
    from PySide6.QtGui import QIcon

    return QIcon(thumbnail_pixmap(rgb, 96))


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def step_html(step: Step) -> str:
    rows: list[tuple[str, str]] = []
    if step.proposal is not None:
        rows.append(("Proposed", step.proposal.action.describe()))
        if step.proposal.rationale:
            rows.append(("Rationale", step.proposal.rationale))
    if step.decision is not None:
        d = step.decision
        rows.append(("Decision", d.kind.value + (f" — “{d.feedback}”" if d.feedback else "")))
    if step.executed is not None:
        rows.append(("Executed", step.executed.describe()))
    rows.append(("Outcome", step.outcome.value))
    if step.error:
        rows.append(("Error", step.error))
    if step.foreground_package:
        rows.append(("App", step.foreground_package))
    latent = step.proposal.latent if step.proposal else None
    if latent is not None:
        for aspect in latent.ASPECTS:
            value = getattr(latent, aspect)
            if value not in ("", None):
                rows.append((aspect.replace("_", " "), str(value)))
    if step.parse is not None:
        rows.append(("Parse", f"{len(step.parse.elements)} elements, {step.parse.total_ms:.0f} ms"))
    body = "".join(f"<tr><td><b>{_esc(k)}</b></td><td>{_esc(v)}</td></tr>" for k, v in rows)
    return f"<h3>Step {step.index + 1}</h3><table cellspacing=4>{body}</table>"
