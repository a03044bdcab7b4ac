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
The library (``app.gui.macro_library``) and recording (``app.gui.macro_recording``) are
this controller's bases; this module is the replay.  Never imports the window.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent.events import Aborted, AwaitingDecision, ErrorEvent, Executed, Finished, Observed, Parsed, Rejected
from agent.explain import confidence_of
from agent.macros.types import Macro
from agent.types import Decision, DecisionKind, Step
from app.gui.demonstrate import Demonstration
from app.gui.macro_recording import MacroRecording
from app.gui.run_start import SessionParser
from app.gui.session import Session, Workbench
from app.gui.workers import Failure, GeneratorDriver
from widgets.notifications import Level
from widgets.proposal import MACRO_ADVICE

if TYPE_CHECKING:
    from agent.macros.complete import Completion
    from agent.macros.replay import NeedDemonstration, Replay, ReplayResult

log = logging.getLogger(__name__)


def is_replay_question(event: object) -> bool:
    """The replay (a run of the agent loop) waits for an answer after this event."""
    return isinstance(event, AwaitingDecision)


class MacroController(MacroRecording):
    """Macros from the window: the library and recording (the bases) and the replay."""

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
    def run_on_dialog(self, macro_id: str) -> None:
        """Pick a virtual phone (profile, theme, language, layout), switch to it and replay there."""
        from widgets.macro_panel import RunOnDialog

        macro = self.ui.macro_panel.macro(macro_id)
        if macro is None:
            return
        dlg = RunOnDialog(macro, self.ui.macro_panel)
        dlg.accepted.connect(lambda: self.run_on(macro_id, *dlg.choice()))
        dlg.finished.connect(lambda _r: self._dialog_closed(dlg))
        self.dialog = dlg
        dlg.open()

    def run_on(self, macro_id: str, profile: str, theme: str, lang: str, approve_each: bool = False,
               layout: str = "default") -> None:
        from app.gui.devices import virtual_choice

        if self.ui_busy() or self.recorder is not None:
            self.ui.notify(Level.WARNING, "Stop any task, replay or recording first.", key="macro-busy")
            return
        self._after_connect = lambda: self.run(macro_id, approve_each)
        self.ui.connect_device(virtual_choice(profile, theme, lang, layout))

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
            from app.compose import macro_healer

            # a step the recording cannot find again is healed by one model call, and asked
            replayer = Replayer(session.agent_device(), SessionParser(session), approve_each=approve_each,
                                healer=macro_healer(session.settings))
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
                from agent.cost import run_cost

                ui.timeline.set_section_title(self._section, f"macro — {status.value}: {note} · "
                                                             f"{run_cost(episode).describe()}")
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

