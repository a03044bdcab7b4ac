"""The macro library from the window: list, save (a saved recording also becomes a
demonstration in the task repository), show and restore versions, import and export
macros, edit single steps (``agent.macros.editing``: move, delete, replace the action)
and "Complete from map" (``agent.macros.complete``: the steps the stored app maps know
from where a macro stops to its goal, shown for approval, saved as the next version).

``MacroLibraryActions`` is the base of ``MacroController``; it neither records nor
replays.  Store access runs on the session's worker.  Never imports the window.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.macros.types import Macro
from agent.types import Action
from app.gui.demonstrate import Demonstration
from app.gui.session import Session, Workbench
from app.gui.workers import Failure, GeneratorDriver
from widgets.notifications import Level

if TYPE_CHECKING:
    from agent.macros.complete import Completion

log = logging.getLogger(__name__)


def learn_demonstration(store: Any, macro: Macro) -> None:
    """Keep a recorded macro as a task–solution example (worker thread; best effort)."""
    from app.compose import knowledge_for

    knowledge = knowledge_for(store)
    if knowledge is None:
        return
    try:
        knowledge.learn_from_demonstration(macro, macro.description or macro.name)
    except Exception:  # the macro is saved either way
        log.warning("could not keep the macro as a demonstration", exc_info=True)


class MacroLibraryActions:
    """Saving, listing, versions, import / export, step edits and completion of macros."""

    ui: Workbench
    session: Session
    driver: GeneratorDriver | None
    dialog: Any  # the open dialog (parameters, run-on, start warning, completion)
    completion: Completion | None  # the completion the open dialog shows
    _demo: Demonstration

    @property
    def active(self) -> bool:
        return self.driver is not None and self.driver.running

    @property
    def demonstrating(self) -> bool:
        return self._demo.active

    def _dialog_closed(self, dlg: Any) -> None:
        if self.dialog is dlg:
            self.dialog = None
        dlg.deleteLater()

    # ---- library ------------------------------------------------------------------------
    def refresh(self) -> None:
        def load() -> list[Macro]:
            store = self.session.store()
            return [store.load_macro(row["id"]) for row in store.list_macros()]

        self.session.misc.submit(load, on_done=self.ui.macro_panel.set_macros,
                                 on_error=lambda f: self.ui.notify_failure("Could not read the macros", f))

    def load_versions(self, macro_id: str) -> None:
        """Every saved version of the macro, with what each one changed (worker thread)."""
        from agent.macros.diff import summarize

        def load() -> list[tuple[Macro, str]]:
            store = self.session.store()
            versions = [store.load_macro(macro_id, v) for v in sorted(store.macro_versions(macro_id))]
            return [(m, summarize(prev, m)) for prev, m in zip([None, *versions], versions, strict=False)]

        self.session.misc.submit(load, on_done=lambda rows: self.ui.macro_panel.set_versions(macro_id, rows),
                                 on_error=lambda f: self.ui.notify_failure("Could not read the macro's versions", f))

    def restore(self, macro_id: str, version: int) -> None:
        """Bring back ``version``: saved as the newest version, so nothing is lost."""
        def load() -> Macro:
            return self.session.store().load_macro(macro_id, version)

        def loaded(old: Macro) -> None:
            self.save(old, note=f"v{version} is back")

        self.session.misc.submit(load, on_done=loaded,
                                 on_error=lambda f: self.ui.notify_failure("Could not restore the version", f))

    def save(self, macro: Macro, *, learn: bool = False, note: str = "") -> None:
        def write() -> Macro:
            store = self.session.store()
            saved = store.save_macro(macro)
            if learn:
                learn_demonstration(store, saved)
            return saved

        def saved(m: Macro) -> None:
            undo = f" Undo brings back v{m.version - 1}." if m.version > 1 else ""
            said = f"{note}: saved" if note else "Saved"
            self.ui.notify(Level.INFO, f"{said} macro “{m.name}” as v{m.version}.{undo}", key="macro-saved")
            self.refresh()
            self.ui.macro_panel.select(m.id)
            if learn:
                self.ui.knowledge_changed()

        self.session.misc.submit(write, on_done=saved,
                                 on_error=lambda f: self.ui.notify_failure("Could not save the macro", f))

    def import_dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getOpenFileName(self.ui.macro_panel, "Import a macro", "", "Tapwise macro (*.json)")
        if path:
            self.import_file(Path(path))

    def import_file(self, path: Path) -> None:
        from agent.macros.io import import_json

        def imported(m: Macro) -> None:
            self.ui.notify(Level.INFO, f"Imported macro “{m.name}”.")
            self.refresh()

        self.session.misc.submit(
            lambda: self.session.store().save_macro(import_json(path.read_text(encoding="utf-8"), source=path.name)),
            on_done=imported, on_error=lambda f: self.ui.notify_failure(f"Could not import {path.name}", f))

    def export_dialog(self, macro_id: str) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getSaveFileName(self.ui.macro_panel, "Export the macro", "macro.json",
                                              "Tapwise macro (*.json)")
        if path:
            self.export_file(macro_id, Path(path))

    def export_file(self, macro_id: str, path: Path) -> None:
        from agent.macros.io import export_json

        def write() -> Path:
            path.write_text(export_json(self.session.store().load_macro(macro_id)), encoding="utf-8")
            return path

        self.session.misc.submit(write, on_done=lambda p: self.ui.notify(Level.INFO, f"Macro exported to {p}"),
                                 on_error=lambda f: self.ui.notify_failure("Export failed", f))

    # ---- completing from the app map -----------------------------------------------------------
    def complete_dialog(self, macro_id: str) -> None:
        """Show what the app map would add to the macro; Save stores it as the next version."""
        from widgets.macro_panel import CompleteFromMapDialog

        macro = self.ui.macro_panel.macro(macro_id)
        if macro is None:
            return
        dlg = CompleteFromMapDialog(macro.name, macro.description or macro.name, self.ui.macro_panel)
        dlg.proposeRequested.connect(lambda goal: self.propose_completion(macro_id, goal, dlg))
        dlg.accepted.connect(lambda: self._save_completion(dlg))
        dlg.finished.connect(lambda _r: self._dialog_closed(dlg))
        self.dialog = dlg
        self.completion = None
        dlg.open()
        self.propose_completion(macro_id, dlg.goal_text(), dlg)

    def propose_completion(self, macro_id: str, goal: str, dlg: Any) -> None:
        """Ask the stored maps (worker thread) and show the answer in ``dlg``."""
        from agent.macros.complete import CompletionError

        session = self.session

        def work() -> Completion:
            from agent.knowledge.guide import AppMaps
            from agent.knowledge.map_language import LanguageMaps
            from agent.macros.complete import complete
            from app.knowledge_store import SqliteKnowledgeStore

            store = session.store()
            maps = SqliteKnowledgeStore(store)
            language = session.maps_language  # the maps of the language the phone shows
            return complete(store.load_macro(macro_id),
                            AppMaps(maps if language is None else LanguageMaps(maps, language)).all(), goal)

        def done(c: Completion) -> None:
            if self.dialog is not dlg:
                return
            self.completion = c
            kept = len(c.macro.steps) - len(c.added)
            rows = [("kept", f"{n}. {s.description or s.action.describe()}") for n, s in enumerate(c.macro.steps[:kept], 1)]
            rows += [("sensitive" if a.sensitive else "added", f"{kept + n}. {a.step.description}")
                     for n, a in enumerate(c.added, 1)]
            dlg.show_proposal(c.summary(), rows, c.macro.version)

        def failed(f: Failure) -> None:
            if self.dialog is not dlg:
                return
            self.completion = None
            known = isinstance(f.error, CompletionError)
            dlg.show_error(f.message if known else f"Could not ask the app map: {f.message}")
            if not known:
                log.warning("completing a macro failed:\n%s", f.detail)

        dlg.busy()
        session.misc.submit(work, on_done=done, on_error=failed)

    def _save_completion(self, dlg: Any) -> None:
        c = self.completion
        self.completion = None
        if c is not None and dlg.result():
            self.save(c.macro, note="Completed from the app map")

    # ---- editing steps ------------------------------------------------------------------------
    def edit_step(self, macro_id: str, how: str, index: int, to: int = 0) -> None:
        """Move or delete one step; the edited macro is saved as the next version."""
        from agent.macros import editing

        macro = self.ui.macro_panel.macro(macro_id)
        if macro is None:
            return
        try:
            edited = editing.move_step(macro, index, to) if how == "move" else editing.delete_step(macro, index)
        except editing.MacroEditError as exc:
            self.ui.notify(Level.WARNING, str(exc), key="macro-edit")
            return
        self.save(edited, note=f"Step {index + 1} {'moved' if how == 'move' else 'deleted'}")
        if how == "move":
            self.ui.macro_panel.steps.setCurrentRow(to)

    def edit_step_action(self, macro_id: str, index: int) -> None:
        """Change one step's action in the action editor (type, point, text…)."""
        macro = self.ui.macro_panel.macro(macro_id)
        if macro is None or not 0 <= index < len(macro.steps):
            return
        step = macro.steps[index]
        self.ui.open_action_editor(step.action, lambda action: self._replace_action(macro, index, action))

    def _replace_action(self, macro: Macro, index: int, action: Action) -> None:
        from agent.macros.editing import replace_step

        step = macro.steps[index]
        same_kind = action.type is step.action.type
        # a new kind of action keeps no old target or words: they described the old one
        new = replace(step, action=action, target=action.target if not same_kind or action.target else step.target,
                      description=step.description if same_kind else action.describe(),
                      expect_checked=step.expect_checked if same_kind else None)
        self.save(replace_step(macro, index, new), note=f"Step {index + 1} edited")
