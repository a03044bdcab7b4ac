"""The step timeline: one row per step (thumbnail, action, outcome, what flashed on the
screen after it); selecting a row shows that step's decision, latent state, the texts that
flashed (toasts, snackbars, short dialogs), prompts and raw LLM replies.  A run recorded
on video gets a "play the video from this step" link (``playRequested``) and the player
sits on the Video tab (``widgets.video_player``).

Each row says where the step's proposal came from (memory, the recording, a heal, the
model, the screen's evidence, the app map) when the window gives ``origin_of``.  Steps are
grouped in sections, one per run or opened episode, each under a header row that says the
goal and how the run ended (and what it cost); a new run adds a section instead of clearing
the earlier ones.  Takes ``Step`` objects and optional RGB thumbnails; emits
``stepSelected(section, index)`` so the window can show that step's screen and parse on
the mirror.  No I/O.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QSize, Qt, QUrl, Signal
from PySide6.QtGui import QColor, QIcon
from PySide6.QtWidgets import (
    QListView,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from agent.types import DecisionKind, Step, StepOutcome
from widgets.frames import thumbnail_pixmap
from widgets.icons import icon
from widgets.proposal import planner_line
from widgets.video_player import VideoPlayer

OUTCOME_ICONS = {
    StepOutcome.EXECUTED: ("mdi6.check-circle", "#2e7d32"),
    StepOutcome.REJECTED: ("mdi6.close-circle", "#c62828"),
    StepOutcome.ABORTED: ("mdi6.stop-circle", "#424242"),
    StepOutcome.FINISHED: ("mdi6.flag-checkered", "#1565c0"),
    StepOutcome.ERROR: ("mdi6.alert-circle", "#e65100"),
}
INDEX_ROLE = Qt.ItemDataRole.UserRole + 1


#: How a step's origin (``agent.cost.ORIGINS``) is shown at the end of its row.
ORIGIN_WORDS = {"memory": "from memory", "recording": "from the recording", "heal": "healed by the model",
                "model": "by the model", "screen": "from the screen", "map": "from the app map"}


def step_summary(step: Step, origin: str = "") -> str:
    """One line: the executed (or proposed) action, the outcome and where it came from (a
    step the user showed or edited says so, beside where the proposal it replaced came from)."""
    action = step.executed or (step.proposal.action if step.proposal else None)
    what = action.describe() if action else "(no action)"
    how = ""
    if step.decision is not None:
        how = f" [{step.decision.kind.value}]"
    came = f" · {ORIGIN_WORDS[origin]}" if origin in ORIGIN_WORDS else ""
    if step.decision is not None and step.decision.kind in (DecisionKind.DEMONSTRATE, DecisionKind.EDIT) \
            and step.executed is not None:  # what ran was the user's, not what was proposed
        shown = "shown" if step.decision.kind is DecisionKind.DEMONSTRATE else "edited"
        came = f" · {shown} by you" + (f" (the proposal was {ORIGIN_WORDS[origin]})" if origin in ORIGIN_WORDS else "")
    flashed = "".join(f" · flashed “{t.text}”" for t in step.transients)
    return f"{step.index + 1}. {what}{how} — {step.outcome.value}{came}{flashed}"


class StepTimeline(QWidget):
    """A list of steps, in sections, with a details pane for the selected one."""

    stepSelected = Signal(str, int)  # section key, step index
    playRequested = Signal(str, int)  # section key, step index: play the run's video from that step

    def __init__(self, parent: QWidget | None = None, *, origin_of: Callable[[Step], str] | None = None) -> None:
        super().__init__(parent)
        self.origin_of = origin_of  # where a step's proposal came from (memory, recording, heal, model …)
        self._steps: dict[tuple[str, int], Step] = {}
        self._headers: dict[str, QListWidgetItem] = {}
        self._videos: dict[str, str] = {}  # section -> the stored run whose video it can play
        self._shown: tuple[str, int] | None = None
        self.section = ""  # where add_step puts steps
        self.list = QListWidget()
        self.list.setIconSize(QSize(44, 96))
        self.list.setSpacing(2)
        # long goals and actions wrap in a narrow column instead of scrolling it sideways
        self.list.setWordWrap(True)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        self.details.anchorClicked.connect(self._link)
        self.video = VideoPlayer()
        self.prompts = QPlainTextEdit(readOnly=True)
        self.replies = QPlainTextEdit(readOnly=True)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.details, "Step")
        self.tabs.addTab(self.prompts, "Prompts")
        self.tabs.addTab(self.replies, "LLM replies")
        self.tabs.addTab(self.video, "Video")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.list)
        split.addWidget(self.tabs)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(split)
        self.list.currentItemChanged.connect(self._on_current)

    def clear(self) -> None:
        self._steps.clear()
        self._headers.clear()
        self.section = ""
        self.list.clear()
        self._clear_details()

    def _clear_details(self) -> None:
        self.details.clear()
        self.prompts.clear()
        self.replies.clear()

    # ---- sections ------------------------------------------------------------------------
    def begin_section(self, key: str, title: str) -> None:
        """Start (or, for a known key, empty and reuse) the section ``key``; later steps go there."""
        if key in self._headers:
            self._drop_section(key)
        header = QListWidgetItem(title)
        header.setFlags(Qt.ItemFlag.ItemIsEnabled)
        f = header.font()
        f.setBold(True)
        header.setFont(f)
        header.setData(INDEX_ROLE, (key, -1))
        self.list.addItem(header)
        self._headers[key] = header
        self.section = key
        self.list.scrollToItem(header)

    def set_section_title(self, key: str, title: str) -> None:
        header = self._headers.get(key)
        if header is not None:
            header.setText(title)
            header.setToolTip(title)

    def section_title(self, key: str) -> str:
        header = self._headers.get(key)
        return header.text() if header is not None else ""

    def rename_section(self, old: str, new: str) -> None:
        """Re-key a section (a run learns its episode id when it finishes)."""
        if old == new or old not in self._headers:
            return
        if new in self._headers:
            self._drop_section(new)
        self._headers[new] = self._headers.pop(old)
        self._headers[new].setData(INDEX_ROLE, (new, -1))
        for (sec, idx) in [k for k in self._steps if k[0] == old]:
            self._steps[(new, idx)] = self._steps.pop((sec, idx))
            item = self._item(idx, old)
            if item is not None:
                item.setData(INDEX_ROLE, (new, idx))
        if self.section == old:
            self.section = new

    def _drop_section(self, key: str) -> None:
        for r in reversed(range(self.list.count())):
            it = self.list.item(r)
            if it.data(INDEX_ROLE)[0] == key:
                self.list.takeItem(r)
        self._headers.pop(key, None)
        self._steps = {k: v for k, v in self._steps.items() if k[0] != key}

    def sections(self) -> list[str]:
        return list(self._headers)

    # ---- steps ---------------------------------------------------------------------------
    def add_step(self, step: Step, thumbnail: np.ndarray | None = None, section: str | None = None) -> None:
        """Add ``step`` to ``section`` (default: the current one), or replace its row."""
        key = self.section if section is None else section
        self._steps[(key, step.index)] = step
        item = self._item(step.index, key)
        if item is None:
            item = QListWidgetItem()
            item.setData(INDEX_ROLE, (key, step.index))
            self.list.insertItem(self._insert_row(key, step.index), item)
        line = step_summary(step, self.origin_of(step) if self.origin_of is not None else "")
        item.setText(line)
        name, color = OUTCOME_ICONS.get(step.outcome, ("mdi6.circle", "#888"))
        item.setIcon(icon(name, color) if thumbnail is None else _thumb_icon(thumbnail))
        item.setToolTip(step.error or line)
        item.setForeground(QColor("#8a3b00") if step.transients else self.list.palette().text().color())
        self.list.scrollToItem(item)
        if self.list.currentItem() is item:
            self._show(step, key)

    def _insert_row(self, key: str, index: int) -> int:
        """After the section's last step with a smaller index (steps stay in order)."""
        row = -1
        for r in range(self.list.count()):
            sec, idx = self.list.item(r).data(INDEX_ROLE)
            if sec == key and idx < index:
                row = r
        if row < 0:
            header = self._headers.get(key)
            return self.list.row(header) + 1 if header is not None else self.list.count()
        return row + 1

    def _item(self, index: int, section: str | None = None) -> QListWidgetItem | None:
        key = self.section if section is None else section
        for r in range(self.list.count()):
            it = self.list.item(r)
            if tuple(it.data(INDEX_ROLE)) == (key, index):
                return it
        return None

    def count(self, section: str | None = None) -> int:
        """How many steps the section (default: the current one) holds."""
        key = self.section if section is None else section
        return sum(1 for k in self._steps if k[0] == key)

    def step(self, index: int, section: str | None = None) -> Step | None:
        return self._steps.get((self.section if section is None else section, index))

    def select_step(self, index: int, section: str | None = None) -> None:
        item = self._item(index, section)
        if item is not None:
            self.list.setCurrentItem(item)

    def _on_current(self, current: QListWidgetItem | None, previous: QListWidgetItem | None) -> None:
        if current is None:
            return
        key, index = current.data(INDEX_ROLE)
        step = self._steps.get((key, index))
        if step is not None:
            self._show(step, key)
            self.stepSelected.emit(key, index)

    def set_video(self, section: str, episode_id: str | None) -> None:
        """``section``'s run was recorded on video as stored run ``episode_id`` (its steps
        then link to it); None: no video."""
        if episode_id:
            self._videos[section] = episode_id
        else:
            self._videos.pop(section, None)
        if self._shown is not None and self._shown[0] == section:
            shown = self._steps.get(self._shown)
            if shown is not None:
                self._show(shown, section)

    def video_episode(self, section: str) -> str | None:
        """The stored run whose video ``section`` plays, or None."""
        return self._videos.get(section)

    def _link(self, url: QUrl) -> None:
        if url.scheme() == "play" and self._shown is not None:
            self.tabs.setCurrentWidget(self.video)
            self.playRequested.emit(*self._shown)

    def _show(self, step: Step, section: str = "") -> None:
        self._shown = (section, step.index)
        link = ('<p><a href="play:step">▶ Play the run\'s video from this step</a></p>'
                if section in self._videos else "")
        self.details.setHtml(step_html(step) + link)
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


def _thumb_icon(rgb: np.ndarray) -> QIcon:
    return QIcon(thumbnail_pixmap(rgb, 96))


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _mark(key: str) -> str:
    """What flashed on the screen stands out (an orange band, like the video's marks)."""
    return ' style="background:#fff4e5;color:#8a3b00"' if key == "Flashed" else ""


def step_html(step: Step) -> str:
    rows: list[tuple[str, str]] = []
    if step.proposal is not None:
        rows.append(("Proposed", step.proposal.action.describe()))
        if step.proposal.rationale:
            rows.append(("Rationale", step.proposal.rationale))
        if step.proposal.planner:
            rows.append(("Planner", planner_line(step.proposal).removeprefix("planner: ")))
        for line in step.proposal.evidence:
            if line != step.proposal.rationale:
                rows.append(("Evidence", line))
    if step.decision is not None:
        d = step.decision
        rows.append(("Decision", d.kind.value + (f" — “{d.feedback}”" if d.feedback else "")))
    if step.executed is not None:
        rows.append(("Executed", step.executed.describe()))
    rows.append(("Outcome", step.outcome.value))
    if step.error:
        rows.append(("Error", step.error))
    for t in step.transients:
        rows.append(("Flashed", f"“{t.text}” — on the screen for {t.seconds:.1f} s after the action"))
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
    if step.timings_ms:
        rows.append(("Timings", " · ".join(f"{name} {ms:.0f} ms" for name, ms in step.timings_ms)))
    body = "".join(f"<tr><td><b>{_esc(k)}</b></td><td{_mark(k)}>{_esc(v)}</td></tr>" for k, v in rows)
    return f"<h3>Step {step.index + 1}</h3><table cellspacing=4>{body}</table>"
