"""The app-map view: one app's map as a graph of screen thumbnails, with the details of
what the user clicks, coverage figures, and the explore / stop / export controls.

Takes ``MapPicture`` snapshots (``agent.knowledge.types``); emits intents
(``exploreRequested``, ``stopRequested``, ``exportRequested``, ``appChosen``).  Screens
are laid out breadth-first from the app's first screen, left to right; clicking a
screen shows its screenshot and elements (tried, where each leads, or why it was not
tried); clicking an arrow shows the element that leads there, outlined on its screen.
No I/O: the export's file is written by the controller.
"""

from __future__ import annotations

from collections import deque
from html import escape

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPainterPath, QPen, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsPixmapItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from agent.knowledge.types import MapEdgeView, MapPicture, MapScreenView
from widgets.icons import button, icon

THUMB_W = 64
SHOT_W = 110  # the selected screen's picture in the details
COL_W = 96
ROW_H = 200
KIND_ROLE = 0  # QGraphicsItem data slot: ("screen", key) or ("edge", src, element)
_STATUS_COLOURS = {"tried": "#2e7d32", "untried": "#757575", "skipped": "#c62828"}


def layout(picture: MapPicture, per_row: int = 8) -> dict[str, tuple[int, int]]:
    """(column, row) of each screen: rows by breadth-first depth from the first screen,
    at most ``per_row`` screens side by side (a deeper level wraps onto more rows);
    screens the first screen does not lead to go in the last rows."""
    outs: dict[str, list[str]] = {}
    for e in picture.edges:
        outs.setdefault(e.src, []).append(e.dst)
    keys = [s.key for s in picture.screens]
    root = next((s.key for s in picture.screens if s.is_root), keys[0] if keys else "")
    depth: dict[str, int] = {}
    if root:
        depth[root] = 0
        queue = deque([root])
        while queue:
            cur = queue.popleft()
            for nxt in outs.get(cur, []):
                if nxt in keys and nxt not in depth:
                    depth[nxt] = depth[cur] + 1
                    queue.append(nxt)
    last = max(depth.values(), default=-1) + 1
    levels: dict[int, list[str]] = {}
    for k in keys:
        levels.setdefault(depth.get(k, last), []).append(k)
    out: dict[str, tuple[int, int]] = {}
    row = 0
    for level in sorted(levels):
        members = levels[level]
        width = min(per_row, len(members))
        offset = (per_row - width) / 2
        for i, k in enumerate(members):
            out[k] = (int(offset + i % per_row) if width == per_row else i % per_row + int(offset), row + i // per_row)
        row += (len(members) + per_row - 1) // per_row
    return out


def _pixmap(png: bytes, width: int) -> QPixmap:
    pm = QPixmap()
    if png and pm.loadFromData(png, "PNG"):
        return pm.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
    pm = QPixmap(width, int(width * 2.2))
    pm.fill(QColor("#eceff1"))
    return pm


class _ZoomView(QGraphicsView):
    """A graphics view the mouse wheel zooms (around the pointer)."""

    def wheelEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        factor = 1.25 if event.angleDelta().y() > 0 else 0.8
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.scale(factor, factor)


class AppMapView(QWidget):
    exploreRequested = Signal()
    stopRequested = Signal()
    exportRequested = Signal(str, str)  # package, file path
    appChosen = Signal(str)  # package

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._maps: dict[str, MapPicture] = {}
        self._current: MapPicture | None = None
        self.app_box = QComboBox()
        self.app_box.setMinimumContentsLength(8)
        self.explore_button = button("mdi6.map-search", "Explore this app",
                                     "Tap through every screen of the app in front (never what looks like "
                                     "deleting, sending or paying) and store its map")
        self.stop_button = button("mdi6.stop", "", "Stop exploring (the map found so far is kept)")
        self.stop_button.setEnabled(False)
        self.export_button = QPushButton(icon("mdi6.export"), "Export…")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setVisible(False)
        self.coverage = QLabel("")
        self.coverage.setWordWrap(True)
        # two short rows, so the controls fit a narrow column
        top = QVBoxLayout()
        first, second = QHBoxLayout(), QHBoxLayout()
        first.addWidget(self.app_box, 1)
        first.addWidget(self.export_button)
        second.addWidget(self.explore_button, 1)
        second.addWidget(self.stop_button)
        top.addLayout(first)
        top.addLayout(second)

        self.scene = QGraphicsScene(self)
        self.graph = _ZoomView(self.scene)
        self.graph.setToolTip("Wheel to zoom, drag to move; click a screen or an arrow")
        self.graph.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.graph.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        self.graph.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.shot = QLabel()
        self.shot.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.shot.setFixedWidth(SHOT_W + 4)
        self.detail = QLabel("Click a screen or an arrow.")
        self.detail.setWordWrap(True)
        self.elements = QTableWidget(0, 3)
        self.elements.setHorizontalHeaderLabels(["element", "status", "leads to / why not"])
        header = self.elements.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(24)
        header.setStretchLastSection(False)
        # the columns share the width (long cells elided, whole on hover): no sideways scroll
        self.elements.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.elements.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.elements.setWordWrap(False)
        self.elements.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.elements.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.elements.verticalHeader().setVisible(False)
        # the screen's picture beside its description, its elements below at the full width
        side = QWidget()
        sl = QVBoxLayout(side)
        sl.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        head.addWidget(self.shot)
        head.addWidget(self.detail, 1)
        sl.addLayout(head)
        sl.addWidget(self.elements, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.graph)
        split.addWidget(side)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setSizes([400, 400])

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(self.progress)
        lay.addWidget(self.coverage)
        lay.addWidget(split, 1)

        self.explore_button.clicked.connect(self.exploreRequested)
        self.stop_button.clicked.connect(self.stopRequested)
        self.export_button.clicked.connect(self._export)
        self.app_box.currentIndexChanged.connect(self._chosen)
        self.scene.selectionChanged.connect(self._selected)
        self.set_maps([])

    # ---- data ------------------------------------------------------------------------------
    def set_maps(self, maps: list[MapPicture], show: str = "") -> None:
        """The stored maps; ``show`` picks the app shown (else the one shown now, else the first)."""
        keep = show or (self._current.package if self._current else "")
        self._maps = {m.package: m for m in maps}
        self.app_box.blockSignals(True)
        self.app_box.clear()
        for m in maps:
            self.app_box.addItem(f"{m.label or m.package}", m.package)
        idx = self.app_box.findData(keep) if keep else 0
        self.app_box.setCurrentIndex(max(0, idx))
        self.app_box.blockSignals(False)
        self.export_button.setEnabled(bool(maps))
        self._show(self._maps.get(self.app_box.currentData() or ""))

    def set_progress(self, fraction: float, text: str, running: bool) -> None:
        """Exploration progress (``fraction`` of the step budget) and whether it still runs."""
        self.progress.setVisible(running or fraction > 0)
        self.progress.setValue(int(1000 * max(0.0, min(1.0, fraction))))
        self.progress.setFormat(text.replace("%", "%%")[:120])
        self.explore_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        if not running:
            self.progress.setVisible(False)
            self.coverage.setText(text if not self._current else self._coverage_text(self._current) + "\n" + text)

    def _chosen(self, _index: int) -> None:
        pkg = self.app_box.currentData() or ""
        self._show(self._maps.get(pkg))
        self.appChosen.emit(pkg)

    def _export(self) -> None:
        if self._current is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export the app map", f"{self._current.package}.map.json",
                                              "App map (*.json)")
        if path:
            self.exportRequested.emit(self._current.package, path)

    @staticmethod
    def _coverage_text(m: MapPicture) -> str:
        c = m.coverage
        why = ", ".join(f"{reason} {n}" for reason, n in m.not_tried) or "nothing"
        state = "finished" if m.complete else "not finished (explore again to continue)"
        return (f"{c.get('screens', 0)} screens, {c.get('transitions', 0)} transitions; elements: "
                f"{c.get('tried', 0)} tried, {c.get('untried', 0)} untried, not tried: {why}; "
                f"{c.get('unreachable', 0)} screens unreachable · {m.steps_used} steps, {m.seconds_used:.0f} s, "
                f"{state}" + (f" · version {m.app_version}" if m.app_version else "")
                + (f" · in {m.language}" if m.language else ""))

    # ---- the graph ---------------------------------------------------------------------------
    def _show(self, m: MapPicture | None) -> None:
        self._current = m
        self.scene.clear()
        self.elements.setRowCount(0)
        self.shot.clear()
        self.screen_items: dict[str, QGraphicsRectItem] = {}
        if m is None or not m.screens:
            self.coverage.setText("No app map yet. Open an app on the phone and press “Explore this app”.")
            self.scene.addText("No app map yet.")
            self.detail.setText("")
            return
        self.coverage.setText(self._coverage_text(m))
        self.detail.setText("Click a screen or an arrow.")
        grid = layout(m)
        small = QFont()
        small.setPointSizeF(7.5)
        centres: dict[str, QRectF] = {}
        for s in m.screens:
            col, row = grid[s.key]
            pm = _pixmap(s.thumbnail_png, THUMB_W)
            frame = QGraphicsRectItem(QRectF(0, 0, pm.width() + 6, pm.height() + 30))
            frame.setPos(col * COL_W, row * ROW_H)
            colour = "#1565c0" if s.is_root else ("#c62828" if s.unreachable else "#90a4ae")
            frame.setPen(QPen(QColor(colour), 2 if s.is_root else 1))
            frame.setBrush(QBrush(QColor("#ffffff")))
            frame.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, True)
            frame.setData(KIND_ROLE, ("screen", s.key))
            frame.setToolTip(f"{s.title}\n{len(s.elements)} elements" + (f"\n{s.unreachable}" if s.unreachable else ""))
            frame.setZValue(2)
            self.scene.addItem(frame)
            pix = QGraphicsPixmapItem(pm, frame)
            pix.setPos(3, 3)
            label = self.scene.addText(s.title[:22], small)
            label.setParentItem(frame)
            label.setPos(2, pm.height() + 4)
            centres[s.key] = frame.sceneBoundingRect()
            self.screen_items[s.key] = frame
        pairs: dict[tuple[str, str], list[MapEdgeView]] = {}
        for e in m.edges:
            if e.src in centres and e.dst in centres and e.src != e.dst:
                pairs.setdefault((e.src, e.dst), []).append(e)
        for (src, dst), edges in pairs.items():
            a, b = centres[src], centres[dst]
            down = b.top() > a.bottom()
            start = QPointF(a.center().x(), a.bottom()) if down else QPointF(a.center().x(), a.top())
            end = QPointF(b.center().x(), b.top()) if down else QPointF(b.center().x(), b.bottom())
            path = QPainterPath(start)
            pull = 30.0 if down else -30.0
            if abs(b.top() - a.top()) < 1:  # same row: an arc above
                start, end = QPointF(a.center().x(), a.top()), QPointF(b.center().x(), b.top())
                path = QPainterPath(start)
                pull = -40.0
                path.cubicTo(start + QPointF(0, pull), end + QPointF(0, pull), end)
            else:
                path.cubicTo(start + QPointF(0, pull), end + QPointF(0, -pull), end)
            item = QGraphicsPathItem(path)
            pen = QPen(QColor("#78909c"))
            pen.setWidthF(1.2)
            item.setPen(pen)
            item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, True)
            item.setData(KIND_ROLE, ("edge", edges[0].src, edges[0].element))
            item.setToolTip("\n".join(f"'{e.name}' ×{e.count} ({e.source})" for e in edges))
            item.setZValue(1)
            self.scene.addItem(item)
            head = self.scene.addEllipse(end.x() - 3, end.y() - 3, 6, 6, QPen(QColor("#546e7a")),
                                         QBrush(QColor("#546e7a")))
            head.setZValue(1)
        rect = self.scene.itemsBoundingRect().adjusted(-10, -10, 10, 10)
        self.scene.setSceneRect(rect)
        self.graph.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)

    def zoom(self, factor: float) -> None:
        self.graph.scale(factor, factor)

    def resizeEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        super().resizeEvent(event)
        if self._current is not None and self._current.screens:
            self.graph.fitInView(self.scene.sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)

    # ---- details -----------------------------------------------------------------------------
    def _selected(self) -> None:
        items = self.scene.selectedItems()
        if not items or self._current is None:
            return
        data = items[0].data(KIND_ROLE)
        if not data:
            return
        if data[0] == "screen":
            self.show_screen(data[1])
        else:
            self.show_edge(data[1], data[2])

    def _screen(self, key: str) -> MapScreenView | None:
        return next((s for s in self._current.screens if s.key == key), None) if self._current else None

    def show_screen(self, key: str, highlight: str = "") -> None:
        """The screen's screenshot and its elements (``highlight``: an element key to select and outline)."""
        s = self._screen(key)
        if s is None:
            return
        pm = _pixmap(s.thumbnail_png, SHOT_W)
        el = next((e for e in s.elements if e.key == highlight), None)
        if el is not None and s.size[0] > 0:
            painter = QPainter(pm)
            pen = QPen(QColor("#ff6f00"))
            pen.setWidth(3)
            painter.setPen(pen)
            k = pm.width() / s.size[0]
            x1, y1, x2, y2 = el.bounds
            painter.drawRect(QRectF(x1 * k, y1 * k, (x2 - x1) * k, (y2 - y1) * k))
            painter.end()
        self.shot.setPixmap(pm)
        texts = ", ".join(f"'{escape(t)}'" for t in s.texts[:6])  # the screen's words are text, not markup
        self.detail.setText(f"<b>{escape(s.title)}</b><br>{len(s.elements)} elements"
                            + (f"<br>shows {texts}" if texts else "")
                            + (f"<br><span style='color:#c62828'>{escape(s.unreachable)}</span>" if s.unreachable else ""))
        self.elements.setRowCount(0)
        for e in s.elements:
            r = self.elements.rowCount()
            self.elements.insertRow(r)
            status = {"skipped": "not tried"}.get(e.status, e.status)
            why = f"not tried: {e.reason}" if e.status == "skipped" else (e.leads_to or "")
            for c, v in enumerate((e.name, status, why)):
                item = QTableWidgetItem(v)
                item.setToolTip(v)
                if c == 1:
                    item.setForeground(QColor(_STATUS_COLOURS.get(e.status, "#000000")))
                self.elements.setItem(r, c, item)
            if e.key == highlight:
                self.elements.selectRow(r)

    def show_edge(self, src: str, element: str) -> None:
        """The element that leads from ``src`` somewhere, outlined on its screen."""
        if self._current is None:
            return
        self.show_screen(src, highlight=element)
        edge = next((e for e in self._current.edges if e.src == src and e.element == element), None)
        dst = self._screen(edge.dst) if edge else None
        s = self._screen(src)
        if edge is not None and s is not None:
            self.detail.setText(f"On <b>{s.title}</b>, tapping <b>'{edge.name}'</b> opens "
                                f"<b>{dst.title if dst else 'another app'}</b> (seen {edge.count}×, {edge.source}).")
