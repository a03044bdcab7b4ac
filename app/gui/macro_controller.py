"""Macros from the window: record the user's gestures on the mirror as semantic steps
(``agent.macros.recorder``), save / list / edit / import / export them in the database,
edit single steps (``agent.macros.editing``: move, delete, replace, show again), and
replay them with or without approving each step, asking for parameter values first,
on the connected phone or on a virtual phone of another profile, theme or language.  A
saved recording also becomes a demonstration in the task repository.  "Complete from
map" asks the stored app maps for the steps from where a macro stops to its goal
(``agent.macros.complete``), shows them for approval and saves them as the next version.

A replay is a run of the agent loop (``agent.macros.replay``: ``run_episode`` with the
macro's planner): its events are the runner's own (``agent.events``), its steps are
stored as an episode and shown on the step timeline, and a step that needs the user
offers only demonstrate, skip (Reject) or abort (``app.gui.demonstrate`` is shared with
the run controller).  Recording, editing, completing and replay run on worker threads.
Never imports the window.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.events import Aborted, AwaitingDecision, ErrorEvent, Executed, Finished, Observed, Parsed, Rejected
from agent.explain import confidence_of
from agent.types import Action, Decision, DecisionKind, Macro, MacroStep, Step
from app.gui.demonstrate import Demonstration
from app.gui.session import Session, Workbench
from app.gui.workers import Failure, GeneratorDriver
from vision.types import Screen, ScreenParse
from widgets.notifications import Level
from widgets.proposal import MACRO_ADVICE
from widgets.screen_view import ViewMode

if TYPE_CHECKING:
    from agent.macros.complete import Completion
    from agent.macros.replay import NeedDemonstration, Replay, ReplayResult

log = logging.getLogger(__name__)


def is_replay_question(event: object) -> bool:
    """The replay (a run of the agent loop) waits for an answer after this event."""
    return isinstance(event, AwaitingDecision)


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


class MacroController:
    def __init__(self, ui: Workbench) -> None:
        self.ui = ui
        self.session: Session = ui.session
        self.recorder: Any = None
        self._last_obs: Any = None
        self.driver: GeneratorDriver | None = None
        self.result: ReplayResult | None = None
        self.replay: Replay | None = None
        self.waiting_event: AwaitingDecision | None = None
        self._demo = Demonstration(ui, lambda a: self._answer(Decision(DecisionKind.DEMONSTRATE, action=a)))
        self._redemonstrating = False
        self._rec_first: Any = None  # the screen the recording started on
        self._rec_afters: list[Any] = []  # the screen after each recorded step
        self._cancel: Any = None
        self._frames: dict[int, Any] = {}  # the frame each replay step was observed on
        self._shown = 0  # reports already in the results list
        self._runs = 0
        self._section = ""
        self.dialog: Any = None  # the parameters / run-on dialog while open
        self._redemo: tuple[Macro, int] | None = None  # a step being shown again
        self._after_connect: Callable[[], None] | None = None
        self.completion: Completion | None = None  # the completion the open dialog shows
        p = ui.macro_panel
        p.delete.hide()  # the store keeps every macro version; no deletion yet
        p.recordToggled.connect(self.toggle_recording)
        p.runRequested.connect(self.run)
        p.runOnRequested.connect(self.run_on_dialog)
        p.macroEdited.connect(self.save)
        p.importRequested.connect(self.import_dialog)
        p.exportRequested.connect(self.export_dialog)
        p.stepMoveRequested.connect(lambda mid, i, to: self.edit_step(mid, "move", i, to))
        p.stepDeleteRequested.connect(lambda mid, i: self.edit_step(mid, "delete", i))
        p.stepEditRequested.connect(self.edit_step_action)
        p.stepRedemonstrateRequested.connect(self.redemonstrate_step)
        p.versionsRequested.connect(self.load_versions)
        p.restoreRequested.connect(self.restore)
        p.completeRequested.connect(self.complete_dialog)
        ui.view.actionDemonstrated.connect(self._on_gesture)

    @property
    def active(self) -> bool:
        return self.driver is not None and self.driver.running

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
            from agent.macros.complete import complete
            from app.knowledge_store import SqliteKnowledgeStore

            store = session.store()
            return complete(store.load_macro(macro_id), AppMaps(SqliteKnowledgeStore(store)).all(), goal)

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

            self.recorder = Recorder()
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
            again = Recorder()
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

    # ---- replay ----------------------------------------------------------------------------
    def run(self, macro_id: str, approve_each: bool) -> None:
        """Replay on the connected phone; a macro with parameters asks for their values first."""
        ui = self.ui
        if self.session.device is None or self.ui_busy() or self.recorder is not None:
            ui.notify(Level.WARNING, "Connect a phone, and stop any task or recording, before running a macro.",
                      key="macro-busy")
            return
        macro = ui.macro_panel.macro(macro_id)
        if macro is not None and macro.parameters:
            from widgets.macro_panel import ParametersDialog

            dlg = ParametersDialog(macro, ui.macro_panel)
            dlg.accepted.connect(lambda: self._start(macro_id, approve_each, dlg.values()))
            dlg.finished.connect(lambda _r: self._dialog_closed(dlg))
            self.dialog = dlg
            dlg.open()
            return
        self._start(macro_id, approve_each, {})

    def _dialog_closed(self, dlg: Any) -> None:
        if self.dialog is dlg:
            self.dialog = None
        dlg.deleteLater()

    def run_on_dialog(self, macro_id: str) -> None:
        """Pick a virtual phone (profile, theme, language), switch to it and replay there."""
        from widgets.macro_panel import RunOnDialog

        macro = self.ui.macro_panel.macro(macro_id)
        if macro is None:
            return
        dlg = RunOnDialog(macro, self.ui.macro_panel)
        dlg.accepted.connect(lambda: self.run_on(macro_id, *dlg.choice()))
        dlg.finished.connect(lambda _r: self._dialog_closed(dlg))
        self.dialog = dlg
        dlg.open()

    def run_on(self, macro_id: str, profile: str, theme: str, lang: str, approve_each: bool = False) -> None:
        from app.gui.devices import virtual_choice

        if self.ui_busy() or self.recorder is not None:
            self.ui.notify(Level.WARNING, "Stop any task, replay or recording first.", key="macro-busy")
            return
        self._after_connect = lambda: self.run(macro_id, approve_each)
        self.ui.connect_device(virtual_choice(profile, theme, lang))

    def device_ready(self) -> None:
        """The window connected a phone: a waiting "Run on…" goes ahead."""
        go, self._after_connect = self._after_connect, None
        if go is not None:
            go()

    def _start(self, macro_id: str, approve_each: bool, params: dict[str, str]) -> None:
        session = self.session

        def prepare() -> tuple[Macro, Replay]:
            from agent.llm.base import CancelToken
            from agent.macros.replay import Replayer

            macro = session.store().load_macro(macro_id)
            self._cancel = CancelToken()
            replayer = Replayer(session.agent_device(), _SessionParser(session), approve_each=approve_each)
            # MissingParameter says which value is missing; the run is stored like a task's
            return macro, replayer.start(macro, params, store=session.store(), cancel=self._cancel)

        session.misc.submit(prepare, on_done=lambda r: self._begin(*r),
                            on_error=lambda f: self.ui.notify_failure("Could not run the macro", f))

    def _begin(self, macro: Macro, replay: Replay) -> None:
        ui = self.ui
        self.result = None
        self.replay = replay
        self._shown = 0
        self._frames.clear()
        device = self.session.device
        where = device.info.model if device is not None else "the phone"
        ui.macro_panel.show_results(f"Replay of “{macro.name}” v{macro.version} on {where}", [])
        self._runs += 1
        self._section = f"macro:{self._runs}"
        ui.timeline.begin_section(self._section, f"▶ macro “{macro.name}” v{macro.version} — running")
        self.driver = GeneratorDriver(replay.events, self.session.poster, self._on_event, self._on_finished,
                                      self._on_error, name="macro", on_stop=self._stop_replay,
                                      needs_decision=is_replay_question)
        ui.busy("Running macro…")
        self.driver.start()

    def _stop_replay(self) -> None:
        if self._cancel is not None:
            self._cancel.cancel()

    # ---- the runner's events (GUI thread) -------------------------------------------------
    def _on_event(self, event: Any) -> None:
        """The replay speaks the agent loop's events; the same classes the run controller handles."""
        ui = self.ui
        match event:
            case Observed(step=index, screen=screen):
                self._frames[index] = screen
            case Parsed(parse=parse):
                self.session.live_parse = parse
            case AwaitingDecision() as ask:
                self._ask(ask)
            case Executed(record=record) | Rejected(record=record) | Aborted(record=record):
                self._add_step(record)
            case ErrorEvent(step=index, message=message, record=record):
                if record is not None:
                    self._add_step(record)
                ui.notify(Level.WARNING, f"The macro's step {index + 1} failed", message, key="macro-step-failed")
            case Finished(status=status, note=note, episode=episode):
                ui.timeline.set_section_title(self._section, f"macro — {status.value}: {note}")
                ui.episodes_panel.runStored.emit(self._section, episode)  # its frames, like an opened run's
            case _:
                log.debug("replay event not shown: %r", event)
        self._show_reports()

    def _ask(self, ask: AwaitingDecision) -> None:
        """A decision request: approve a step, or (needs you) demonstrate / skip / abort it."""
        ui = self.ui
        assert self.replay is not None
        self.waiting_event = ask
        question = self.replay.question(ask)
        ui.decisions.claim(self)
        if question is not None:
            # nothing to approve: only demonstrate the step, skip it (Reject) or abort
            bar, card = ui.decision_bar, ui.proposal_card
            bar.set_failed_step(True)
            bar.buttons[DecisionKind.EDIT].setEnabled(False)
            bar.feedback.setPlaceholderText("Reject skips this step")
            card.set_failed(question.reason, title=f"Macro step {question.index + 1} needs you", advice=MACRO_ADVICE)
            ui.view.set_proposal(None)
            ui.notify(Level.WARNING, f"Macro step {question.index + 1} needs you: {question.reason}",
                      "Show the step on the mirror (tap, hold or drag), Reject to skip it, or Abort.",
                      key="macro-needs-you")
            self.demonstrate()
            return
        ui.decision_bar.set_failed_step(False)
        ui.proposal_card.set_proposal(ask.proposal, confidence=confidence_of(ask.proposal))
        ui.view.set_proposal(ask.proposal.action)

    def _add_step(self, record: Step) -> None:
        shown = self._frames.get(record.index)
        self.ui.timeline.add_step(record, shown.image if shown is not None else None, section=self._section)

    def _show_reports(self) -> None:
        """Each settled macro step, in words, in the panel's results."""
        replay = self.replay
        if replay is None:
            return
        reports = replay.planner.reports
        for r in reports[self._shown:]:
            self.ui.macro_panel.add_result(r.ok, f"{r.index + 1}. {r.description} — {r.words}")
        self._shown = len(reports)

    def _answer(self, answer: Decision) -> None:
        if self.driver is None or not self.driver.waiting:
            return
        ui = self.ui
        self.waiting_event = None
        self._demo.stop()
        ui.notifications.resolve("macro-needs-you")
        ui.decisions.release(self)
        ui.decision_bar.set_failed_step(False)
        ui.proposal_card.set_proposal(None)
        ui.view.set_proposal(None)
        self.driver.decide(answer)

    # the decision router calls these while this replay holds the decision bar
    def decide(self, decision: Decision) -> None:
        self._answer(decision)

    def edit(self) -> None:
        event = self.waiting_event
        action = event.proposal.action if event is not None and self.needs_you is None else None
        self.ui.open_action_editor(action, lambda a: self._answer(Decision(DecisionKind.EDIT, action=a)))

    def demonstrate(self) -> None:
        if self.waiting_event is None:
            return
        self._demo.start()

    @property
    def demonstrating(self) -> bool:
        return self._demo.active

    @property
    def section(self) -> str:
        """The timeline section of the current (or last) replay."""
        return self._section

    @property
    def needs_you(self) -> NeedDemonstration | None:
        """The step the replay waits on the user for (None when it waits for an approval or not at all)."""
        if self.replay is None or self.waiting_event is None:
            return None
        return self.replay.question(self.waiting_event)

    def _on_finished(self, result: ReplayResult) -> None:
        self._show_reports()
        self.driver = None
        self.result = result
        ui = self.ui
        self._end_ui()
        ok = result.succeeded
        text = f"Macro {result.status}" + (f": {result.message}" if result.message else ".")
        ui.notify(Level.INFO if ok else Level.WARNING, text, key="macro-finished")
        ui.macro_panel.add_result(ok, text)
        ui.episodes_panel.request_refresh()
        if result.repaired:
            self.save(result.macro)

    def _on_error(self, failure: Failure) -> None:
        self.driver = None
        self._end_ui()
        self.ui.macro_panel.add_result(False, f"Stopped: {failure.message}")
        self.ui.notify_failure("The macro stopped", failure)

    def _end_ui(self) -> None:
        ui = self.ui
        ui.busy("")
        self.waiting_event = None
        self._demo.stop()
        ui.decisions.release(self)
        ui.decision_bar.set_failed_step(False)
        ui.proposal_card.set_proposal(None)
        ui.view.set_proposal(None)

    def shutdown(self, timeout: float = 10.0) -> None:
        driver = self.driver
        if driver is not None:
            driver.stop()
            driver.join(timeout)


class _SessionParser:
    """The session's screen parser, as the agent loop's parser (built on first use)."""

    def __init__(self, session: Session) -> None:
        self._s = session

    def parse(self, screen: Screen) -> ScreenParse:
        return self._s.parse_screen(screen)

