"""Automatic exploration: every app of the connected phone gets a map in the language the
phone shows, without the user asking.

When a phone is connected (and again after each task, and every ``recheck_ms`` while the
window is idle) the controller looks the phone over on its own worker thread
(``app.map_upkeep.survey``): an app with no map in the phone's language, a map of another
app version, one that does not say its language, or one left unfinished is explored, one
app at a time, while no task, replay or recording runs:

* **virtual phone**: on a second virtual phone of the same configuration
  (``phone.virtual.twin``: same size, theme, seed, apps, the language shown now), so the
  phone the user sees is never touched; where no twin can be made (a virtual phone
  started elsewhere), on the phone itself, pausing while the user works on the mirror;
* **real phone**: nothing is tapped before the user agrees: the window asks once per
  phone ("Explore N apps now?", with ``agent.knowledge.explore.RISKS``) and keeps the
  answer (``SqliteKnowledgeStore.explore_consent``); then on the phone itself, pausing
  while the user works on it.

Starting a task, a replay or a recording, exploring by hand, or a gesture on the mirror
(when exploring the user's phone) stops the current app at once (its map is kept and
carried on later); exploration resumes once the window has been idle for ``quiet_ms``.
Stop on the Knowledge tab ends it until the next phone; the setting
``agent.explore_automatically`` turns it off.  Progress shows on the Knowledge tab's map
view and in the status bar.  Device and database calls never run on the GUI thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QLabel, QMessageBox, QStatusBar

from agent.knowledge.explore import ExploreBudget, ExploreProgress
from agent.knowledge.map_plan import AppToExplore
from agent.llm.base import CancelToken
from app.gui.session import Session
from app.gui.workers import Failure, SerialExecutor
from app.map_upkeep import Survey, explore_one, survey

log = logging.getLogger(__name__)

#: Budget of one app: enough for every virtual-phone app to finish (the largest took 444 actions).
BUDGET = ExploreBudget(max_steps=600, max_seconds=600.0, max_screens=80)
#: Pause after each action on the user's own phone (it animates; thumbnails must show their screen).
SETTLE_ON_PHONE_S = 0.35


class AutoExploreUi(Protocol):
    """What the controller uses of the window (``MainWindow`` has it all)."""

    session: Session
    knowledge_panel: Any
    task_panel: Any
    macro_panel: Any
    view: Any

    def statusBar(self) -> QStatusBar: ...

    def run_active(self) -> bool: ...


class AutoExplorer(QObject):
    """Keeps every app of the connected phone mapped; see the module docstring."""

    def __init__(self, ui: AutoExploreUi, *, busy: Callable[[], bool], on_language: Callable[[str], None],
                 on_maps_changed: Callable[[], None], delay_ms: int = 5000, quiet_ms: int = 5000,
                 recheck_ms: int = 60000, budget: ExploreBudget = BUDGET, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ui, self.session = ui, ui.session
        self.busy, self.on_language, self.on_maps_changed = busy, on_language, on_maps_changed
        self.delay_ms, self.quiet_ms, self.recheck_ms, self.budget = delay_ms, quiet_ms, recheck_ms, budget
        self.status = QLabel("")
        self.status.setObjectName("mapsStatus")
        ui.statusBar().addPermanentWidget(self.status)
        self.worker = SerialExecutor("auto-explore", self.session.poster)
        self.plan: Survey | None = None
        self.explored: list[str] = []  # packages explored this session, in order (for reports and tests)
        self._tried: set[tuple[str, str]] = set()  # (language, package) explored to the end or failed, this phone
        self.consent_box: QMessageBox | None = None
        self.stopped_by_user = False
        self._serial = ""
        self._queue: list[AppToExplore] = []
        self._cancel: CancelToken | None = None
        self._in_flight = False  # a survey or an app's exploration is running on the worker
        self._on_phone = False  # exploring the user's phone itself (not a twin)
        self._quiet_until = 0.0
        self._twin: Any = None
        self._twin_lang = ""
        self._parser: Any = None
        self._closing = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.check)
        self._watch = QTimer(self)  # while exploring: a task started by any other path stops it too
        self._watch.timeout.connect(self._watch_busy)
        self._watch.start(1000)
        ui.task_panel.startRequested.connect(lambda _r: self.pause("a task started"))
        ui.macro_panel.recordToggled.connect(self._recording)
        ui.macro_panel.runRequested.connect(lambda *_a: self.pause("a macro runs"))
        ui.macro_panel.runOnRequested.connect(lambda *_a: self.pause("a macro runs"))
        maps = ui.knowledge_panel.maps
        maps.exploreRequested.connect(lambda: self.pause("exploring by hand"))
        maps.stopRequested.connect(self.stop)
        ui.view.controlGesture.connect(self._user_gesture)
        ui.view.actionDemonstrated.connect(self._user_gesture)

    # ---- when --------------------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        return bool(getattr(self.session.settings.agent, "explore_automatically", True))

    @property
    def running(self) -> bool:
        """An app is being explored now."""
        return self._cancel is not None

    def device_ready(self, serial: str) -> None:
        """A phone was connected: forget the last one's plan and look this one over soon."""
        self._abandon()
        self._serial = serial
        self._tried.clear()
        self.stopped_by_user = False
        self.plan = None
        self._schedule(self.delay_ms)

    def task_finished(self) -> None:
        """A task ended: it may have changed the language or installed an app; look again."""
        self._schedule(self.quiet_ms)

    def _schedule(self, ms: int) -> None:
        if not self._closing:
            self._timer.start(max(0, ms))

    def _idle(self) -> bool:
        return not self.busy() and time.monotonic() >= self._quiet_until

    def check(self) -> None:
        """Look the phone over (or go on with the plan) when nothing else is going on."""
        if self._closing or self.stopped_by_user or not self.enabled or self._in_flight:
            return
        device, executor = self.session.device, self.session.executor
        if device is None or executor is None:
            return
        if not self._idle():
            self._schedule(self.quiet_ms)
            return
        if self._queue:
            self._next()
            return
        agent_device = self.session.agent_device()
        self._in_flight = True
        serial = self._serial
        self.worker.submit(lambda: survey(agent_device, self._open_store, max_steps=self.budget.max_steps,
                                          run_db=self._db),
                           on_done=lambda found: self._surveyed(found, serial), on_error=self._survey_failed)

    def _surveyed(self, found: Survey, serial: str = "") -> None:
        self._in_flight = False
        if self._closing:
            return
        if serial != self._serial:  # another phone was connected meanwhile: look that one over
            self._schedule(0)
            return
        language_changed = self.plan is None or self.plan.language != found.language
        self.plan = found
        if language_changed:
            self.on_language(found.language)
        where = f" ({found.language})" if found.language else ""
        if not found.todo:
            self._say(f"maps: {len(found.apps)} apps mapped{where}" if found.apps else "")
            self._release_twin()
            self._schedule(self.recheck_ms)
            return
        # an app explored to its end (or that failed) in this session is not taken again: its
        # map may stay unfinished (a screen budget reached), and that would go round forever
        self._queue = [job for job in found.todo if (found.language, job.package) not in self._tried]
        if not self._queue:
            self._say(f"maps: {found.mapped} of {len(found.apps)} apps mapped{where}")
            self._release_twin()
            self._schedule(self.recheck_ms)
            return
        device = self.session.device
        if device is not None and not device.info.is_virtual:
            self._ask_consent(found)
            return
        self._next()

    def _survey_failed(self, failure: Failure) -> None:
        self._in_flight = False
        log.info("could not look the phone over for maps: %s", failure.message)
        self._schedule(self.recheck_ms)

    # ---- a real phone: asked once ------------------------------------------------------------
    def _ask_consent(self, found: Survey) -> None:
        serial = self._serial

        def answered(allowed: bool | None) -> None:
            if serial != self._serial or self._closing:
                return
            if allowed is None:
                self._show_consent_box(found)
            elif allowed:
                self._next()
            else:
                self._queue.clear()
                self._say("maps: automatic exploration declined for this phone")

        self.session.misc.submit(lambda: self._kstore().explore_consent(serial), on_done=answered,
                                 on_error=lambda f: log.warning("could not read the exploration consent: %s",
                                                                f.message))

    def _show_consent_box(self, found: Survey) -> None:
        from agent.knowledge.explore import RISKS

        if self.consent_box is not None:
            return
        names = ", ".join(job.name for job in found.todo[:6]) + (" …" if len(found.todo) > 6 else "")
        box = QMessageBox(QMessageBox.Icon.Question, "Explore this phone's apps?",
                          f"Explore {len(found.todo)} apps now? ({names})\n\nTapwise learns where each "
                          f"button leads, so that the agent knows the way later. It explores while no task runs "
                          f"and stops when you start one.\n\n{RISKS}\n\nYour answer is kept for this phone; "
                          f"the setting “Explore apps automatically” turns this off.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self.ui.knowledge_panel)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        serial = self._serial

        def done(result: int) -> None:
            self.consent_box = None
            if self._closing:  # the window closed the box: that is no answer, keep asking next time
                return
            allowed = result == QMessageBox.StandardButton.Yes
            self.session.misc.submit(lambda: self._kstore().set_explore_consent(serial, allowed))
            if serial != self._serial:
                return
            if allowed:
                self._next()
            else:
                self._queue.clear()
                self._say("maps: automatic exploration declined for this phone")

        box.finished.connect(done)
        self.consent_box = box
        box.open()

    # ---- exploring -----------------------------------------------------------------------------
    def _next(self) -> None:
        if not self._queue or self._in_flight or self._closing:
            return
        if not self._idle():
            self._schedule(self.quiet_ms)
            return
        plan = self.plan
        assert plan is not None
        job = self._queue.pop(0)
        done = len(plan.todo) - len(self._queue)
        language = plan.language
        device, executor = self.session.device, self.session.executor
        if device is None or executor is None:
            return
        on_phone_device = self.session.agent_device()
        cancel = self._cancel = CancelToken()
        self._in_flight = True
        maps = self.ui.knowledge_panel.maps
        head = f"Exploring {job.name} by itself ({done}/{len(plan.todo)}: {job.reason})"
        maps.set_progress(0.0, head, True)
        self._say(f"maps: exploring {job.name} ({done}/{len(plan.todo)})")
        poster = self.session.poster

        def progress(p: ExploreProgress) -> None:
            text = (f"{head} — {p.steps}/{p.max_steps} steps · {p.screens} screens · "
                    f"{p.transitions} transitions")
            poster.post(lambda: self._progress(cancel, p.fraction, text))

        def run() -> tuple[AppToExplore, str, Any]:
            target = self._device_for(device, language)
            self._on_phone = target is None
            budget = self.budget if target is not None else replace(self.budget, settle_s=SETTLE_ON_PHONE_S)
            m = explore_one(target if target is not None else on_phone_device, self._parser_for(), job, language,
                            self._open_store, budget=budget, progress=progress, cancel=cancel, run_db=self._db,
                            consent=lambda _risks: True)  # a real phone's consent was asked before
            return job, language, m.coverage()

        def failed(failure: Failure) -> None:
            self._tried.add((language, job.package))
            self._failed(failure)

        self.worker.submit(run, on_done=lambda r: self._explored(cancel, *r), on_error=failed)

    def _progress(self, cancel: CancelToken, fraction: float, text: str) -> None:
        if cancel is self._cancel:
            self.ui.knowledge_panel.maps.set_progress(fraction, text, True)

    def _explored(self, cancel: CancelToken, job: AppToExplore, language: str, cov: dict[str, int]) -> None:
        self._in_flight = False
        self._cancel = None
        self._on_phone = False
        if cancel.cancelled:  # stopped midway: carried on from its stored map once idle again
            self._queue.clear()
            self.plan = None
        else:
            self.explored.append(job.package)
            self._tried.add((language, job.package))
        self.on_maps_changed()
        if self._closing:
            return
        text = f"{job.name}: {cov['screens']} screens, {cov['transitions']} transitions"
        self.ui.knowledge_panel.maps.set_progress(1.0, text + (" (paused)" if cancel.cancelled else ""), False)
        if self._queue and not cancel.cancelled:
            self._next()
            return
        if not cancel.cancelled:
            self._schedule(0)  # look again: everything should be mapped now
            return
        self._schedule(self.quiet_ms)

    def _failed(self, failure: Failure) -> None:
        self._in_flight = False
        self._cancel = None
        self._on_phone = False
        log.warning("automatic exploration failed: %s", failure.detail)
        self.ui.knowledge_panel.maps.set_progress(0.0, f"exploring stopped by an error: {failure.message}", False)
        self._say(f"maps: exploring stopped by an error ({failure.message[:60]})")
        self._schedule(self.quiet_ms if self._queue else self.recheck_ms)

    # ---- pausing and stopping ------------------------------------------------------------------
    def pause(self, why: str) -> None:
        """Stop the app being explored now (kept, carried on later) because ``why``."""
        self._quiet_until = time.monotonic() + self.quiet_ms / 1000
        if self._cancel is not None and not self._cancel.cancelled:
            log.info("automatic exploration paused: %s", why)
            self._cancel.cancel()
            self._say(f"maps: paused ({why})")
        if not self._closing and not self.stopped_by_user:
            self._schedule(self.quiet_ms)

    def _recording(self, on: bool) -> None:
        if on:
            self.pause("recording")

    def _watch_busy(self) -> None:
        if self._cancel is not None and self.busy():
            self.pause("a task runs")

    def _user_gesture(self, _action: object) -> None:
        if self._on_phone:
            self.pause("you are using the phone")
        else:
            self._quiet_until = time.monotonic() + self.quiet_ms / 1000

    def stop(self) -> None:
        """Stop on the map view: no automatic exploration until the next phone."""
        if self._cancel is None and not self._queue:
            return
        self.stopped_by_user = True
        self._queue.clear()
        if self._cancel is not None:
            self._cancel.cancel()
        self._say("maps: automatic exploration stopped")

    def _abandon(self) -> None:
        self._queue.clear()
        self._timer.stop()
        if self._cancel is not None:
            self._cancel.cancel()
        self._release_twin()

    def shutdown(self) -> None:
        """Stop exploring and close the twin (the window is closing)."""
        self._closing = True
        self._watch.stop()
        self._abandon()
        if self.consent_box is not None:
            self.consent_box.done(QMessageBox.StandardButton.No)
        self.worker.shutdown(wait=True)

    # ---- helpers (worker thread) ---------------------------------------------------------------
    def _device_for(self, device: Any, language: str) -> Any:
        """The twin to explore on (made or remade for ``language``), None: the phone itself."""
        if not device.info.is_virtual:
            return None
        if self._twin is not None and self._twin_lang == language:
            return self._twin
        self._close_twin()
        from phone.virtual.twin import twin_of

        try:
            self._twin = twin_of(device, language, command_timeout_s=self.session.settings.device.command_timeout_s)
        except Exception as exc:  # no second phone: the user's own, pausing when they use it
            log.warning("no twin of the virtual phone (%s): exploring the phone itself", exc)
            self._twin = None
        self._twin_lang = language
        return self._twin

    def _close_twin(self) -> None:
        twin, self._twin = self._twin, None
        if twin is not None:
            try:
                twin.close()
            except Exception as exc:  # closing a twin must never stop the window
                log.info("closing the twin phone: %s", exc)

    def _release_twin(self) -> None:
        if self._twin is not None:
            self.worker.submit(self._close_twin)

    def _parser_for(self) -> Any:
        if self._parser is None:
            from app.compose import make_parser

            self._parser = make_parser(self.session.settings, mode="tree")
        return self._parser

    def _kstore(self) -> Any:
        from app.knowledge_store import SqliteKnowledgeStore

        return SqliteKnowledgeStore(self.session.store())

    def _open_store(self) -> Any:
        return self._kstore()

    def _db(self, fn: Callable[[], Any]) -> Any:
        return self.session.misc.call(fn, timeout=120)

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status.setToolTip("Automatic exploration of the phone's apps (Knowledge tab → App maps)")
