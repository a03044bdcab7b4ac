"""The MCP tools as plain blocking methods: observe the phone, act on it under supervision,
list and run macros, run a Tapwise task, read an episode.

Every acting method builds an ``Action`` (element ids resolved against the latest
observation, a stale id refused), asks ``agent.safety`` whether it is sensitive (the same
guard the runner uses), hands the ``Proposal`` to the ``Supervisor`` and carries out what
was decided: approve runs it, edit runs the edited action, demonstrate runs the user's own
step, reject and abort raise ``CallRejected`` with the user's reason.  The result carries
the new observation.  Every call, refused ones included, is stored as a step of the
client's episode (``EpisodeBook``).  One call at a time reaches the phone.

Nothing here knows about MCP, Qt or the terminal; the device is any ``agent.device.Device``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from agent.device import Device, DeviceError
from agent.execute import NotExecutable, execute
from agent.safety import sensitivity
from agent.types import (
    Action,
    ActionType,
    Decision,
    DecisionKind,
    Direction,
    Episode,
    Proposal,
    Step,
    StepOutcome,
    Target,
)
from app.mcp.episodes import EpisodeBook, episode_dict
from app.mcp.observation import BadElementId, Observation, screen_signature, split_id
from app.mcp.supervisor import Review, Supervisor
from vision.types import Element, Screen, ScreenParse

if TYPE_CHECKING:
    from agent.events import AwaitingDecision
    from app.mcp.recording import SessionRecords

log = logging.getLogger(__name__)

#: The longest a client waits for the phone to stop animating after an action.
SETTLE_MAX_S = 2.0
#: Actions aimed at a place on the screen: approved late, they are checked against the screen again.
_AIMED = (ActionType.TAP, ActionType.LONG_PRESS, ActionType.SWIPE, ActionType.TYPE)


class ToolRefused(RuntimeError):
    """The call was not carried out; the message tells the client why and what to do.
    ``recorded``: the refusal is already stored as a step."""

    recorded = False


class StaleElement(ToolRefused):
    """An element id from an older observation, or the screen changed since."""


class CallRejected(ToolRefused):
    """The user (or the policy) rejected or stopped the call; the message carries the reason."""


@dataclass(frozen=True, slots=True)
class Acted:
    """What an acting call did."""

    decision: Decision
    executed: Action | None
    observation: Observation
    notes: tuple[str, ...] = ()

    def summary(self) -> str:
        head = f"Done: {self.executed.describe()}." if self.executed is not None else "Nothing was done."
        return "\n".join((head, *self.notes, "", self.observation.summary()))


class TaskRunner(Protocol):
    """Runs Tapwise's own agent on ``goal``; ``decide`` answers its questions.  Returns the
    stored episode."""

    def __call__(self, goal: str, decide: Callable[[AwaitingDecision], Decision],
                 max_steps: int | None) -> Episode: ...


@dataclass
class _State:
    latest: Observation | None = None
    number: int = 0
    timings: list[tuple[str, float]] = field(default_factory=list)


class PhoneService:
    """The tools over one phone.  ``parse`` turns a ``Screen`` into a ``ScreenParse``;
    ``store`` (an ``app.storage.Store``) is read for macros and episodes."""

    def __init__(self, device: Device, parse: Callable[[Screen], ScreenParse], supervisor: Supervisor,
                 book: EpisodeBook, *, store: Any = None, task_runner: TaskRunner | None = None,
                 wait_ms: int = 0, busy: Callable[[], str | None] | None = None,
                 records: SessionRecords | None = None) -> None:
        self.device = device
        self._parse = parse
        self.supervisor = supervisor
        self.book = book
        self.store = store
        self.task_runner = task_runner
        self.wait_ms = wait_ms
        self.busy = busy  # why the phone cannot take a client's action now (another run drives it), or None
        self.records = records  # the record of each client's session (flashes, video), when the phone streams
        self._state = _State()
        self._lock = threading.RLock()  # one call at a time reaches the phone

    # ---- observing ---------------------------------------------------------------------------
    @property
    def latest(self) -> Observation | None:
        return self._state.latest

    def _look(self, screen: Screen | None = None) -> tuple[Screen, ScreenParse, str]:
        screen = screen if screen is not None else self.device.screenshot(with_hierarchy=True)
        parse = self._parse(screen)
        package = screen.foreground_package or ""
        if not package:
            try:
                package = self.device.foreground()[0]
            except DeviceError:
                package = ""
        return screen, parse, package

    def _new_observation(self) -> Observation:
        latest = self._state.latest
        shot = self.device.screenshot(with_hierarchy=True)
        self._state.number += 1
        if latest is not None and _same_screen(latest.screen, shot):  # parsed already: a new number only
            obs = Observation(self._state.number, shot, latest.parse, latest.package, latest.signature)
        else:
            screen, parse, package = self._look(shot)
            obs = Observation(self._state.number, screen, parse, package, screen_signature(parse, package))
        self._state.latest = obs
        return obs

    def _current(self) -> Observation:
        """The latest observation if the screen still shows it, else a new one."""
        latest = self._state.latest
        shot = self.device.screenshot(with_hierarchy=True)
        if latest is not None and _same_screen(latest.screen, shot):
            return latest  # the same tree and pixels parse the same: no need to parse again
        screen, parse, package = self._look(shot)
        sig = screen_signature(parse, package)
        if latest is not None and latest.signature == sig:
            return latest
        self._state.number += 1
        obs = Observation(self._state.number, screen, parse, package, sig)
        self._state.latest = obs
        return obs

    def observe(self, client: str) -> Observation:
        """A new observation of the screen (recorded as a step of the client's episode)."""
        with self._lock:
            t0 = time.perf_counter()
            obs = self._new_observation()
            ms = (time.perf_counter() - t0) * 1000
            self.book.record(client, Step(0, parse=obs.parse, foreground_package=obs.package,
                                          finished_at=time.time(), timings_ms=(("observe", ms),)), obs.screen)
            return obs

    # ---- acting ------------------------------------------------------------------------------
    def tap(self, client: str, element_id: str | None = None, x: int | None = None, y: int | None = None) -> Acted:
        def run() -> Acted:
            obs, element, point = self._aim(element_id, x, y, "tap")
            return self._act(client, "tap", Action(ActionType.TAP, touch=point, target=_target(element, point)),
                             obs, element)
        return self._guard(client, "tap", run)

    def long_press(self, client: str, element_id: str | None = None, x: int | None = None, y: int | None = None,
                   duration_ms: int = 800) -> Acted:
        def run() -> Acted:
            obs, element, point = self._aim(element_id, x, y, "long_press")
            action = Action(ActionType.LONG_PRESS, touch=point, target=_target(element, point),
                            duration_ms=max(100, duration_ms))
            return self._act(client, "long_press", action, obs, element)
        return self._guard(client, "long_press", run)

    def scroll(self, client: str, direction: str, element_id: str | None = None) -> Acted:
        """Bring content from ``direction``'s side into view (``down``: see what is below),
        inside ``element_id``'s area when given, else on the whole screen."""
        return self._guard(client, "scroll", lambda: self._scroll(client, direction, element_id))

    def _scroll(self, client: str, direction: str, element_id: str | None) -> Acted:
        try:
            content = Direction(direction.strip().lower())
        except ValueError:
            raise ToolRefused(f"direction must be up, down, left or right, not {direction!r}") from None
        obs = self._current()
        element = self._element(obs, element_id) if element_id else None
        if element is None:
            action = Action.scroll(content, obs.parse.screen_size)
        else:
            r = element.rect
            finger = content.opposite
            cx, cy = r.center.x, r.center.y
            dx, dy = int(r.width * 0.3), int(r.height * 0.3)
            ends = {Direction.UP: ((cx, cy + dy), (cx, cy - dy)), Direction.DOWN: ((cx, cy - dy), (cx, cy + dy)),
                    Direction.LEFT: ((cx + dx, cy), (cx - dx, cy)), Direction.RIGHT: ((cx - dx, cy), (cx + dx, cy))}
            (x1, y1), (x2, y2) = ends[finger]
            if (x1, y1) == (x2, y2):
                raise ToolRefused(f"element {element_id} is too small to scroll inside; scroll the screen instead")
            action = Action.swipe(x1, y1, x2, y2)
        return self._act(client, "scroll", action, obs, element)

    def swipe(self, client: str, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> Acted:
        return self._guard(client, "swipe", lambda: self._swipe(client, x1, y1, x2, y2, duration_ms))

    def _swipe(self, client: str, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> Acted:
        obs = self._current()
        size = obs.parse.screen_size
        for x, y in ((x1, y1), (x2, y2)):
            _check_point(x, y, size.width, size.height)
        if (x1, y1) == (x2, y2):
            raise ToolRefused("a swipe needs two different points (that would be a tap)")
        return self._act(client, "swipe", Action.swipe(x1, y1, x2, y2, max(50, duration_ms)), obs, None)

    def type_text(self, client: str, text: str, element_id: str | None = None) -> Acted:
        """Type ``text`` (any Unicode) into the focused field, or into ``element_id`` (tapped first)."""
        return self._guard(client, "type_text", lambda: self._type_text(client, text, element_id))

    def _type_text(self, client: str, text: str, element_id: str | None) -> Acted:
        if not text:
            raise ToolRefused("text to type is empty")
        obs = self._current()
        element = self._element(obs, element_id) if element_id else None
        target = None
        if element is not None:
            target = Target(element_id=element.id, point=element.rect.center,
                            description=element.display_name or element.kind.value)
        return self._act(client, "type_text", Action.type_text(text, target), obs, element)

    def press_key(self, client: str, key: str) -> Acted:
        return self._guard(client, "press_key", lambda: self._press_key(client, key))

    def _press_key(self, client: str, key: str) -> Acted:
        kinds = {"back": ActionType.BACK, "home": ActionType.HOME, "enter": ActionType.ENTER}
        kind = kinds.get(key.strip().lower())
        if kind is None:
            raise ToolRefused(f"key must be back, home or enter, not {key!r}")
        return self._act(client, "press_key", Action.simple(kind), self._current(), None)

    def open_app(self, client: str, app: str) -> Acted:
        return self._guard(client, "open_app", lambda: self._open_app(client, app))

    def _open_app(self, client: str, app: str) -> Acted:
        if not app.strip():
            raise ToolRefused("name the app to open (see list_apps)")
        known = self.list_apps()
        if known and not any(app.strip().casefold() in (label.casefold(), pkg.casefold()) for label, pkg in known):
            raise ToolRefused(f"no app {app!r} on this phone; list_apps gives the installed ones")
        return self._act(client, "open_app", Action.open_app(app.strip()), self._current(), None)

    # ---- the supervised step ------------------------------------------------------------------
    def _guard(self, client: str, tool: str, run: Callable[[], Acted]) -> Acted:
        """Run an acting call alone on the phone; a refusal not yet stored becomes an error step."""
        with self._lock:
            try:
                return run()
            except ToolRefused as exc:
                if not exc.recorded:
                    latest = self._state.latest
                    self.book.record(client, Step(0, parse=latest.parse if latest else None,
                                                  outcome=StepOutcome.ERROR, error=f"{tool} refused: {exc}",
                                                  foreground_package=latest.package if latest else None,
                                                  finished_at=time.time()))
                    exc.recorded = True
                raise

    def _aim(self, element_id: str | None, x: int | None, y: int | None,
             tool: str) -> tuple[Observation, Element | None, Any]:
        if element_id and (x is not None or y is not None):
            raise ToolRefused(f"{tool}: give an element_id or a point (x, y), not both")
        obs = self._current()
        if element_id:
            element = self._element(obs, element_id)
            return obs, element, element.rect.center
        if x is None or y is None:
            raise ToolRefused(f"{tool} needs an element_id from observe, or both x and y in screen pixels")
        size = obs.parse.screen_size
        _check_point(x, y, size.width, size.height)
        from vision.geometry import Point

        return obs, None, Point(int(x), int(y))

    def _element(self, obs: Observation, public: str) -> Element:
        """The element ``public`` names, if it belongs to ``obs`` (the current screen)."""
        try:
            raw, number = split_id(public)
        except BadElementId as exc:
            raise ToolRefused(str(exc)) from None
        if number != obs.number:
            raise StaleElement(f"element id {public!r} is stale: it belongs to observation {number}, but the "
                               f"screen is now observation {obs.number} (it changed or was observed again since). "
                               "Call observe again and use an id from its list.")
        element = obs.parse.element(raw)
        if element is None:
            raise ToolRefused(f"observation {obs.number} has no element {public!r}; use an id from observe's list")
        if element.covered:
            raise ToolRefused(f"element {public!r} is under a dialog or menu and cannot be reached; act on the "
                              "dialog first")
        return element

    def _act(self, client: str, tool: str, action: Action, obs: Observation, element: Element | None) -> Acted:
        t0 = time.perf_counter()
        self._check_free()
        reason = sensitivity(action, obs.parse, obs.package)
        evidence = [f"asked by the MCP client “{client}” through {tool}"]
        if element is not None:
            evidence.append(f"element {obs.public_id(element.id)}: {element.kind.value} “{element.display_name}” at "
                            f"({element.rect.center.x}, {element.rect.center.y})")
        if reason:
            evidence.append(f"sensitive: {reason}")
        proposal = Proposal(action, rationale=f"The MCP client “{client}” wants to {action.describe()}.",
                            evidence=tuple(evidence), planner=f"mcp:{client}", sensitive=reason is not None)
        review = Review(client, tool, proposal, obs, reason or "")
        t1 = time.perf_counter()
        decision = self.supervisor.review(review)
        t2 = time.perf_counter()
        timings = [("observe", (t1 - t0) * 1000), ("decide", (t2 - t1) * 1000)]
        step = Step(0, parse=obs.parse, proposal=proposal, decision=decision, foreground_package=obs.package)
        if decision.kind in (DecisionKind.REJECT, DecisionKind.ABORT):
            outcome = StepOutcome.REJECTED if decision.kind is DecisionKind.REJECT else StepOutcome.ABORTED
            self.book.record(client, _done(step, outcome=outcome, timings_ms=tuple(timings)), obs.screen)
            who = "Tapwise's policy" if decision.decided_by == "policy" else "The user"
            verb = "rejected" if decision.kind is DecisionKind.REJECT else "stopped"
            because = f": {decision.feedback}" if decision.feedback else ""
            rejected = CallRejected(f"{who} {verb} “{action.describe()}”{because}")
            rejected.recorded = True
            raise rejected
        executed = decision.action if decision.kind in (DecisionKind.EDIT, DecisionKind.DEMONSTRATE) else action
        assert executed is not None  # Decision guarantees an action for edit and demonstrate
        if (decision.kind is DecisionKind.APPROVE and decision.decided_by != "policy"
                and action.type in _AIMED and self._current().number != obs.number):
            # a person took a while: the approved point may now hold something else
            self.book.record(client, _done(step, outcome=StepOutcome.ERROR, timings_ms=tuple(timings),
                                           error="the screen changed while the call waited for approval"), obs.screen)
            moved = StaleElement(f"the screen changed while “{action.describe()}” waited for approval, so it was "
                                 "not carried out. Call observe again and repeat the call if it still applies.")
            moved.recorded = True
            raise moved
        notes: list[str] = []
        if decision.kind is DecisionKind.EDIT:
            notes.append(f"The user edited the action: “{action.describe()}” became “{executed.describe()}”.")
        elif decision.kind is DecisionKind.DEMONSTRATE:
            notes.append(f"The user did this step themselves instead: {executed.describe()}.")
        if decision.feedback and decision.kind is not DecisionKind.APPROVE:
            notes.append(f"The user said: {decision.feedback}")
        index = self.book.next_index(client)
        started = self.records.action_begins(client, index, executed) if self.records is not None else 0.0
        try:
            execute(executed, self.device, wait_ms=self.wait_ms)
            if self.records is not None:
                self.records.action_sent(client, index, executed, started)
            self._settle()
        except (DeviceError, NotExecutable) as exc:
            timings.append(("execute", (time.perf_counter() - t2) * 1000))
            self.book.record(client, _done(step, outcome=StepOutcome.ERROR, error=str(exc), timings_ms=tuple(timings)),
                             obs.screen)
            failed = ToolRefused(f"the phone could not do “{executed.describe()}”: {exc}")
            failed.recorded = True
            raise failed from exc
        t3 = time.perf_counter()
        after = self._new_observation()
        timings += [("execute", (t3 - t2) * 1000), ("observe_after", (time.perf_counter() - t3) * 1000)]
        if self.records is not None:
            notes += [f"Appeared on the screen after this action: “{t.text}”" for t in self.records.showing(client, index)]
        self.book.record(client, _done(step, executed=executed, timings_ms=tuple(timings)), obs.screen)
        return Acted(decision, executed, after, tuple(notes))

    def _check_free(self) -> None:
        why = self.busy() if self.busy is not None else None
        if why:
            raise ToolRefused(f"{why}; nothing was done. Try again when it has ended.")

    def _settle(self) -> None:
        animating = getattr(self.device, "is_animating", None)
        if not callable(animating):
            return
        deadline = time.monotonic() + SETTLE_MAX_S
        while animating() and time.monotonic() < deadline:
            time.sleep(0.02)

    # ---- apps, macros, tasks, episodes ---------------------------------------------------------
    def list_apps(self) -> list[tuple[str, str]]:
        """(label, package) of the phone's launchable apps, or [] when the device cannot say."""
        listing = getattr(self.device, "installed_apps", None)
        if not callable(listing):
            return []
        try:
            return [(str(a), str(b)) for a, b in listing()]
        except DeviceError as exc:
            raise ToolRefused(f"the phone could not list its apps: {exc}") from exc

    def list_macros(self) -> list[dict[str, Any]]:
        if self.store is None:
            return []
        out = []
        for row in self.store.list_macros():
            macro = self.store.load_macro(row["id"])
            out.append({"name": macro.name, "id": macro.id, "version": macro.version, "app": macro.app or "",
                        "description": macro.description, "parameters": list(macro.parameters),
                        "steps": [s.description for s in macro.steps]})
        return out

    def run_macro(self, client: str, name: str, params: dict[str, str] | None = None) -> str:
        """Replay a stored macro (a run of the agent loop, stored as its own episode); each step
        it would take goes to the supervisor like any acting call."""
        from agent.events import AwaitingDecision
        from agent.macros.editing import MissingParameter
        from agent.macros.replay import Replayer, as_decision

        with self._lock:
            if self.store is None:
                raise ToolRefused("no macro library: this server has no database")
            self._check_free()
            try:
                macro = self.store.find_macro(name)
            except KeyError:
                raise ToolRefused(f"no macro {name!r}; list_macros gives the stored ones") from None
            try:
                replay = Replayer(device=self.device, parser=_Parser(self._parse), approve_each=True).start(
                    macro, params or {}, store=self.store)
            except MissingParameter as exc:
                raise ToolRefused(str(exc)) from None
            reply: Decision | None = None
            try:
                while True:
                    ev = replay.events.send(reply)
                    reply = None
                    if not isinstance(ev, AwaitingDecision):
                        continue
                    question = replay.question(ev)
                    if question is not None:  # a step was not found: the client hears why
                        reply = as_decision(None, question.reason)
                        continue
                    obs = self._current()
                    reply = self.supervisor.review(Review(client, "run_macro", ev.proposal, obs, ev.reason))
            except StopIteration as stop:
                result = stop.value
            except DeviceError as exc:
                raise ToolRefused(f"the phone failed during the macro: {exc}") from exc
            lines = [f"{r.index + 1}. {r.description}: {r.words}" for r in replay.planner.reports]
            if result.repaired:
                saved = self.store.save_macro(result.macro)
                lines.append(f"the macro was repaired and saved as version {saved.version}")
            stored = f" (stored as episode {result.episode.id})" if result.episode is not None else ""
            head = f"Macro “{macro.name}” {result.status}{stored}" + (f": {result.message}" if result.message else "")
            end = ActionType.COMPLETE if result.succeeded else ActionType.IMPOSSIBLE
            after = self._new_observation()
            self.book.record(client, Step(0, parse=after.parse, proposal=Proposal(
                Action.simple(end), rationale=f"run_macro “{macro.name}”: {head}", planner=f"mcp:{client}"),
                outcome=StepOutcome.FINISHED, foreground_package=after.package, finished_at=time.time()))
            text = "\n".join([head, *lines, "", after.summary()])
            if not result.succeeded:
                raise ToolRefused(text)
            return text

    def run_task(self, client: str, goal: str, max_steps: int | None = None) -> str:
        """Run Tapwise's own agent on ``goal``; its proposals go to the same supervisor."""
        if self.task_runner is None:
            raise ToolRefused("this server cannot run tasks (no model configured)")
        if not goal.strip():
            raise ToolRefused("say what the task is")
        with self._lock:
            self._check_free()

            def decide(ev: AwaitingDecision) -> Decision:
                obs = self._current()
                return self.supervisor.review(Review(client, "run_task", ev.proposal, obs, ev.reason))

            episode = self.task_runner(goal.strip(), decide, max_steps)
            end = Action.simple(_task_end(episode))
            self.book.record(client, Step(0, proposal=Proposal(end, rationale=f"run_task “{goal}”: episode "
                                                               f"{episode.id} ended {episode.status.value}",
                                                               planner=f"mcp:{client}"),
                                          outcome=StepOutcome.FINISHED, finished_at=time.time()))
            after = self._new_observation()
            return (f"Task “{goal}” ended {episode.status.value}" + (f": {episode.note}" if episode.note else "")
                    + f" after {len(episode.steps)} step(s); stored as episode {episode.id} (read_episode shows it)."
                    + "\n\n" + after.summary())

    def read_episode(self, client: str, episode_id: str = "") -> dict[str, Any]:
        """A stored episode as plain data (this client's own when no id is given)."""
        if self.store is None:
            raise ToolRefused("no episodes: this server has no database")
        self.book.flush()
        wanted = episode_id.strip() or (self.book.episode_id(client) or "")
        if not wanted:
            raise ToolRefused("this client has no episode yet; give an episode id")
        try:
            episode = self.store.load_episode(wanted)
        except KeyError:
            raise ToolRefused(f"no episode {wanted!r}") from None
        if self.records is not None:
            episode = self.records.amend(episode)
        return episode_dict(episode, self.store)

    def save_as_macro(self, client: str, name: str, description: str = "") -> str:
        """Turn the client's episode so far into a stored macro named ``name``."""
        from app.mcp.episodes import macro_from_episode

        if self.store is None:
            raise ToolRefused("no macro library: this server has no database")
        if not name.strip():
            raise ToolRefused("give the macro a name")
        with self._lock:
            self.book.flush()
            episode_id = self.book.episode_id(client)
            if episode_id is None:
                raise ToolRefused("this client has done nothing yet to turn into a macro")
            latest = self._state.latest
            try:
                macro = macro_from_episode(self.store.load_episode(episode_id), name.strip(), description,
                                           now=(latest.parse, latest.package) if latest is not None else None)
            except ValueError as exc:
                raise ToolRefused(str(exc)) from None
        saved = self.store.save_macro(macro)
        return (f"Saved the macro “{saved.name}” (version {saved.version}, {len(saved.steps)} step(s)): "
                + "; ".join(s.description for s in saved.steps))

    def close(self) -> None:
        if self.records is not None:  # the videos are finished and what flashed is stored first
            self.book.flush()
            self.records.close()
        self.book.close()


class _Parser:
    """A parse function as the ``parser`` object the replayer expects."""

    def __init__(self, parse: Callable[[Screen], ScreenParse]) -> None:
        self.parse = parse


def _task_end(episode: Episode) -> ActionType:
    """The terminal action that sums up a finished task run."""
    return ActionType.COMPLETE if episode.status.value == "succeeded" else ActionType.IMPOSSIBLE


def _target(element: Element | None, point: Any) -> Target | None:
    if element is None:
        return None
    return Target(element_id=element.id, point=point, description=element.display_name or element.kind.value)


def _same_screen(a: Screen, b: Screen) -> bool:
    """Whether two screenshots show the same: the same accessibility tree and the same pixels
    (compared on a 4-pixel grid)."""
    if a.hierarchy_xml is None or a.hierarchy_xml != b.hierarchy_xml or a.foreground_package != b.foreground_package:
        return False
    if a.image is b.image:
        return True
    return a.image.shape == b.image.shape and bool(np.array_equal(a.image[::4, ::4], b.image[::4, ::4]))


def _check_point(x: int, y: int, width: int, height: int) -> None:
    if not (0 <= int(x) < width and 0 <= int(y) < height):
        raise ToolRefused(f"point ({x}, {y}) is off the screen ({width}x{height} pixels)")


def _done(step: Step, **changes: Any) -> Step:
    from dataclasses import replace

    return replace(step, finished_at=time.time(), **changes)


__all__ = ["Acted", "CallRejected", "PhoneService", "StaleElement", "TaskRunner", "ToolRefused",
           "episode_dict"]
