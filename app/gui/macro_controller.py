"""Macros from the window: record the user's gestures on the mirror as semantic steps
(``agent.macros.recorder``), save / list / edit / import / export them in the database,
and replay them (``agent.macros.replay``) with or without approving each step.

Recording and replay run on worker threads: every gesture is executed on the phone
through the device's serial executor and observed (screenshot + parse) before and after.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.types import Action, Decision, DecisionKind, Macro, Proposal
from app.gui.workers import Failure, GeneratorDriver, needs_decision
from widgets.notifications import Level
from widgets.screen_view import ViewMode

if TYPE_CHECKING:
    from app.gui.window import MainWindow

log = logging.getLogger(__name__)


class MacroController:
    def __init__(self, window: MainWindow) -> None:
        self.w = window
        self.recorder: Any = None
        self._last_obs: Any = None
        self.driver: GeneratorDriver | None = None
        self.result: Any = None
        self.demonstrating = False
        self.waiting_event: Any = None
        p = window.macro_panel
        p.recordToggled.connect(self.toggle_recording)
        p.runRequested.connect(self.run)
        p.macroEdited.connect(self.save)
        p.deleteRequested.connect(lambda _id: self.w.notify(Level.INFO, "Old versions are kept; deleting is not offered."))
        p.importRequested.connect(self.import_dialog)
        p.exportRequested.connect(self.export_dialog)
        window.view.actionDemonstrated.connect(self._on_gesture)
        window.decision_bar.decided.connect(self._on_decided)
        window.decision_bar.editRequested.connect(self._on_edit)
        window.decision_bar.demonstrateRequested.connect(self._on_demonstrate)

    @property
    def active(self) -> bool:
        return self.driver is not None and self.driver.running

    # ---- library ------------------------------------------------------------------------
    def refresh(self) -> None:
        def load() -> list[Macro]:
            store = self.w.store()
            return [store.load_macro(row["id"]) for row in store.list_macros()]

        self.w.misc.submit(load, on_done=self.w.macro_panel.set_macros,
                           on_error=lambda f: self.w.notify_failure("Could not read the macros", f))

    def save(self, macro: Macro) -> None:
        self.w.misc.submit(lambda: self.w.store().save_macro(macro),
                           on_done=lambda m: (self.w.notify(Level.INFO, f"Saved macro “{m.name}” (v{m.version})."),
                                              self.refresh()),
                           on_error=lambda f: self.w.notify_failure("Could not save the macro", f))

    def import_dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getOpenFileName(self.w, "Import a macro", "", "Tapwise macro (*.json)")
        if path:
            self.import_file(Path(path))

    def import_file(self, path: Path) -> None:
        from agent.macros.io import import_json

        self.w.misc.submit(lambda: self.w.store().save_macro(import_json(path.read_text(encoding="utf-8"),
                                                                         source=path.name)),
                           on_done=lambda m: (self.w.notify(Level.INFO, f"Imported macro “{m.name}”."), self.refresh()),
                           on_error=lambda f: self.w.notify_failure(f"Could not import {path.name}", f))

    def export_dialog(self, macro_id: str) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _ = QFileDialog.getSaveFileName(self.w, "Export the macro", "macro.json", "Tapwise macro (*.json)")
        if path:
            self.export_file(macro_id, Path(path))

    def export_file(self, macro_id: str, path: Path) -> None:
        from agent.macros.io import export_json

        def write() -> Path:
            path.write_text(export_json(self.w.store().load_macro(macro_id)), encoding="utf-8")
            return path

        self.w.misc.submit(write, on_done=lambda p: self.w.notify(Level.INFO, f"Macro exported to {p}"),
                           on_error=lambda f: self.w.notify_failure("Export failed", f))

    # ---- observing the phone (worker threads only) ------------------------------------------
    def observe(self) -> Any:
        from agent.macros.recorder import Observation

        device = self.w.agent_device()
        screen = device.screenshot(with_hierarchy=True)
        parse = self.w.parse_screen(screen)
        return Observation.of(parse, screen, screen.foreground_package)

    # ---- recording --------------------------------------------------------------------------
    def toggle_recording(self, on: bool) -> None:
        w = self.w
        if on:
            if w.device is None or (w.run is not None and w.run.active) or self.active:
                w.notify(Level.WARNING, "Connect a phone and stop any running task before recording.")
                w.macro_panel.set_recording(False)
                return
            from agent.macros.recorder import Recorder

            self.recorder = Recorder()
            self._last_obs = None
            w.show_live()
            w.view.set_mode(ViewMode.DEMONSTRATE)
            w.notify(Level.INFO, "Recording: tap, hold or drag on the mirror; each gesture becomes a step.")
            return
        recorder, self.recorder = self.recorder, None
        if w.view.mode is ViewMode.DEMONSTRATE and not self.demonstrating:
            w.view.set_mode(ViewMode.INSPECT)
        if recorder is None or not recorder.steps:
            w.notify(Level.INFO, "Recording stopped: no steps were recorded.")
            return
        from PySide6.QtWidgets import QInputDialog

        name, ok = QInputDialog.getText(w, "Save macro", "Name of the new macro:")
        if ok and name.strip():
            self.save(recorder.build(name.strip()))

    def _on_gesture(self, action: Action) -> None:
        if self.demonstrating:
            self._answer(Decision(DecisionKind.DEMONSTRATE, action=action))
            return
        if self.recorder is None:
            return
        recorder = self.recorder
        previous = self._last_obs

        def record() -> tuple[int, Any]:
            from agent.execute import execute

            before = previous or self.observe()
            recorder.record(action, before)
            execute(action, self.w.agent_device())
            after = self.observe()
            recorder.observe_after(after)
            return len(recorder.steps), after

        def done(result: tuple[int, Any]) -> None:
            count, after = result
            self._last_obs = after
            self.w.macro_panel.set_recording(self.recorder is not None, count)

        self.w.busy("Recording the step…")
        self.w.misc.submit(record, on_done=lambda r: (self.w.busy(""), done(r)),
                           on_error=lambda f: (self.w.busy(""), self.w.notify_failure("The step was not recorded", f)))

    # ---- replay ----------------------------------------------------------------------------
    def run(self, macro_id: str, approve_each: bool) -> None:
        w = self.w
        if w.device is None or self.active or (w.run is not None and w.run.active) or self.recorder is not None:
            w.notify(Level.WARNING, "Connect a phone, and stop any task or recording, before running a macro.")
            return

        def prepare() -> Any:
            from agent.macros.replay import Replayer

            macro = w.store().load_macro(macro_id)
            params: dict[str, str] = {}
            if macro.parameters:
                raise ValueError(f"this macro needs parameters ({', '.join(macro.parameters)}); "
                                 "run it from the command line with --param NAME=VALUE")
            replayer = Replayer(w.agent_device(), self.observe, approve_each=approve_each)
            return replayer.run(macro, params)

        w.misc.submit(prepare, on_done=self._begin, on_error=lambda f: w.notify_failure("Could not run the macro", f))

    def _begin(self, gen: Any) -> None:
        self.result = None
        self.driver = GeneratorDriver(gen, self.w.poster, self._on_event, self._on_finished, self._on_error,
                                      name="macro")
        self.w.busy("Running macro…")
        self.driver.start()

    def _on_event(self, event: Any) -> None:
        w = self.w
        name = type(event).__name__
        if name == "NeedApproval":
            self.waiting_event = event
            proposal = Proposal(action=event.action, rationale=f"Macro step {event.index + 1}: {event.step.description}",
                                evidence=(f"re-found by {event.match.level.value} (score {event.match.score:.2f}): "
                                          f"{event.match.evidence}",),
                                planner="macro")
            w.proposal_card.set_proposal(proposal)
            w.view.set_proposal(event.action)
            w.decision_bar.set_enabled(True)
        elif name == "NeedDemonstration":
            self.waiting_event = event
            w.notify(Level.WARNING, f"Macro step {event.index + 1} needs you: {getattr(event, 'reason', '')}",
                     "Show the step on the mirror (tap, hold or drag), or Abort.")
            self._on_demonstrate(force=True)
        elif name == "AppMissing":
            w.notify(Level.ERROR, event.message)
        elif needs_decision(event):
            self.waiting_event = event

    def _answer(self, answer: Decision) -> None:
        if self.driver is None or not self.driver.waiting:
            return
        self.waiting_event = None
        self.demonstrating = False
        self.w.decision_bar.set_enabled(False)
        self.w.view.set_proposal(None)
        if self.w.view.mode is ViewMode.DEMONSTRATE:
            self.w.view.set_mode(ViewMode.INSPECT)
        self.driver.decide(answer)

    def _on_decided(self, decision: Decision) -> None:
        if self.active:
            self._answer(decision)

    def _on_edit(self) -> None:
        if not self.active or self.waiting_event is None:
            return
        action = getattr(self.waiting_event, "action", None)
        self.w.open_action_editor(action, lambda a: self._answer(Decision(DecisionKind.EDIT, action=a)))

    def _on_demonstrate(self, force: bool = False) -> None:
        if not (self.active or force) or self.waiting_event is None:
            return
        self.demonstrating = True
        self.w.show_live()
        self.w.view.set_mode(ViewMode.DEMONSTRATE)

    def _on_finished(self, result: Any) -> None:
        self.driver = None
        self.result = result
        self.w.busy("")
        self.w.decision_bar.set_enabled(False)
        status = getattr(result, "status", "done")
        self.w.notify(Level.INFO, f"Macro finished: {status}.")
        macro = getattr(result, "macro", None)
        if macro is not None and getattr(result, "repaired", False):
            self.save(macro)

    def _on_error(self, failure: Failure) -> None:
        self.driver = None
        self.w.busy("")
        self.w.decision_bar.set_enabled(False)
        self.w.notify_failure("The macro stopped", failure)

    def shutdown(self, timeout: float = 10.0) -> None:
        driver = self.driver
        if driver is not None:
            driver.stop()
            driver.join(timeout)
