"""The parse inspector: a filterable tree of blocks and elements, where the accessibility
tree and the pixels disagree, stage timings, and the screen description the LLM sees
(with a token estimate).

Takes a ``ScreenParse``; emits ``elementSelected`` when the user picks a row (or a
disagreement tied to an element), ``disagreementSelected`` with the ``Disagreement``
picked in its list, and follows ``select_element`` from the screen view without echoing
it back.  No I/O.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from vision.types import Disagreement, Element, ScreenParse

ID_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMNS = ("id", "kind", "text / label", "source", "conf", "bounds")
TEXT_COLUMN = 2
#: Below this width the columns after the words are left out.
NARROW_PX = 520

#: How each kind of disagreement is named in the list (the same words tag it on the mirror),
#: and what that means (the row's tooltip); unknown kinds show as they are.
DISAGREEMENT_WORDS = {
    "only_in_tree": ("tree only", "in the accessibility tree, not on the screen"),
    "not_visible": ("tree only", "in the accessibility tree, not on the screen"),
    "only_on_screen": ("screen only", "on the screen, not in the accessibility tree"),
    "missing_in_tree": ("screen only", "on the screen, not in the accessibility tree"),
    "text_mismatch": ("other words", "the tree and the screen name this place differently"),
    "unnamed_in_tree": ("no name in tree", "a control the tree gives no text or description"),
}


def disagreement_words(kind: str) -> tuple[str, str]:
    """A disagreement's kind as the user reads it: a short name and what it means."""
    return DISAGREEMENT_WORDS.get(kind, (kind.replace("_", " "), kind.replace("_", " ")))


def estimate_tokens(text: str) -> int:
    """A rough LLM token count: about four characters per token for English text."""
    return 0 if not text else max(1, round(len(text) / 4))


class _Filter(QSortFilterProxyModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(-1)


class ParseInspector(QWidget):
    """Blocks and elements, timings, and the description text of one parse."""

    elementSelected = Signal(str)
    disagreementSelected = Signal(object)  # Disagreement

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._parse: ScreenParse | None = None
        self._syncing = False

        self.filter_edit = QLineEdit(placeholderText="Filter elements (text, kind, id, source)…")
        self.filter_edit.setClearButtonEnabled(True)
        self.summary = QLabel("No parse yet")
        self.summary.setWordWrap(True)  # a long summary must not widen the panel
        self.model = QStandardItemModel(0, len(COLUMNS), self)
        self.model.setHorizontalHeaderLabels(list(COLUMNS))
        self.proxy = _Filter(self)
        self.proxy.setSourceModel(self.model)
        self.tree = QTreeView()
        self.tree.setModel(self.proxy)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        # the words get what width is left (elided, whole on hover); in a narrow column the
        # source, confidence and bounds columns are left out (the hover card has them): the
        # tab never scrolls sideways
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(24)
        for col in range(len(COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch if col == TEXT_COLUMN
                                        else QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)

        self.timings = QTableWidget(0, 2)
        self.timings.setHorizontalHeaderLabels(["stage", "ms"])
        self.timings.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.timings.verticalHeader().setVisible(False)
        self.timings.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.description = QPlainTextEdit(readOnly=True)
        self.description.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.token_label = QLabel("")
        self.warnings = QLabel("")
        self.warnings.setWordWrap(True)
        self.warnings.setStyleSheet("color: #b26a00")

        desc_box = QWidget()
        dl = QVBoxLayout(desc_box)
        dl.setContentsMargins(0, 0, 0, 0)
        dl.addWidget(self.token_label)
        dl.addWidget(self.description)
        self.disagreements = QTableWidget(0, 2)
        self.disagreements.setHorizontalHeaderLabels(["differs", "what"])
        self.disagreements.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.disagreements.horizontalHeader().setStretchLastSection(True)
        self.disagreements.verticalHeader().setVisible(False)
        self.disagreements.setWordWrap(True)
        self.disagreements.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.disagreements.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.disagreements.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.disagreements.setToolTip("What the accessibility tree has that the pixels do not show, and the "
                                      "reverse (compared while this panel is open and no run is going)")
        self.tabs = QTabWidget()
        self.tabs.addTab(self.disagreements, "Tree vs pixels")
        self.tabs.addTab(desc_box, "LLM description")
        self.tabs.addTab(self.timings, "Timings")

        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(self.filter_edit)
        tl.addWidget(self.tree)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.summary)
        lay.addWidget(self.warnings)
        lay.addWidget(split)

        self.filter_edit.textChanged.connect(self._on_filter)
        self.tree.selectionModel().currentRowChanged.connect(self._on_current)
        self.disagreements.currentCellChanged.connect(self._on_disagreement)

    # ---- data ----------------------------------------------------------------------
    def resizeEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        super().resizeEvent(event)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Leave out the columns after the words in a narrow column (a new model shows them again)."""
        narrow = self.width() < NARROW_PX
        for col in range(TEXT_COLUMN + 1, len(COLUMNS)):
            self.tree.setColumnHidden(col, narrow)

    def set_parse(self, parse: ScreenParse | None) -> None:
        self._parse = parse
        selected = self.selected_id()
        self.model.removeRows(0, self.model.rowCount())
        self.timings.setRowCount(0)
        self._fill_disagreements(parse)
        if parse is None:
            self.summary.setText("No parse yet")
            self.description.setPlainText("")
            self.token_label.setText("")
            self.warnings.setText("")
            return
        # fill the model while it is detached from the filter and the view: one reset
        # instead of a signal cascade per cell
        self.proxy.setSourceModel(None)  # type: ignore[arg-type]  # detach: Qt accepts a null model
        try:
            self._fill(parse)
        finally:
            self.proxy.setSourceModel(self.model)
            self.proxy.setFilterFixedString(self.filter_edit.text())
        self._fit_columns()
        self.tree.expandAll()
        self._fill_details(parse)
        if selected:
            self.select_element(selected)

    def _fill(self, parse: ScreenParse) -> None:
        placed: set[str] = set()
        for b in parse.blocks:
            row = self._row(b.id, f"block · {b.role}", b.caption, "", "", b.rect.to_bounds_string(), bold=True)
            for eid in b.element_ids:
                el = parse.element(eid)
                if el is not None:
                    row[0].appendRow(self._element_row(el, active=(eid == b.active_child)))
                    placed.add(eid)
            self.model.appendRow(row)
        loose = [e for e in parse.elements if e.id not in placed]
        if loose:
            parent = self._row("", "outside blocks", "", "", "", "", bold=True)
            for el in loose:
                parent[0].appendRow(self._element_row(el))
            self.model.appendRow(parent)

    def _fill_disagreements(self, parse: ScreenParse | None) -> None:
        notes = parse.disagreements if parse is not None else ()
        self.disagreements.blockSignals(True)
        try:
            self.disagreements.setRowCount(0)
            for d in notes:
                r = self.disagreements.rowCount()
                self.disagreements.insertRow(r)
                name, meaning = disagreement_words(d.kind)
                kind = QTableWidgetItem(name)
                kind.setToolTip(meaning)
                what = QTableWidgetItem(d.detail)
                what.setToolTip(f"{d.detail}\n{d.rect.to_bounds_string()}")
                self.disagreements.setItem(r, 0, kind)
                self.disagreements.setItem(r, 1, what)
            self.disagreements.resizeRowsToContents()
        finally:
            self.disagreements.blockSignals(False)
        self.tabs.setTabText(0, f"Tree vs pixels ({len(notes)})" if parse is not None else "Tree vs pixels")

    def disagreement_rows(self) -> list[tuple[str, str]]:
        """The disagreement list as shown: (where they differ, what) per row."""
        def text(r: int, c: int) -> str:
            item = self.disagreements.item(r, c)
            return item.text() if item is not None else ""

        return [(text(r, 0), text(r, 1)) for r in range(self.disagreements.rowCount())]

    def select_disagreement(self, row: int) -> None:
        """Pick the ``row``-th disagreement, as a click on it does."""
        self.disagreements.setCurrentCell(row, 1)

    def _on_disagreement(self, row: int, _col: int, _prev_row: int, _prev_col: int) -> None:
        parse = self._parse
        if parse is None or not 0 <= row < len(parse.disagreements):
            return
        d: Disagreement = parse.disagreements[row]
        self.disagreementSelected.emit(d)
        if d.element_id and parse.element(d.element_id) is not None and not self._syncing:
            self.select_element(d.element_id)
            self.elementSelected.emit(d.element_id)

    def _fill_details(self, parse: ScreenParse) -> None:
        # the parser's own "total" is shown once, as the table's last (bold) row
        for t in (t for t in parse.timings if t.stage != "total"):
            r = self.timings.rowCount()
            self.timings.insertRow(r)
            self.timings.setItem(r, 0, QTableWidgetItem(t.stage))
            ms = QTableWidgetItem(f"{t.ms:.1f}")
            ms.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.timings.setItem(r, 1, ms)
        r = self.timings.rowCount()
        self.timings.insertRow(r)
        total = QTableWidgetItem("total")
        f = total.font()
        f.setBold(True)
        total.setFont(f)
        self.timings.setItem(r, 0, total)
        self.timings.setItem(r, 1, QTableWidgetItem(f"{parse.total_ms:.1f}"))
        self.description.setPlainText(parse.description)
        self.token_label.setText(
            f"{len(parse.description)} characters · ≈ {estimate_tokens(parse.description)} tokens"
        )
        notes = len(parse.disagreements)
        self.summary.setText(
            f"{len(parse.elements)} elements · {len(parse.blocks)} blocks · "
            f"{notes} tree/pixel {'disagreement' if notes == 1 else 'disagreements'} · {parse.total_ms:.0f} ms"
        )
        self.warnings.setText("\n".join(parse.warnings))
        self.warnings.setVisible(bool(parse.warnings))

    @property
    def parse(self) -> ScreenParse | None:
        return self._parse

    def _row(self, ident: str, kind: str, text: str, source: str, conf: str, bounds: str, bold: bool = False):
        items = [QStandardItem(v) for v in (ident, kind, text, source, conf, bounds)]
        items[TEXT_COLUMN].setToolTip(text)  # elided in a narrow column
        for it in items:
            it.setEditable(False)
            it.setData(ident, ID_ROLE)
            if bold:
                f = it.font()
                f.setBold(True)
                it.setFont(f)
        return items

    def _element_row(self, el: Element, active: bool = False):
        name = el.text or (f"[{el.label}]" if el.label else "")
        if active:
            name = f"{name}  ★ active"
        row = self._row(el.id, el.kind.value, name, el.source.value, f"{el.confidence:.2f}", el.rect.to_bounds_string())
        for it in row:
            it.setData(el.id, ID_ROLE)
            it.setData("element", Qt.ItemDataRole.UserRole + 2)
        return row

    # ---- filter and selection ------------------------------------------------------
    def _on_filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        self.tree.expandAll()

    def visible_element_ids(self) -> list[str]:
        """Element ids whose rows pass the filter (in display order)."""
        out: list[str] = []

        def walk(parent: QModelIndex) -> None:
            for r in range(self.proxy.rowCount(parent)):
                idx = self.proxy.index(r, 0, parent)
                if idx.data(Qt.ItemDataRole.UserRole + 2) == "element":
                    out.append(idx.data(ID_ROLE))
                walk(idx)

        walk(QModelIndex())
        return out

    def _find(self, element_id: str) -> QModelIndex:
        def walk(parent: QModelIndex) -> QModelIndex:
            for r in range(self.proxy.rowCount(parent)):
                idx = self.proxy.index(r, 0, parent)
                if idx.data(Qt.ItemDataRole.UserRole + 2) == "element" and idx.data(ID_ROLE) == element_id:
                    return idx
                found = walk(idx)
                if found.isValid():
                    return found
            return QModelIndex()

        return walk(QModelIndex())

    def select_element(self, element_id: str) -> None:
        """Select ``element_id``'s row without emitting ``elementSelected``."""
        self._syncing = True
        try:
            idx = self._find(element_id) if element_id else QModelIndex()
            if idx.isValid():
                self.tree.setCurrentIndex(idx)
                self.tree.scrollTo(idx)
            else:
                self.tree.clearSelection()
                self.tree.setCurrentIndex(QModelIndex())
        finally:
            self._syncing = False

    def selected_id(self) -> str:
        idx = self.tree.currentIndex()
        if idx.isValid() and idx.data(Qt.ItemDataRole.UserRole + 2) == "element":
            return str(idx.data(ID_ROLE))
        return ""

    def _on_current(self, current: QModelIndex, previous: QModelIndex) -> None:
        if self._syncing or not current.isValid():
            return
        if current.data(Qt.ItemDataRole.UserRole + 2) == "element":
            self.elementSelected.emit(str(current.data(ID_ROLE)))
