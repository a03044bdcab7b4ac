"""Recording macros from the window: each gesture on the mirror becomes a semantic step
(``agent.macros.recorder``), executed on the phone and observed before and after; a
recording that depends on where an app was left offers a known start
(``agent.macros.start``); "show again" replaces one step of a saved macro by the next
gesture.  ``MacroRecording`` sits between the library and the replay in
``MacroController``'s bases; the phone is observed on worker threads only.  Never imports
the window.
"""

from __future__ import annotations

from typing import Any

from agent.macros.types import Macro, MacroStep
from agent.types import Action
from app.gui.macro_library import MacroLibraryActions
from app.gui.workers import Failure
from widgets.notifications import Level
from widgets.screen_view import ViewMode


class MacroRecording(MacroLibraryActions):
    """Recording a macro, and showing one of its steps again."""

    recorder: Any
    _last_obs: Any
    _redemonstrating: bool
    _rec_first: Any  # the screen the recording started on
    _rec_afters: list[Any]  # the screen after each recorded step
    _redemo: tuple[Macro, int] | None  # a step being shown again


    def redemonstrate_step(self, macro_id: str, index: int) -> None:
        """The next gesture on the mirror replaces step ``index`` (recorded on the live screen)."""
        macro = self.ui.macro_panel.macro(macro_id)
        if macro is None or self.session.device is None or self.active or self.recorder is not None:
            self.ui.notify(Level.WARNING, "Connect a phone and stop any replay or recording first.", key="macro-busy")
            return
        self._redemo = (macro, index)
        self._redemonstrating = True
        self.ui.show_live()
        self.ui.view.set_mode(ViewMode.DEMONSTRATE)
        self.ui.notify(Level.INFO, f"Show step {index + 1} again on the mirror (tap, hold, drag or type).",
                       key="macro-redemo")

    def _record_replacement(self, action: Action) -> None:
        assert self._redemo is not None
        macro, index = self._redemo
        self._redemo = None
        self._redemonstrating = False
        self.ui.notifications.resolve("macro-redemo")
        if self.ui.view.mode is ViewMode.DEMONSTRATE:
            self.ui.view.set_mode(ViewMode.INSPECT)

        def record() -> Macro:
            from agent.execute import execute
            from agent.macros.editing import replace_step
            from agent.macros.recorder import make_step

            before = self.observe()
            execute(action, self.session.agent_device())
            after = self.observe()
            step: MacroStep = make_step(action, before, after)
            return replace_step(macro, index, step)

        def recorded(m: Macro) -> None:
            self.ui.busy("")
            self.save(m, note=f"Step {index + 1} replaced by what you showed")

        self.ui.busy("Recording the step…")
        self.session.misc.submit(record, on_done=recorded, on_error=self._record_failed)

    def _record_failed(self, failure: Failure) -> None:
        self.ui.busy("")
        self.ui.notify_failure("The step was not recorded", failure)

    # ---- observing the phone (worker threads only) ------------------------------------------
    def observe(self) -> Any:
        from agent.macros.recorder import Observation

        device = self.session.agent_device()
        screen = device.screenshot(with_hierarchy=True)
        parse = self.session.parse_screen(screen)
        return Observation.of(parse, screen, screen.foreground_package)

    # ---- recording --------------------------------------------------------------------------
    def toggle_recording(self, on: bool) -> None:
        ui = self.ui
        if on:
            if self.session.device is None or self.ui_busy():
                ui.notify(Level.WARNING, "Connect a phone and stop any running task before recording.",
                          key="macro-busy")
                ui.macro_panel.set_recording(False)
                return
            from agent.macros.recorder import Recorder

            self.recorder = Recorder(secret_name=self._secret_namer())
            self._last_obs = None
            self._rec_first = None
            self._rec_afters = []
            ui.show_live()
            ui.view.set_mode(ViewMode.DEMONSTRATE)
            ui.notify(Level.INFO, "Recording: tap, hold or drag on the mirror; each gesture becomes a step. "
                      "Home and Back on the navigation bar are recorded as keys.", key="macro-recording")
            return
        recorder, self.recorder = self.recorder, None
        ui.notifications.resolve("macro-recording")
        if ui.view.mode is ViewMode.DEMONSTRATE and not (self.demonstrating or self._redemonstrating):
            ui.view.set_mode(ViewMode.INSPECT)
        if recorder is None or not recorder.steps:
            ui.notify(Level.INFO, "Recording stopped: no steps were recorded.", key="macro-recording")
            return
        from agent.macros.start import app_label, start_problem

        device = self.session.device
        problem = start_problem(self._rec_first, recorder.steps, self._rec_afters,
                                label_of=lambda package: app_label(device, package))
        if problem is None:
            self._name_and_save(recorder)
            return
        self._warn_start(recorder, problem.app, problem.message)

    def _name_and_save(self, recorder: Any) -> None:
        from PySide6.QtWidgets import QInputDialog

        name, ok = QInputDialog.getText(self.ui.macro_panel, "Save macro", "Name of the new macro:")
        if ok and name.strip():
            self.save(recorder.build(name.strip()), learn=True)

    def _warn_start(self, recorder: Any, app: str, message: str) -> None:
        """The recording depends on where an app was left: offer a known start."""
        from agent.macros.start import app_label
        from widgets.macro_panel import StartWarningDialog

        device = self.session.device
        label = app_label(device, app) if device is not None else app
        dlg = StartWarningDialog(message, label, self.ui.macro_panel)
        dlg.chosen.connect(lambda what: self._start_chosen(what, recorder, app, label))
        dlg.finished.connect(lambda _r: self._dialog_closed(dlg))
        self.dialog = dlg
        dlg.open()

    def _start_chosen(self, what: str, recorder: Any, app: str, label: str) -> None:
        if what == "keep":
            self._name_and_save(recorder)
            return
        from agent.macros.start import fresh_launch_step, home_step, unwind_to_first_screen

        fresh = what == "fresh"
        step = fresh_launch_step(app, label) if fresh else home_step()

        def reach() -> Any:
            from agent.device import Key

            device = self.session.agent_device()
            if fresh:
                unwind_to_first_screen(device, app, lambda: device.foreground()[0])
            else:
                device.key(Key.HOME)
            return self.observe()

        def reached(obs: Any) -> None:
            from agent.macros.recorder import Recorder

            self.ui.busy("")
            again = Recorder(secret_name=self._secret_namer())
            again.begin_with(step, app)
            self.recorder = again
            self._last_obs = obs
            self._rec_first = None
            self._rec_afters = [None]
            self.ui.macro_panel.set_recording(True, 1)
            self.ui.show_live()
            self.ui.view.set_mode(ViewMode.DEMONSTRATE)
            where = f"{label} on its first screen" if fresh else "the home screen"
            self.ui.notify(Level.INFO, f"Recording again from {where}: step 1 is “{step.description}”. "
                           "Do the steps on the mirror, then Stop.", key="macro-recording")

        self.ui.busy("Putting the phone in the known state…")
        self.session.misc.submit(reach, on_done=reached, on_error=self._record_failed)

    def _secret_namer(self) -> Any:
        """Typing into a password field while recording asks for the secret's name (``app.gui.guards``)."""
        from app.gui.guards import secret_namer

        return secret_namer(self.session.poster, lambda: self.ui.macro_panel)

    def ui_busy(self) -> bool:
        return self.ui.run_active() or self.active

    def _on_gesture(self, action: Action) -> None:
        if self._redemo is not None:
            self._record_replacement(action)
            return
        if self.recorder is None:  # a replay's demonstration is answered by ``Demonstration``
            return
        recorder = self.recorder
        previous = self._last_obs

        def record() -> tuple[int, Any, Any]:
            from agent.execute import execute

            before = previous or self.observe()
            step = recorder.record(action, before)
            execute(step.action, self.session.agent_device())  # a nav-bar tap runs as its key
            after = self.observe()
            recorder.observe_after(after)
            return len(recorder.steps), before, after

        def done(result: tuple[int, Any, Any]) -> None:
            self.ui.busy("")
            count, before, after = result
            if count == 1:
                self._rec_first = before  # where the recording starts
            self._rec_afters.append(after)
            self._last_obs = after
            self.ui.macro_panel.set_recording(self.recorder is not None, count)

        self.ui.busy("Recording the step…")
        self.session.misc.submit(record, on_done=done, on_error=self._record_failed)
