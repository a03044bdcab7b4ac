"""The macro library: record / stop, list, edit name and parameters, edit the steps
(move up / down, delete, edit the action, show it again on the mirror), run with or
without approval, on the phone or on a virtual phone of another profile / theme /
language, import / export, every saved version (pick one to see its steps, Restore
brings it back, Undo undoes the last change: both save a new version, nothing is
lost), "Complete from map" (the steps the app map knows from where the macro stops to
its goal, shown for approval in ``CompleteFromMapDialog`` before they are saved as the
next version), and the per-step results of the last replay.

It shows ``Macro`` objects and emits intents carrying macro ids and step indexes; the
macro controller does the recording, editing, running and file I/O.  Also the small
dialogs Run asks with: parameter values and the virtual phone to replay on.  No I/O.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from agent.macros.types import Macro
from widgets.dialog_buttons import ok_cancel
from widgets.icons import button, icon

ID_ROLE = Qt.ItemDataRole.UserRole + 1

#: What the virtual phone can be (the window offers these for "Run on…").
VIRTUAL_PROFILES = ("phone", "small", "tablet")
VIRTUAL_THEMES = ("light", "dark")
VIRTUAL_LANGUAGES = ("en", "de")
#: Page layouts (an app update moved things): rows lower under a card, or pairs of rows swapped.
VIRTUAL_LAYOUTS = ("default", "shifted", "reordered")

RESULT_ICONS = {True: ("mdi6.check-circle", "#2e7d32"), False: ("mdi6.alert-circle", "#c62828")}


class MacroLibraryPanel(QWidget):
    recordToggled = Signal(bool)  # True = start recording, False = stop
    runRequested = Signal(str, bool)  # macro id, with approval
    runOnRequested = Signal(str)  # macro id: replay on a virtual phone the user picks
    editRequested = Signal(str)
    macroEdited = Signal(object)  # Macro (edited copy, version bumped)
    deleteRequested = Signal(str)
    importRequested = Signal()
    exportRequested = Signal(str)
    stepMoveRequested = Signal(str, int, int)  # macro id, step index, new index
    stepDeleteRequested = Signal(str, int)
    stepEditRequested = Signal(str, int)
    stepRedemonstrateRequested = Signal(str, int)
    versionsRequested = Signal(str)  # macro id: the controller answers with ``set_versions``
    restoreRequested = Signal(str, int)  # macro id, version to bring back (saved as the next version)
    completeRequested = Signal(str)  # macro id: propose the steps the app map knows towards its goal

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._macros: dict[str, Macro] = {}
        self._versions: list[Macro] = []  # every version of the selected macro, oldest first
        self._versions_of = ""
        self._changes: dict[int, str] = {}  # version -> what it changed, in words
        self.record = QPushButton(icon("mdi6.record-rec", "#c62828"), "Record")
        self.record.setCheckable(True)
        self.list = QListWidget()
        self.details = QLabel("")
        self.details.setWordWrap(True)
        self.versions = QComboBox()
        self.versions.setToolTip("Every saved version of the macro: pick one to see its steps")
        self.restore = button("mdi6.backup-restore", "Restore",
                              "Bring back the version shown; it is saved as the newest version, nothing is lost")
        self.undo = button("mdi6.undo", "Undo",
                           "Undo the last change to the macro (the version before it comes back as the newest)")
        self.version_note = QLabel("")
        self.version_note.setWordWrap(True)
        self.version_note.setStyleSheet("color:#555")
        self.steps = QListWidget()
        self.steps.setToolTip("The macro's steps; the buttons below edit the selected one")
        self.step_up = button("mdi6.arrow-up", "", "Move the step up")
        self.step_down = button("mdi6.arrow-down", "", "Move the step down")
        self.step_edit = button("mdi6.pencil", "Edit…", "Edit the step's action (type, point, text)")
        self.step_redemo = button("mdi6.gesture-tap", "Redo",
                                  "Do this step again on the mirror; it replaces the recorded one")
        self.step_delete = button("mdi6.delete", "", "Delete the step")
        self.results = QListWidget()
        self.results.setToolTip("How each step of the last replay went")
        self.results.setWordWrap(True)
        self.steps.setWordWrap(True)
        self.results_title = QLabel("<b>Last replay</b>")
        self.results_title.setWordWrap(True)
        self.run = QPushButton(icon("mdi6.play"), "Run")
        self.run_approve = button("mdi6.play-protected-content", "Run, ask",
                                  "Run with approval: each step waits for Approve")
        self.run_on = button("mdi6.cellphone-cog", "Run on…",
                             "Replay on a virtual phone of another size, theme or language")
        self.edit = QPushButton(icon("mdi6.pencil"), "Edit…")
        self.delete = QPushButton(icon("mdi6.delete"), "Delete")
        self.import_ = QPushButton(icon("mdi6.import"), "Import…")
        self.export = QPushButton(icon("mdi6.export"), "Export…")
        self.complete = button("mdi6.map-marker-path", "Complete from map…",
                               "Add the steps the app map knows from where this macro stops to what it is for; "
                               "you see them before they are saved as a new version")
        # every row stays narrow: the dock beside the mirror is about 200 px wide at 1024x700
        step_rows = QGridLayout()
        step_rows.setContentsMargins(0, 0, 0, 0)
        for col, b in enumerate((self.step_up, self.step_down, self.step_delete)):
            step_rows.addWidget(b, 0, col)
        step_rows.addWidget(self.step_edit, 1, 0, 1, 2)
        step_rows.addWidget(self.step_redemo, 1, 2)
        steps_box = QWidget()
        sl = QVBoxLayout(steps_box)
        sl.setContentsMargins(0, 0, 0, 0)
        sl.addWidget(self.details)
        sl.addWidget(self.versions)
        version_buttons = QHBoxLayout()
        version_buttons.addWidget(self.restore)
        version_buttons.addWidget(self.undo)
        sl.addLayout(version_buttons)
        sl.addWidget(self.version_note)
        sl.addWidget(self.steps, 1)
        sl.addLayout(step_rows)
        sl.addWidget(self.results_title)
        sl.addWidget(self.results, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.list)
        split.addWidget(steps_box)
        split.setStretchFactor(1, 2)
        actions = QGridLayout()
        for n, b in enumerate((self.run, self.run_approve, self.run_on, self.edit, self.import_, self.export,
                               self.delete)):
            actions.addWidget(b, n // 2, n % 2)
        actions.addWidget(self.complete, 4, 0, 1, 2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.record)
        lay.addWidget(split, 1)
        lay.addLayout(actions)
        self.record.toggled.connect(self._on_record)
        self.list.currentItemChanged.connect(lambda *_: self._update())
        self.versions.currentIndexChanged.connect(lambda *_: self._update())
        self.restore.clicked.connect(self._emit_restore)
        self.undo.clicked.connect(self._emit_undo)
        self.steps.currentRowChanged.connect(lambda *_: self._update_step_buttons())
        self.run.clicked.connect(lambda: self._emit_run(False))
        self.run_approve.clicked.connect(lambda: self._emit_run(True))
        self.run_on.clicked.connect(lambda: self._emit_id(self.runOnRequested))
        self.edit.clicked.connect(self._on_edit)
        self.delete.clicked.connect(lambda: self._emit_id(self.deleteRequested))
        self.import_.clicked.connect(self.importRequested.emit)
        self.export.clicked.connect(lambda: self._emit_id(self.exportRequested))
        self.complete.clicked.connect(lambda: self._emit_id(self.completeRequested))
        self.step_up.clicked.connect(lambda: self._emit_move(-1))
        self.step_down.clicked.connect(lambda: self._emit_move(+1))
        self.step_delete.clicked.connect(lambda: self._emit_step(self.stepDeleteRequested))
        self.step_edit.clicked.connect(lambda: self._emit_step(self.stepEditRequested))
        self.step_redemo.clicked.connect(lambda: self._emit_step(self.stepRedemonstrateRequested))
        self.results_title.hide()
        self.results.hide()
        self._update()

    def set_macros(self, macros: list[Macro]) -> None:
        current = self.current_id()
        self._macros = {m.id: m for m in macros}
        self.list.clear()
        for m in sorted(macros, key=lambda m: m.name.lower()):
            item = QListWidgetItem(icon("mdi6.script-text-play"), f"{m.name}  (v{m.version}, {len(m.steps)} step{'' if len(m.steps) == 1 else 's'})")
            item.setData(ID_ROLE, m.id)
            item.setToolTip(m.description or m.name)
            self.list.addItem(item)
            if m.id == current:
                self.list.setCurrentItem(item)
        self._update()

    def macro(self, macro_id: str) -> Macro | None:
        return self._macros.get(macro_id)

    def set_versions(self, macro_id: str, versions: list[tuple[Macro, str]]) -> None:
        """Every version of ``macro_id`` (oldest first) with what it changed, in words."""
        if macro_id != self.current_id():
            return
        self._versions = [m for m, _ in versions]
        self._versions_of = macro_id
        self.versions.blockSignals(True)
        self.versions.clear()
        self._changes = {m.version: what for m, what in versions}
        for n, (m, what) in enumerate(reversed(versions)):
            latest = " · latest" if n == 0 else ""
            self.versions.addItem(f"v{m.version}{latest}", m.version)
            self.versions.setItemData(n, f"v{m.version}: {what}", Qt.ItemDataRole.ToolTipRole)
        self.versions.setCurrentIndex(0)
        self.versions.blockSignals(False)
        self._update()

    def shown_version(self) -> Macro | None:
        """The version whose steps are listed (the latest unless an older one was picked)."""
        latest = self._macros.get(self.current_id())
        if latest is None:
            return None
        picked = self.versions.currentData()
        if self._versions_of == latest.id and picked is not None and picked != latest.version:
            for m in self._versions:
                if m.version == picked:
                    return m
        return latest

    def pick_version(self, version: int) -> None:
        i = self.versions.findData(version)
        if i >= 0:
            self.versions.setCurrentIndex(i)

    def current_id(self) -> str:
        item = self.list.currentItem()
        return str(item.data(ID_ROLE)) if item is not None else ""

    def current_step(self) -> int:
        return self.steps.currentRow()

    def select(self, macro_id: str) -> None:
        for r in range(self.list.count()):
            if self.list.item(r).data(ID_ROLE) == macro_id:
                self.list.setCurrentRow(r)

    def set_recording(self, recording: bool, steps: int = 0) -> None:
        self.record.blockSignals(True)
        self.record.setChecked(recording)
        self.record.blockSignals(False)
        self.record.setText(f"Stop recording ({steps} step{'' if steps == 1 else 's'})" if recording else "Record")

    def show_results(self, title: str, rows: list[tuple[bool, str]]) -> None:
        """The last replay's outcome per step: (went well, what happened)."""
        self.results_title.setText(f"<b>{_esc(title)}</b>")
        self.results.clear()
        for ok, text in rows:
            name, colour = RESULT_ICONS[ok]
            self.results.addItem(QListWidgetItem(icon(name, colour), text))
        self.results_title.show()
        self.results.show()

    def add_result(self, ok: bool, text: str) -> None:
        name, colour = RESULT_ICONS[ok]
        self.results.addItem(QListWidgetItem(icon(name, colour), text))
        self.results.scrollToBottom()
        self.results_title.show()
        self.results.show()

    def _on_record(self, on: bool) -> None:
        self.set_recording(on)
        self.recordToggled.emit(on)

    def _emit_run(self, approve: bool) -> None:
        if self.current_id():
            self.runRequested.emit(self.current_id(), approve)

    def _emit_move(self, delta: int) -> None:
        i = self.current_step()
        if self.current_id() and i >= 0:
            self.stepMoveRequested.emit(self.current_id(), i, i + delta)

    def _emit_id(self, signal: SignalInstance) -> None:
        if self.current_id():
            signal.emit(self.current_id())

    def _emit_restore(self) -> None:
        m = self.shown_version()
        if m is not None and self.current_id():
            self.restoreRequested.emit(self.current_id(), m.version)

    def _emit_undo(self) -> None:
        latest = self._macros.get(self.current_id())
        if latest is not None and latest.version > 1:
            self.restoreRequested.emit(latest.id, latest.version - 1)

    def _emit_step(self, signal: SignalInstance) -> None:
        i = self.current_step()
        if self.current_id() and i >= 0:
            signal.emit(self.current_id(), i)

    def _update(self) -> None:
        latest = self._macros.get(self.current_id())
        for b in (self.run, self.run_approve, self.run_on, self.edit, self.delete, self.export, self.complete):
            b.setEnabled(latest is not None)
        if latest is not None and self._versions_of != latest.id:
            self._versions_of = latest.id
            self._versions = []
            self.versions.blockSignals(True)
            self.versions.clear()
            self.versions.addItem(f"v{latest.version} · latest", latest.version)
            self.versions.blockSignals(False)
            self.versionsRequested.emit(latest.id)
        elif latest is not None and self.versions.findData(latest.version) < 0:
            self.versionsRequested.emit(latest.id)  # a new version was saved: list it
        m = self.shown_version()
        old = m is not None and latest is not None and m.version != latest.version
        self.restore.setEnabled(old)
        what = self._changes.get(m.version, "") if m is not None and self._versions_of == m.id else ""
        self.version_note.setText(f"v{m.version}: {_esc(what)}" if what and m is not None else "")
        self.version_note.setVisible(bool(what))
        self.undo.setEnabled(latest is not None and latest.version > 1 and not old)
        self.versions.setEnabled(latest is not None)
        keep = self.steps.currentRow()
        self.steps.clear()
        if m is None:
            self.details.setText("<i>Select a macro, or press Record and act on the mirror.</i>")
            self._update_step_buttons()
            return
        for n, step in enumerate(m.steps):
            healed = f" — healed: the model found “{step.healed.chose}”, you approved" if step.healed else ""
            self.steps.addItem(f"{n + 1}. {step.description or step.action.describe()}{healed}")
            if step.healed is not None:
                self.steps.item(self.steps.count() - 1).setToolTip(
                    f"The recording's clues did not find it ({step.healed.missed}); the model"
                    f"{' ' + step.healed.model if step.healed.model else ''} chose “{step.healed.chose}” "
                    "and you approved it")
        if 0 <= keep < self.steps.count():
            self.steps.setCurrentRow(keep)
        params = ", ".join(m.parameters) or "none"
        shown = " — an older version; Restore brings it back" if old else ""
        self.details.setText(f"<b>{_esc(m.name)}</b> (v{m.version}){shown} — {_esc(m.description)}"
                             f"<br>parameters: {params}")
        self._update_step_buttons()

    def _update_step_buttons(self) -> None:
        i = self.steps.currentRow()
        n = self.steps.count()
        latest = self._macros.get(self.current_id())
        shown = self.shown_version()
        editable = latest is not None and shown is not None and shown.version == latest.version
        chosen = 0 <= i < n and editable
        self.step_up.setEnabled(chosen and i > 0)
        self.step_down.setEnabled(chosen and i < n - 1)
        self.step_delete.setEnabled(chosen and n > 1)
        self.step_edit.setEnabled(chosen)
        self.step_redemo.setEnabled(chosen)

    def _on_edit(self) -> None:
        m = self._macros.get(self.current_id())
        if m is None:
            return
        self.editRequested.emit(m.id)
        dlg = MacroEditDialog(m, self)
        dlg.accepted.connect(lambda: self.macroEdited.emit(dlg.edited()))
        dlg.finished.connect(dlg.deleteLater)
        dlg.open()
        self._dialog = dlg


class ParametersDialog(QDialog):
    """Asks for the value of each parameter of a macro before it runs."""

    def __init__(self, macro: Macro, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Run “{macro.name}”")
        self.fields: dict[str, QLineEdit] = {}
        form = QFormLayout(self)
        form.addRow(QLabel("This macro types text that changes from run to run. Fill in:"))
        for name in macro.parameters:
            edit = QLineEdit()
            edit.setPlaceholderText(f"value for {{{name}}}")
            self.fields[name] = edit
            form.addRow(name, edit)
        self.error = QLabel("")
        self.error.setStyleSheet("color:#b00020")
        form.addRow(self.error)
        form.addRow(ok_cancel(self, self._ok, "Run"))

    def values(self) -> dict[str, str]:
        return {name: edit.text() for name, edit in self.fields.items()}

    def _ok(self) -> None:
        missing = [n for n, v in self.values().items() if not v.strip()]
        if missing:
            self.error.setText("Fill in: " + ", ".join(missing))
            self.fields[missing[0]].setFocus()
            return
        self.accept()


class RunOnDialog(QDialog):
    """Which virtual phone to replay on: profile, theme, language, layout, and with approval."""

    def __init__(self, macro: Macro, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Run “{macro.name}” on a virtual phone")
        self.profile = QComboBox()
        self.theme = QComboBox()
        self.language = QComboBox()
        self.layout_choice = QComboBox()
        for combo, values in ((self.profile, VIRTUAL_PROFILES), (self.theme, VIRTUAL_THEMES),
                              (self.language, VIRTUAL_LANGUAGES), (self.layout_choice, VIRTUAL_LAYOUTS)):
            for v in values:
                combo.addItem(v, v)
        self.approve = QCheckBox("Approve each step")
        form = QFormLayout(self)
        form.addRow(QLabel("The window switches to this virtual phone and replays the macro there."))
        form.addRow("Size", self.profile)
        form.addRow("Theme", self.theme)
        form.addRow("Language", self.language)
        form.addRow("Layout", self.layout_choice)
        form.addRow(self.approve)
        form.addRow(ok_cancel(self, self.accept, "Run"))

    def choice(self) -> tuple[str, str, str, bool, str]:
        return (self.profile.currentData(), self.theme.currentData(), self.language.currentData(),
                self.approve.isChecked(), self.layout_choice.currentData())


#: How a step of a proposed completion is shown: kept (recorded), added by the map, added and sensitive.
COMPLETION_ROWS = {"kept": ("mdi6.record-circle-outline", "#757575"), "added": ("mdi6.map-marker-path", "#1565c0"),
                   "sensitive": ("mdi6.alert", "#e65100")}


class CompleteFromMapDialog(QDialog):
    """The steps the app map proposes to complete a macro, for approval before they are saved.

    The goal can be changed and asked again (``proposeRequested``); Save (``accepted``) is
    possible only while a proposal is shown.  Sensitive steps are marked: a replay asks
    before them."""

    proposeRequested = Signal(str)  # the goal

    def __init__(self, name: str, goal: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Complete “{name}” from the app map")
        self.goal = QLineEdit(goal)
        self.goal.setPlaceholderText("what the macro is for, e.g. Turn on dark theme")
        self.ask = button("mdi6.map-search", "Find steps", "Ask the app map again for this goal")
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.steps = QListWidget()
        self.steps.setWordWrap(True)
        self.steps.setToolTip("The macro as it would be saved: recorded steps, then the map's (marked)")
        self.box = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.save = self.box.button(QDialogButtonBox.StandardButton.Save)
        self.save.setEnabled(False)
        row = QHBoxLayout()
        row.addWidget(QLabel("Goal"))
        row.addWidget(self.goal, 1)
        row.addWidget(self.ask)
        lay = QVBoxLayout(self)
        lay.addLayout(row)
        lay.addWidget(self.status)
        lay.addWidget(self.steps, 1)
        lay.addWidget(self.box)
        self.ask.clicked.connect(self._ask)
        self.goal.returnPressed.connect(self._ask)
        self.box.accepted.connect(self.accept)
        self.box.rejected.connect(self.reject)
        self.resize(520, 420)

    def goal_text(self) -> str:
        return self.goal.text().strip()

    def busy(self) -> None:
        """A proposal is being worked out."""
        self.save.setEnabled(False)
        self.ask.setEnabled(False)
        self.steps.clear()
        self.status.setStyleSheet("")
        self.status.setText("<i>Asking the app map…</i>")

    def show_proposal(self, summary: str, rows: list[tuple[str, str]], version: int) -> None:
        """``rows``: (kind, words) per step of the completed macro, kind as in ``COMPLETION_ROWS``."""
        self.ask.setEnabled(True)
        self.status.setStyleSheet("")
        self.status.setText(_esc(summary))
        self.steps.clear()
        for kind, words in rows:
            name, colour = COMPLETION_ROWS.get(kind, COMPLETION_ROWS["added"])
            item = QListWidgetItem(icon(name, colour), words)
            if kind == "sensitive":
                item.setToolTip("Sensitive: a replay stops and asks before this step")
            self.steps.addItem(item)
        self.save.setText(f"Save as v{version}")
        self.save.setEnabled(True)

    def show_error(self, message: str) -> None:
        self.ask.setEnabled(True)
        self.save.setEnabled(False)
        self.steps.clear()
        self.status.setStyleSheet("color:#b00020")
        self.status.setText(_esc(message))

    def rows(self) -> list[str]:
        return [self.steps.item(i).text() for i in range(self.steps.count())]

    def _ask(self) -> None:
        if self.goal_text() and self.ask.isEnabled():
            self.proposeRequested.emit(self.goal_text())


class StartWarningDialog(QDialog):
    """Saving a recording that depends on where an app was left: begin it from a known
    state instead (the app opened fresh, or the home screen) and record again, or keep it."""

    chosen = Signal(str)  # "fresh", "home" or "keep"

    def __init__(self, message: str, app: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("This recording depends on where an app was left")
        text = QLabel(f"{_esc(message)}<br><br>Begin the macro from a known state, so every phone starts the "
                      "same way? The phone is put in that state and you record the steps again from there.")
        text.setWordWrap(True)
        self.fresh = button("mdi6.restart", f"Open {app} fresh, record again",
                            f"The macro begins by opening {app} on its first screen, wherever it was left")
        self.home = button("mdi6.home", "Go home first, record again", "The macro begins on the home screen")
        self.keep = QPushButton("Save as recorded")
        lay = QVBoxLayout(self)
        lay.addWidget(text)
        for b in (self.fresh, self.home, self.keep):
            lay.addWidget(b)
        self.fresh.clicked.connect(lambda: self._choose("fresh"))
        self.home.clicked.connect(lambda: self._choose("home"))
        self.keep.clicked.connect(lambda: self._choose("keep"))
        self.fresh.setDefault(True)

    def _choose(self, what: str) -> None:
        self.chosen.emit(what)
        self.accept()

    def reject(self) -> None:  # Escape keeps the recording as it is: nothing is lost
        self.chosen.emit("keep")
        super().reject()


class MacroEditDialog(QDialog):
    """Edit a macro's name, description and parameter names."""

    def __init__(self, macro: Macro, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Edit macro — {macro.name}")
        self._macro = macro
        self.name = QLineEdit(macro.name)
        self.description = QPlainTextEdit(macro.description)
        self.description.setMaximumHeight(80)
        self.parameters = QLineEdit(", ".join(macro.parameters))
        self.parameters.setPlaceholderText("comma-separated, used as {name} in typed text")
        self.error = QLabel("")
        self.error.setStyleSheet("color:#b00020")
        form = QFormLayout(self)
        form.addRow("Name", self.name)
        form.addRow("Description", self.description)
        form.addRow("Parameters", self.parameters)
        form.addRow(self.error)
        form.addRow(ok_cancel(self, self._ok))

    def edited(self) -> Macro:
        params = tuple(p.strip() for p in self.parameters.text().split(",") if p.strip())
        return replace(
            self._macro,
            name=self.name.text().strip(),
            description=self.description.toPlainText().strip(),
            parameters=params,
            version=self._macro.version + 1,
        )

    def _ok(self) -> None:
        try:
            self.edited()
        except ValueError as exc:
            self.error.setText(str(exc))
            return
        self.accept()


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
