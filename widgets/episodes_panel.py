"""The Episodes view: every stored run (goal, how it ended, steps, when), newest first,
with Open (onto the step timeline), Share (one HTML page), Export as JSON and as AITW.

Shows rows it is given and emits intents carrying episode ids; the window's episode
controller reads the database and writes the files.  No I/O.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from widgets.icons import button

ID_ROLE = Qt.ItemDataRole.UserRole + 1

STATUS_COLOURS = {"succeeded": "#2e7d32", "failed": "#c62828", "error": "#e65100", "aborted": "#424242",
                  "impossible": "#6a1b9a", "running": "#1565c0", "interrupted": "#ef6c00"}


def _when(ts: Any) -> str:
    if not ts:
        return ""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(float(ts)))


#: Below this width the list leaves out when each run started.
NARROW_PX = 320


class EpisodesPanel(QWidget):
    openRequested = Signal(str)  # episode id
    exportRequested = Signal(str, str)  # episode id, "json", "aitw" or "html"
    refreshRequested = Signal()
    #: A run stored elsewhere (a macro replay) and shown on the timeline under this section:
    #: its steps' stored frames can be looked at like an opened run's.
    runStored = Signal(str, object)  # timeline section, Episode

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(4)
        self.tree.setHeaderLabels(["Goal", "Ended", "Steps", "Started"])
        self.tree.setRootIsDecorated(False)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in (1, 2, 3):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        # no sideways scrolling in a narrow column: goals elided (whole on hover), and the
        # start time left out below ``NARROW_PX``
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.empty = QLabel("<i>No stored runs yet: Start a task and it appears here.</i>")
        self.empty.setWordWrap(True)
        self.open = button("mdi6.timeline-text", "Open",
                           "Show the run's steps, frames, prompts, replies and decisions on the Steps tab")
        self.export_json = button("mdi6.code-json", "JSON…", "Export the whole episode as Tapwise JSON")
        self.export_aitw = button("mdi6.export", "AITW…", "Export the executed actions as an AITW-style trajectory")
        self.export_html = button("mdi6.file-document-outline", "Share…",
                                  "Share the run as one HTML page to look at and share: every step with its "
                                  "frame, proposal, decision, latent state and timings; opens offline")
        self.refresh = button("mdi6.refresh", "", "Reload the list")
        row = QHBoxLayout()  # two short rows: the dock stays narrow beside the mirror (1024x700)
        for b in (self.open, self.export_html):
            row.addWidget(b)
        row.addStretch(1)
        row2 = QHBoxLayout()
        for b in (self.export_json, self.export_aitw):
            row2.addWidget(b)
        row2.addStretch(1)
        row3 = QHBoxLayout()
        row3.addStretch(1)
        row3.addWidget(self.refresh)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.tree, 1)
        lay.addWidget(self.empty)
        lay.addLayout(row)
        lay.addLayout(row2)
        lay.addLayout(row3)
        self.tree.itemDoubleClicked.connect(lambda *_: self._emit_open())
        self.tree.currentItemChanged.connect(lambda *_: self._update())
        self.open.clicked.connect(self._emit_open)
        self.export_json.clicked.connect(lambda: self._emit_export("json"))
        self.export_aitw.clicked.connect(lambda: self._emit_export("aitw"))
        self.export_html.clicked.connect(lambda: self._emit_export("html"))
        self.refresh.clicked.connect(self.refreshRequested.emit)
        self._rows: list[dict[str, Any]] = []
        self._update()

    def resizeEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        super().resizeEvent(event)
        self.tree.setColumnHidden(3, self.width() < NARROW_PX)

    def request_refresh(self) -> None:
        """Ask for a fresh list (the episode controller answers with ``set_episodes``)."""
        self.refreshRequested.emit()

    def set_episodes(self, rows: list[dict[str, Any]]) -> None:
        current = self.current_id()
        self._rows = list(rows)
        self.tree.clear()
        for r in rows:
            status = str(r.get("status", ""))
            item = QTreeWidgetItem([str(r.get("goal", "")), status, str(r.get("steps", 0)), _when(r.get("started_at"))])
            item.setData(0, ID_ROLE, r["id"])
            item.setForeground(1, _brush(STATUS_COLOURS.get(status, "#000")))
            if status == "interrupted" and r.get("finished_at"):  # stopped mid-run: when its last step was
                item.setText(1, f"interrupted · last step {_when(r.get('finished_at'))}")
            if r.get("note"):
                item.setToolTip(1, str(r["note"]))
            item.setToolTip(0, f"{r.get('goal', '')}\nplanner {r.get('planner', '')} · model {r.get('model', '')}")
            self.tree.addTopLevelItem(item)
            if r["id"] == current:
                self.tree.setCurrentItem(item)
        self._update()

    def current_id(self) -> str:
        item = self.tree.currentItem()
        return str(item.data(0, ID_ROLE)) if item is not None else ""

    def select(self, episode_id: str) -> None:
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item is not None and item.data(0, ID_ROLE) == episode_id:
                self.tree.setCurrentItem(item)

    def count(self) -> int:
        return self.tree.topLevelItemCount()

    def _update(self) -> None:
        chosen = bool(self.current_id())
        for b in (self.open, self.export_html, self.export_json, self.export_aitw):
            b.setEnabled(chosen)
        self.empty.setVisible(not self._rows)

    def _emit_open(self) -> None:
        if self.current_id():
            self.openRequested.emit(self.current_id())

    def _emit_export(self, fmt: str) -> None:
        if self.current_id():
            self.exportRequested.emit(self.current_id(), fmt)


def _brush(colour: str) -> Any:
    from PySide6.QtGui import QBrush, QColor

    return QBrush(QColor(colour))
