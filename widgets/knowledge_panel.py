"""The knowledge browser: the app maps (``widgets.app_map_view``: explored screens and
what leads where), the decision memory (the steps the user approved, edited or
demonstrated, per app, each deletable), the task repository (solved tasks and
demonstrations), the user's context library (editable key/value records) and the
interaction graph (pages and the elements that lead from one to another).

It fits a narrow column (1024x700 and 1366x800 windows) without sideways scrolling: short
tab titles that wrap onto a second row when they must (``widgets.wrap_tabs``; the full name
on hover), tables whose columns share the width (long cells
elided, whole on hover).  Takes ``TaskRecord`` and ``Remembered`` objects, the context as a
nested dict and an
``InteractionGraph``; emits intents for edits and deletions.  No I/O.
"""

from __future__ import annotations

import json
import math
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGraphicsScene,
    QGraphicsView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from agent.knowledge.types import GraphPicture, TaskRecord
from agent.memory.types import Remembered, when
from widgets.app_map_view import AppMapView
from widgets.icons import icon
from widgets.wrap_tabs import WrapTabs

ID_ROLE = Qt.ItemDataRole.UserRole + 1


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}`` (lists and scalars are leaves)."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        path = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and v:
            out.update(flatten(v, path))
        else:
            out[path] = v
    return out


def parse_value(text: str) -> Any:
    """What the user typed: JSON when it parses (numbers, true, lists), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


class KnowledgePanel(QWidget):
    taskDeleteRequested = Signal(str)  # task record id
    memoryDeleteRequested = Signal(str)  # remembered decision id
    contextEdited = Signal(str, object)  # dotted path, value
    contextDeleted = Signal(str)  # dotted path

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._tasks: dict[str, TaskRecord] = {}
        self._loading = False
        # the titles are buttons that wrap onto a second row in a narrow column (a 1024x700
        # window's, with its scroll bar beside them) instead of being cut or scrolled
        self.tabs = WrapTabs()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.note = QLabel("")
        self.note.setWordWrap(True)
        lay.addWidget(self.note)
        lay.addWidget(self.tabs)

        # app maps
        self.maps = AppMapView()
        self._tab(self.maps, "Maps", "App maps: the apps explored, their screens and what leads where")

        # decision memory
        self.memory = MemoryList()
        self._tab(self.memory, "Memory", "Decision memory: choices you approved, offered again on the same screen "
                  "for the same task")
        self.memory.deleteRequested.connect(self.memoryDeleteRequested)

        # task repository
        self.task_table = QTableWidget(0, 4)
        self.task_table.setHorizontalHeaderLabels(["goal", "source", "app", "steps"])
        self.task_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        # the goal gets the width: source and app are short and elided (hover shows all)
        self.task_table.horizontalHeader().setDefaultSectionSize(56)
        self.task_table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        fit_width(self.task_table)
        self.task_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.task_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.task_steps = QPlainTextEdit(readOnly=True)
        self.delete_task = QPushButton(icon("mdi6.delete"), "Forget this task")
        tasks = QSplitter(Qt.Orientation.Vertical)
        tasks.addWidget(self.task_table)
        box = QWidget()
        bl = QVBoxLayout(box)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(self.task_steps)
        bl.addWidget(self.delete_task)
        tasks.addWidget(box)
        self._tab(tasks, "Tasks", "Task repository: solved tasks and demonstrations, given to the planner as examples")
        self.task_table.currentCellChanged.connect(lambda *_: self._show_task())
        self.delete_task.clicked.connect(self._delete_task)

        # context library
        self.context_table = QTableWidget(0, 2)
        self.context_table.setHorizontalHeaderLabels(["record", "value"])
        self.context_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.context_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        fit_width(self.context_table)
        self.new_path = QLineEdit(placeholderText="new record, e.g. contacts.mom.phone")
        self.new_value = QLineEdit(placeholderText="value")
        self.add_record = QPushButton(icon("mdi6.plus"), "Add")
        self.delete_record = QPushButton(icon("mdi6.delete"), "Delete selected")
        row = QHBoxLayout()
        for w in (self.new_path, self.new_value, self.add_record):
            row.addWidget(w)
        ctx = QWidget()
        cl = QVBoxLayout(ctx)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addWidget(self.context_table)
        cl.addLayout(row)
        cl.addWidget(self.delete_record)
        self._tab(ctx, "Context", "Context library: facts about you the agent may use (names, numbers, addresses)")
        self.context_table.itemChanged.connect(self._context_changed)
        self.add_record.clicked.connect(self._add_record)
        self.delete_record.clicked.connect(self._delete_record)

        # interaction graph
        self.graph_scene = QGraphicsScene(self)
        self.graph_view = QGraphicsView(self.graph_scene)
        self.graph_view.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.graph_view.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self._tab(self.graph_view, "Graph", "Interaction graph: the pages seen and the elements that lead between them")
        self.set_data([], {}, None)

    def _tab(self, page: QWidget, title: str, what: str) -> None:
        i = self.tabs.addTab(page, title)
        self.tabs.setTabToolTip(i, what)

    # ---- data ------------------------------------------------------------------------
    def set_data(self, tasks: list[TaskRecord], context: dict[str, Any], graph: GraphPicture | None,
                 note: str = "") -> None:
        self.note.setText(note)
        self.note.setVisible(bool(note))
        self._set_tasks(tasks)
        self._set_context(context)
        self._set_graph(graph)

    def _set_tasks(self, tasks: list[TaskRecord]) -> None:
        self._tasks = {t.id: t for t in tasks}
        self.task_table.setRowCount(0)
        for t in sorted(tasks, key=lambda t: -t.created_at):
            r = self.task_table.rowCount()
            self.task_table.insertRow(r)
            for c, v in enumerate((t.goal, t.source, t.app or "", str(len(t.steps)))):
                item = QTableWidgetItem(v)
                item.setData(ID_ROLE, t.id)
                item.setToolTip(v)
                self.task_table.setItem(r, c, item)
        self.task_steps.setPlainText("" if tasks else "No solved tasks or demonstrations yet.")
        self.delete_task.setEnabled(False)

    def _current_task(self) -> TaskRecord | None:
        item = self.task_table.item(self.task_table.currentRow(), 0)
        return self._tasks.get(item.data(ID_ROLE)) if item is not None else None

    def _show_task(self) -> None:
        t = self._current_task()
        self.delete_task.setEnabled(t is not None)
        if t is None:
            return
        lines = [f"{i + 1}. {s}" for i, s in enumerate(t.steps)]
        if t.instructions:
            lines += ["", "Instructions:"] + [f"  {ins}" for ins in t.instructions]
        self.task_steps.setPlainText("\n".join(lines))

    def _delete_task(self) -> None:
        t = self._current_task()
        if t is not None:
            self.taskDeleteRequested.emit(t.id)

    def _set_context(self, context: dict[str, Any]) -> None:
        self._loading = True
        try:
            flat = flatten(context)
            self.context_table.setRowCount(0)
            for path, value in sorted(flat.items()):
                r = self.context_table.rowCount()
                self.context_table.insertRow(r)
                key = QTableWidgetItem(path)
                key.setFlags(key.flags() & ~Qt.ItemFlag.ItemIsEditable)
                key.setToolTip(path)
                self.context_table.setItem(r, 0, key)
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                cell = QTableWidgetItem(text)
                cell.setToolTip(text)
                self.context_table.setItem(r, 1, cell)
        finally:
            self._loading = False

    def context_paths(self) -> list[str]:
        return [_text(self.context_table.item(r, 0)) for r in range(self.context_table.rowCount())]

    def _context_changed(self, item: QTableWidgetItem) -> None:
        if self._loading or item.column() != 1:
            return
        path = _text(self.context_table.item(item.row(), 0))
        self.contextEdited.emit(path, parse_value(item.text()))

    def _add_record(self) -> None:
        path = self.new_path.text().strip().strip(".")
        if not path:
            self.new_path.setFocus()
            return
        self.contextEdited.emit(path, parse_value(self.new_value.text()))
        self.new_path.clear()
        self.new_value.clear()

    def _delete_record(self) -> None:
        r = self.context_table.currentRow()
        if r >= 0:
            self.contextDeleted.emit(_text(self.context_table.item(r, 0)))

    def _set_graph(self, graph: GraphPicture | None) -> None:
        scene = self.graph_scene
        scene.clear()
        if graph is None or not graph.pages:
            scene.addText("No pages recorded yet: run tasks or record macros to grow the graph.")
            self.graph_nodes = 0
            return
        nodes = list(graph.pages)
        n = len(nodes)
        radius = max(160.0, 60.0 * n / math.pi)
        pos = {node.id: QPointF(radius * math.cos(2 * math.pi * i / n), radius * math.sin(2 * math.pi * i / n))
               for i, node in enumerate(nodes)}
        edge_pen = QPen(QColor("#90a4ae"))
        edge_pen.setWidthF(1.5)
        small = QFont()
        small.setPointSizeF(7)
        for edge in graph.edges:
            if edge.src in pos and edge.dst in pos:
                a, b = pos[edge.src], pos[edge.dst]
                scene.addLine(a.x(), a.y(), b.x(), b.y(), edge_pen)
                label = scene.addText(f"{edge.element.split(':')[-1][:24]} ×{edge.count}", small)
                label.setDefaultTextColor(QColor("#546e7a"))
                label.setPos((a + b) / 2)
        for node in nodes:
            p = pos[node.id]
            text = scene.addText(f"{node.summary[:48]}\n{node.app.rsplit('.', 1)[-1]} · {node.visits} visits", small)
            r = text.boundingRect()
            rect = QRectF(p.x() - r.width() / 2 - 4, p.y() - r.height() / 2 - 2, r.width() + 8, r.height() + 4)
            scene.addRect(rect, QPen(QColor("#1565c0")), QBrush(QColor("#e3f2fd")))
            text.setPos(rect.topLeft() + QPointF(4, 2))
            text.setZValue(2)
        self.graph_nodes = n
        self.graph_view.fitInView(scene.itemsBoundingRect(), Qt.AspectRatioMode.KeepAspectRatio)


def fit_width(table: QTableWidget) -> None:
    """Columns share the table's width (long cells elided, whole on hover): never a sideways scroll."""
    table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    table.setTextElideMode(Qt.TextElideMode.ElideRight)
    table.setWordWrap(False)
    table.horizontalHeader().setMinimumSectionSize(24)
    table.horizontalHeader().setStretchLastSection(False)


def _text(item: QTableWidgetItem | None) -> str:
    return item.text() if item is not None else ""


def _details(e: Remembered, app: str) -> str:
    """One decision in full, for the line under the list and the rows' tooltips."""
    where = f"on the screen “{e.screen_words}”" if e.screen_words else f"on screen {e.screen}"
    visit = f" (step {e.visit + 1} taken there)" if e.visit else ""
    version = f", app version {e.app_version}" if e.app_version else ""
    status = f"Retired: {e.retired}." if e.retired else "Proposed again with no model call."
    return (f"{e.step.description or e.action.describe()} — {app}{version}, {where}{visit}, for “{e.goal}”; "
            f"{e.how.value} on {when(e.at)}. {status}")


class MemoryList(QWidget):
    """The decision memory, one branch per app: each remembered step with its goal, the
    screen it belongs to, how and when the user decided it, the app version, and whether
    it is still proposed; "Forget" deletes the selected one."""

    deleteRequested = Signal(str)  # remembered decision id
    COLUMNS = ("step", "goal", "decided", "status")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(list(self.COLUMNS))
        self.tree.setAlternatingRowColors(True)
        self.tree.setRootIsDecorated(True)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for column in (2, 3):  # "approved 27 Nov 2026", "proposed": short, shown whole
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.note = QLabel("")
        self.note.setWordWrap(True)
        self.detail = QLabel("")  # the selected decision in full
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.forget = QPushButton(icon("mdi6.delete"), "Forget this decision")
        self.forget.setEnabled(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.note)
        lay.addWidget(self.tree)
        lay.addWidget(self.detail)
        lay.addWidget(self.forget)
        self.tree.currentItemChanged.connect(lambda *_: self._selected())
        self.forget.clicked.connect(self._forget)
        self.set_entries([])

    def set_entries(self, entries: list[Remembered], labels: dict[str, str] | None = None) -> None:
        """Show ``entries`` grouped by app (``labels``: package -> the app's name)."""
        self.tree.clear()
        by_app: dict[str, list[Remembered]] = {}
        for e in entries:
            by_app.setdefault(e.app, []).append(e)
        for app in sorted(by_app):
            rows = sorted(by_app[app], key=lambda e: (e.goal.casefold(), e.visit, -e.at))
            name = (labels or {}).get(app) or app or "(unknown app)"
            top = QTreeWidgetItem([f"{name} — {len(rows)} decision{'s' if len(rows) != 1 else ''}"])
            self.tree.addTopLevelItem(top)
            top.setFirstColumnSpanned(True)
            for e in rows:
                status = f"retired: {e.retired}" if e.retired else "proposed"
                item = QTreeWidgetItem([e.step.description or e.action.describe(), e.goal,
                                        f"{e.how.value} {when(e.at)}", status])
                item.setData(0, ID_ROLE, e.id)
                full = _details(e, name)
                for c in range(len(self.COLUMNS)):
                    item.setToolTip(c, full)
                item.setData(1, ID_ROLE, full)
                if e.retired:
                    for c in range(len(self.COLUMNS)):
                        item.setForeground(c, QColor("#9e9e9e"))
                top.addChild(item)
            top.setExpanded(True)
        n = len(entries)
        self.note.setText(f"{n} remembered step{'s' if n != 1 else ''}: on the same screen, for the same goal (or "
                          "one that means the same), they are proposed again with no model call."
                          if n else "Nothing remembered yet: the steps you approve, edit or demonstrate in a run are "
                          "kept here and proposed again the next time.")
        self.forget.setEnabled(False)
        self.detail.setText("")

    def _selected(self) -> None:
        item = self.tree.currentItem()
        self.forget.setEnabled(self.current() is not None)
        self.detail.setText(str(item.data(1, ID_ROLE) or "") if item is not None else "")

    def current(self) -> str | None:
        item = self.tree.currentItem()
        value = item.data(0, ID_ROLE) if item is not None else None
        return str(value) if value else None

    def _forget(self) -> None:
        entry = self.current()
        if entry is not None:
            self.deleteRequested.emit(entry)
