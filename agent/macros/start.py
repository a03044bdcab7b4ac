"""Where a recording starts, and starts every phone can reach.

A recording that begins inside an app, or that opens an app which comes back on one of
its inner screens (where it was last left), replays only on phones left in that same
place.  ``start_problem`` says so in words; ``fresh_launch_step`` and ``home_step`` are
known starts a recording can begin with instead.  A *fresh launch* replays as: open the
app, press Back until it is left, open it again — so it shows its first screen whatever
state it was in (``is_fresh_launch`` tells the replay's planner; ``unwind_to_first_screen``
does the same directly on a device, for the window before it records again).

Pure functions plus one device helper; no Qt.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent.device import Device, Key
from agent.macros.recorder import Observation
from agent.macros.types import MacroStep
from agent.screen_text import is_home
from agent.types import Action, ActionType
from vision.types import ScreenParse

log = logging.getLogger(__name__)

#: The words that mark a fresh launch in a step's description (the step says it in full).
FRESH_WORDS = "from its first screen"
#: Words of the "up" arrow an inner screen shows (English, German).
UP_WORDS = frozenset({"navigate up", "nach oben", "zurück"})
#: The most Back presses a fresh launch spends leaving an app.
MAX_BACKS = 8


@dataclass(frozen=True, slots=True)
class StartProblem:
    """Why a recording may not replay elsewhere: the app and the words for the user."""

    app: str  # package
    message: str


def inner_screen(parse: ScreenParse) -> bool:
    """The screen shows an "up" arrow: one of an app's inner screens, not its first."""
    return any((e.label or e.text or "").strip().casefold() in UP_WORDS for e in parse.elements)


def start_problem(first: Observation | None, steps: Sequence[MacroStep],
                  afters: Sequence[Observation | None] = (), label_of: Callable[[str], str] = str
                  ) -> StartProblem | None:
    """What makes the recording depend on where an app was left, or None.

    ``first`` is the screen before the first step; ``afters[i]`` the screen after step ``i``;
    ``label_of`` names an app by its package in the message (the phone's name for it)."""
    if steps and is_known_start(steps[0]):
        return None  # already begins from a known state
    if first is not None and first.package and not is_home(first.package):
        where = " on one of its inner screens" if inner_screen(first.parse) else ""
        return StartProblem(first.package, f"The recording starts inside {label_of(first.package)}{where}; another phone "
                                           "may show something else there.")
    for i, (step, after) in enumerate(zip(steps, afters, strict=False)):
        if after is None or not after.package or is_home(after.package):
            continue
        opened = step.action.type is ActionType.OPEN_APP
        if opened and inner_screen(after.parse):
            return StartProblem(after.package, f"Step {i + 1} opens {label_of(after.package)}, which came back on one of its "
                                               "inner screens (where it was last left); on another phone it may "
                                               "open elsewhere.")
    return None


def fresh_launch_step(app: str, label: str = "") -> MacroStep:
    """Open ``app`` on its first screen, whatever state it was left in."""
    return MacroStep(Action.open_app(app), description=f"open {label or app} {FRESH_WORDS}",
                     expected_package=app)


def home_step() -> MacroStep:
    return MacroStep(Action.simple(ActionType.HOME), description="press Home")


def is_fresh_launch(step: MacroStep) -> bool:
    return step.action.type is ActionType.OPEN_APP and step.description.endswith(FRESH_WORDS)


def is_known_start(step: MacroStep) -> bool:
    """A start put in front of a recording (not a Home press recorded on some screen)."""
    return is_fresh_launch(step) or (step.action.type is ActionType.HOME and not step.screen_before)


def unwind_to_first_screen(device: Device, app: str, foreground: Callable[[], str | None],
                           settle: Callable[[], None] = lambda: None) -> bool:
    """Open ``app``, press Back until it is left (at most ``MAX_BACKS``), open it again.

    ``foreground`` says which package is in front.  Returns whether the app was left."""
    device.open_app(app)
    settle()
    left = False
    for _ in range(MAX_BACKS):
        if foreground() != app:
            left = True
            break
        device.key(Key.BACK)
        settle()
    else:
        left = foreground() != app
    device.open_app(app)
    settle()
    if not left:
        log.warning("%s did not close with %d Back presses: it may not open on its first screen", app, MAX_BACKS)
    return left


def app_label(device: object, package: str) -> str:
    """The app's name as the phone gives it, else the package (``agent.device.app_label``)."""
    from agent.device import app_label as label

    return label(device, package)
