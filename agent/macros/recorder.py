"""Recording demonstrations: each user action plus the parse it was made on becomes a
``MacroStep`` (element under the finger, the step in words, a fingerprint, the raw
coordinates, screen signatures before and after).  A tap on the navigation bar's Back or
Home button is recorded as that key, not as a point, so it replays on any screen size.

Text typed into a password field is never recorded: the recorder asks ``secret_name``
(the caller asks the user, and keeps the value in the vault) and records
``{{secret:NAME}}`` instead; without an answer it refuses the step (``SecretNotNamed``).

The recorder never touches the device: the caller executes the action and hands over
what it saw before and, when it has it, after.  No Qt, no LLM, no I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from agent.macros.describe import describe_step, toggle_inside
from agent.macros.fingerprint import fingerprint_of, inner_text, screen_signature
from agent.macros.types import Macro, MacroStep
from agent.screen_text import is_home
from agent.secrets.refs import names_in, reference
from agent.types import Action, ActionType, Target
from vision.geometry import Point
from vision.types import Element, ElementKind, Screen, ScreenParse

log = logging.getLogger(__name__)

_PREFERRED_TARGET_KINDS = {
    ElementKind.BUTTON, ElementKind.EDIT_TEXT, ElementKind.SWITCH, ElementKind.CHECK_BOX,
    ElementKind.RADIO_GROUP, ElementKind.SPINNER, ElementKind.SEEK_BAR, ElementKind.RATING_BAR,
}


@dataclass(frozen=True, slots=True, eq=False)
class Observation:
    """What was on the phone at one moment: the parse, the pixels and the app in front."""

    parse: ScreenParse
    image: np.ndarray | None = None
    package: str | None = None

    @classmethod
    def of(cls, parse: ScreenParse, screen: Screen | None = None, package: str | None = None) -> Observation:
        return cls(
            parse=parse,
            image=screen.image if screen is not None else None,
            package=package or (screen.foreground_package if screen is not None else None),
        )

    @property
    def signature(self) -> str:
        return screen_signature(self.parse, self.package)


def element_under(parse: ScreenParse, x: int, y: int) -> Element | None:
    """The element a finger at (x, y) meant: the smallest clickable one, else the
    smallest interactive-looking one, else the smallest of all; chrome is ignored."""
    hits = [e for e in parse.elements_at(x, y)
            if e.kind not in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR) and not e.covered]
    if not hits:
        return None
    clickable = [e for e in hits if e.clickable or e.checkable]
    if clickable:
        return clickable[0]
    preferred = [e for e in hits if e.kind in _PREFERRED_TARGET_KINDS]
    if preferred:
        return preferred[0]
    return hits[0]


def scroll_container(parse: ScreenParse, x: int, y: int) -> Element | None:
    """The scrollable element under the point, if any."""
    hits = [e for e in parse.elements_at(x, y) if e.scrollable and not e.covered]
    return hits[0] if hits else None


def focused_field(parse: ScreenParse) -> Element | None:
    fields = [e for e in parse.elements if e.kind is ElementKind.EDIT_TEXT]
    focused = [e for e in fields if e.focused]
    if focused:
        return focused[0]
    return fields[0] if len(fields) == 1 else None


def target_element(action: Action, parse: ScreenParse, last_tapped: Element | None = None) -> Element | None:
    """The element an action was aimed at on ``parse``."""
    if action.type in (ActionType.TAP, ActionType.LONG_PRESS) and action.touch is not None:
        return element_under(parse, action.touch.x, action.touch.y)
    if action.type is ActionType.SWIPE and action.touch is not None:
        return scroll_container(parse, action.touch.x, action.touch.y)
    if action.type is ActionType.TYPE:
        el = focused_field(parse)
        if el is None and last_tapped is not None and last_tapped.kind is ElementKind.EDIT_TEXT:
            el = parse.element(last_tapped.id)
        return el
    return None


#: The share of the screen's height, at the bottom, where a 3-button navigation bar sits
#: when the parse does not show it (accessibility trees leave the system bars out).
NAV_BAR_SHARE = 0.065


def nav_key_at(parse: ScreenParse, x: int, y: int) -> ActionType | None:
    """``BACK`` or ``HOME`` when (x, y) is on that button of a 3-button navigation bar.

    The bar is the parse's navigation-bar element when it has one, else the strip at the
    bottom of the screen below every element of the app.  Its left third is Back, the
    middle third Home (the right third, Recents, has no action type and stays a tap).
    """
    bar = next((e.rect for e in parse.elements if e.kind is ElementKind.NAVIGATION_BAR and e.rect.contains(Point(x, y))),
               None)
    if bar is None:
        size = parse.screen_size
        if not size.height or y < size.height * (1 - NAV_BAR_SHARE):
            return None
        content = [e for e in parse.elements if e.kind not in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)]
        if any(e.rect.bottom > y for e in content if e.rect.top < y):
            return None  # an app element reaches down here: the tap was meant for it
        left, width = 0, size.width
    else:
        left, width = bar.left, bar.width
    third = (x - left) * 3 // max(1, width)
    return {0: ActionType.BACK, 1: ActionType.HOME}.get(int(third))


def make_step(action: Action, before: Observation, after: Observation | None = None,
              last_tapped: Element | None = None) -> MacroStep:
    """One semantic step from an action and the screens around it.

    A tap on the home screen that brings another app to the front is recorded as
    "open that app" (by package), which survives icon moves and other languages.
    """
    parse = before.parse
    if action.type is ActionType.TAP and action.touch is not None:
        key = nav_key_at(parse, action.touch.x, action.touch.y)
        if key is not None:
            pressed = Action.simple(key)
            return MacroStep(
                action=pressed,
                description=f"press {key.value.capitalize()}",
                screen_before=before.signature,
                screen_after=after.signature if after is not None else "",
                expected_package=(after.package if after is not None else None) or None,
            )
    if (action.type is ActionType.TAP and after is not None and after.package
            and after.package != before.package and is_home(before.package)):
        el = target_element(action, parse)
        name = (inner_text(parse, el) or el.label) if el is not None else ""
        opened = Action.open_app(after.package)
        return MacroStep(
            action=opened,
            description=f"open the '{name}' app" if name else f"open {after.package}",
            screen_before=before.signature,
            screen_after=after.signature,
            expected_package=after.package,
        )
    element = target_element(action, parse, last_tapped)
    description = describe_step(action, element, parse)
    target: Target | None = None
    if element is not None:
        fp = fingerprint_of(element, parse, before.image)
        target = Target(element_id=element.id, point=action.touch, description=description, fingerprint=fp)
    elif action.touch is not None:
        target = Target(point=action.touch, description=description)
    toggle = toggle_inside(element, parse) if element is not None and action.type is ActionType.TAP else None
    return MacroStep(
        expect_checked=(not toggle.checked) if toggle is not None else None,
        action=action if target is None else replace(action, target=target),
        description=description,
        target=target,
        screen_before=before.signature,
        screen_after=after.signature if after is not None else "",
        expected_package=(after.package if after is not None else None) or before.package,
    )


class SecretNotNamed(ValueError):
    """Text typed into a password field, and no name to keep it under as a secret."""


#: Asked for the name a password typed while recording is kept under: (the value, the
#: field) -> the secret's name, or None when the user gives none.
SecretNamer = Callable[[str, Element], "str | None"]


def password_field(action: Action, parse: ScreenParse, last_tapped: Element | None = None) -> Element | None:
    """The password field a typing ``action`` goes into, if it goes into one."""
    if action.type is not ActionType.TYPE:
        return None
    el = target_element(action, parse, last_tapped)
    if el is None and action.target is not None and action.target.element_id:
        el = parse.element(action.target.element_id)
    return el if el is not None and el.password else None


class Recorder:
    """Collects a demonstration step by step and turns it into a ``Macro``.

    Call ``record(action, before)`` after executing each action; pass ``after`` then or
    later through ``observe_after`` (the screen the action led to).  ``secret_name`` names
    the secret a password typed while recording becomes (see the module docstring).
    """

    def __init__(self, secret_name: SecretNamer | None = None) -> None:
        self.secret_name = secret_name
        self._steps: list[MacroStep] = []
        self._first_package: str | None = None
        self._last_tapped: Element | None = None
        # what the last step was made from, so ``observe_after`` can redo it with the after-screen
        self._pending: tuple[Action, Observation, Element | None] | None = None

    @property
    def steps(self) -> tuple[MacroStep, ...]:
        return tuple(self._steps)

    def record(self, action: Action, before: Observation, after: Observation | None = None) -> MacroStep:
        if action.is_terminal:
            raise ValueError("complete/impossible are not demonstrable actions")
        action = self.kept_secret(action, before)
        step = make_step(action, before, after, self._last_tapped)
        self._pending = (action, before, self._last_tapped)
        if self._first_package is None:
            self._first_package = before.package
        if action.type in (ActionType.TAP, ActionType.LONG_PRESS):
            el = target_element(action, before.parse)
            self._last_tapped = el
        self._steps.append(step)
        log.debug("recorded step %d: %s", len(self._steps), step.description)
        return step

    def kept_secret(self, action: Action, before: Observation) -> Action:
        """``action``, with text typed into a password field replaced by its secret's reference."""
        if action.type is not ActionType.TYPE or not action.text or names_in(action.text):
            return action
        field = password_field(action, before.parse, self._last_tapped)
        if field is None:
            return action
        name = self.secret_name(action.text, field) if self.secret_name is not None else None
        if not name:
            raise SecretNotNamed("text typed into a password field is recorded only as a secret: give it a name "
                                 "(its value is kept in the vault, the macro keeps {{secret:NAME}})")
        return replace(action, text=reference(name))

    def begin_with(self, step: MacroStep, package: str | None = None) -> None:
        """Start the recording with a prepared step (a known start, ``agent.macros.start``)."""
        if self._steps:
            raise ValueError("begin_with must come before any recorded step")
        self._steps.append(step)
        self._first_package = package or step.expected_package
        self._pending = None

    def observe_after(self, after: Observation) -> None:
        """Attach the screen that the last recorded action led to."""
        if not self._steps:
            return
        last = self._steps[-1]
        if self._pending is not None:
            action, before, tapped = self._pending
            redone = make_step(action, before, after, tapped)  # e.g. a launcher tap becomes "open app"
            if last.description != make_step(action, before, None, tapped).description:
                redone = replace(redone, description=last.description)  # keep the user's re-wording
            self._steps[-1] = redone
            return
        self._steps[-1] = replace(
            last,
            screen_after=after.signature,
            expected_package=after.package or last.expected_package,
        )

    def undo(self) -> MacroStep | None:
        self._pending = None
        return self._steps.pop() if self._steps else None

    def build(self, name: str, *, app: str | None = None, description: str = "") -> Macro:
        """The recording as a version-1 macro; ``app`` defaults to the first screen's package."""
        if not self._steps:
            raise ValueError("nothing was recorded: demonstrate at least one step")
        first = self._steps[0].action
        if app is None:
            app = first.app if first.type is ActionType.OPEN_APP else self._first_package
        return Macro(name=name, steps=tuple(self._steps), app=app, description=description)
