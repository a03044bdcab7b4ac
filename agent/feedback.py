"""What the user's decisions teach the loop about each screen.

A rejected proposal must not come back on the same screen; an edit or a demonstration
replaces the agent's choice and is told to the planner as a correction.  ``Feedback``
keeps, per screen (``agent.effects.screen_identity``: a clock tick or a status icon
does not make a new screen), the choices the user turned down with their reasons:

* ``excluded`` gives them as actions aimed at *this* parse's elements, so a structured
  reply form can leave them out (element ids change between parses, words do not);
* ``matching`` says whether a proposal is one of them (the free-text path re-asks then);
* ``notes`` words them for the next prompt;
* ``alternatives`` ranks the next-best elements to offer after repeated rejections.

A ``Choice`` names what an action picks in words (kind, element words, app, direction,
text), never by element id.  Pure data and functions: no LLM, no device, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.grounding.match import similarity, simplify
from agent.structured import choosable, element_name, takes_a_tap
from agent.types import Action, ActionType, DecisionKind, Target
from vision.types import Element, ScreenParse

#: How the next prompt is told that the user answered "not done" to a claim of completion.
NOT_DONE_NOTE = "The user says the task is not done yet"
#: Rejections on one screen after which the user is offered other candidates to pick.
OFFER_AFTER = 2
_ELEMENT_ACTIONS = (ActionType.TAP, ActionType.LONG_PRESS, ActionType.TYPE)


@dataclass(frozen=True, slots=True)
class Choice:
    """What an action picks, in words that survive a new parse of the same screen."""

    kind: ActionType
    words: str = ""  # the target element's words (tap, long press, type)
    app: str = ""
    direction: str = ""
    text: str = ""

    def describe(self) -> str:
        what = self.words or self.app or self.direction or self.text
        return f"{self.kind.value.replace('_', ' ')} {what}".strip()


def _target_element(action: Action, parse: ScreenParse | None) -> Element | None:
    if parse is None:
        return None
    t = action.target
    if t is not None and t.element_id:
        e = parse.element(t.element_id)
        if e is not None:
            return e
    point = (t.point if t is not None else None) or action.touch
    if point is None:
        return None
    inside = [e for e in parse.uncovered() if e.rect.contains(point) and (e.text or e.label)]
    return min(inside, key=lambda e: e.rect.area) if inside else None


def choice_of(action: Action, parse: ScreenParse | None) -> Choice:
    """The choice ``action`` makes on ``parse`` (its element named by its words)."""
    words = ""
    if action.type in _ELEMENT_ACTIONS:
        e = _target_element(action, parse)
        if e is not None:
            words = simplify(element_name(e))
        elif action.target is not None and action.target.description:
            words = simplify(action.target.description)
    finger = action.finger_direction()
    return Choice(action.type, words, simplify(action.app or ""), finger.value if finger else "",
                  " ".join((action.text or "").lower().split()) if action.type is ActionType.TYPE else "")


@dataclass(frozen=True, slots=True)
class Rejection:
    choice: Choice
    said: str  # the user's reason, or what the user did instead
    shown: str  # the action as the user saw it ("tap Navigate up")


@dataclass
class Feedback:
    """The user's rejections and corrections, per screen identity."""

    by_screen: dict[str, list[Rejection]] = field(default_factory=dict)

    def reject(self, screen: str, action: Action, parse: ScreenParse | None, said: str) -> Rejection:
        rejection = Rejection(choice_of(action, parse), " ".join(said.split()), action.describe())
        kept = self.by_screen.setdefault(screen, [])
        if all(r.choice != rejection.choice for r in kept):
            kept.append(rejection)
        return rejection

    def count(self, screen: str) -> int:
        return len(self.by_screen.get(screen, ()))

    def matching(self, screen: str, action: Action, parse: ScreenParse | None) -> Rejection | None:
        """The earlier rejection on ``screen`` that ``action`` repeats, if any."""
        if action.is_terminal:
            return None
        choice = choice_of(action, parse)
        for r in self.by_screen.get(screen, ()):
            if r.choice == choice:
                return r
        return None

    def excluded(self, screen: str, parse: ScreenParse) -> tuple[Action, ...]:
        """The rejected choices as actions on ``parse``'s elements (for a reply form's ``exclude``)."""
        out: list[Action] = []
        for r in self.by_screen.get(screen, ()):
            c = r.choice
            if c.kind in _ELEMENT_ACTIONS:
                for e in parse.elements:
                    if c.words and simplify(element_name(e)) == c.words:
                        target = Target(element_id=e.id)
                        out.append(Action.type_text(c.text or "…", target) if c.kind is ActionType.TYPE
                                   else Action(c.kind, target=target))
            elif c.kind is ActionType.OPEN_APP:
                out.append(Action.open_app(c.app))
            elif c.kind in (ActionType.BACK, ActionType.HOME, ActionType.ENTER):
                out.append(Action.simple(c.kind))
        return tuple(out)

    def notes(self, screen: str) -> list[str]:
        """The rejections on ``screen`` worded for the planner."""
        out = []
        for r in self.by_screen.get(screen, ()):
            why = f" and said: {r.said}" if r.said else ""
            out.append(f"The user rejected \"{r.shown}\" on this screen{why}. Do not propose it again.")
        return out

    def alternatives(self, screen: str, parse: ScreenParse, goal: str, proposal: Action,
                     limit: int = 3) -> tuple[Action, ...]:
        """The next-best taps on this screen, ranked by how well their words match the goal,
        leaving out what was rejected here and the proposal itself."""
        turned_down = {r.choice for r in self.by_screen.get(screen, ())} | {choice_of(proposal, parse)}
        ranked: list[tuple[float, int, Element]] = []
        for e in choosable(parse):
            if not takes_a_tap(e) or not element_name(e).strip():
                continue
            tap = Action.tap(e.rect.center.x, e.rect.center.y,
                             target=Target(element_id=e.id, point=e.rect.center, description=element_name(e)))
            if choice_of(tap, parse) in turned_down:
                continue
            ranked.append((similarity(goal, e), -e.rect.top, e))
        ranked.sort(key=lambda t: (t[0], t[1]), reverse=True)
        return tuple(Action.tap(e.rect.center.x, e.rect.center.y,
                                target=Target(element_id=e.id, point=e.rect.center, description=element_name(e)))
                     for _, _, e in ranked[:limit])


def correction_note(kind: DecisionKind, proposed: Action | None, done: Action) -> str:
    """How an edit or a demonstration is told to the planner."""
    who = "showed" if kind is DecisionKind.DEMONSTRATE else "chose"
    if proposed is None or proposed.type is ActionType.WAIT:
        return f"The user {who} this step: \"{done.describe()}\"."
    return f"The user {who} \"{done.describe()}\" instead of \"{proposed.describe()}\": learn from this correction."
