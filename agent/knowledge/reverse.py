"""Reverse-engineering executed operations into instructions and step descriptions
(Prompt2Task App. B.1): an episode's or a macro's actions, with the screens they were
made on, become ``TaskRecord``s for the task repository and PBD examples.

Rules only; rephrasing by an LLM is optional and left to the caller.  No I/O.
"""

from __future__ import annotations

from agent.macros.describe import describe_step, element_phrase
from agent.macros.recorder import target_element
from agent.macros.types import Macro
from agent.types import Action, ActionType, Episode, EpisodeStatus
from vision.types import Element, ElementKind, ScreenParse

from .types import Instruction, Op, TaskRecord


def _object(element: Element | None, parse: ScreenParse | None, action: Action) -> str:
    if element is not None and parse is not None:
        phrase = element_phrase(element, parse)
        return phrase[4:] if phrase.startswith("the ") else phrase
    if action.target is not None and action.target.description:
        return action.target.description
    return ""


def instruction_for(action: Action, element: Element | None = None, parse: ScreenParse | None = None) -> Instruction | None:
    """The instruction that could have produced ``action`` (``None`` for wait/complete)."""
    t = action.type
    obj = _object(element, parse, action)
    if t is ActionType.TAP:
        if element is not None and element.kind in (ElementKind.SWITCH, ElementKind.CHECK_BOX) and element.checked is not None:
            return Instruction(Op.SWITCH, "off" if element.checked else "on", obj)
        return Instruction(Op.CLICK, "1", obj)
    if t is ActionType.LONG_PRESS:
        return Instruction(Op.LONG_CLICK, str(action.duration_ms or 800), obj)
    if t is ActionType.SWIPE:
        d = action.finger_direction()
        return Instruction(Op.SCROLL, d.opposite.value if d else "down", obj)
    if t is ActionType.TYPE:
        return Instruction(Op.EDIT, action.text or "", obj)
    if t is ActionType.BACK:
        return Instruction(Op.BACK, "previous")
    if t is ActionType.HOME:
        return Instruction(Op.BACK, "homepage")
    if t is ActionType.ENTER:
        return Instruction(Op.CLICK, "1", "the enter key")
    if t is ActionType.OPEN_APP:
        return Instruction(Op.OPEN, action.app or "")
    return None


def _element_for(action: Action, parse: ScreenParse | None) -> Element | None:
    if parse is None:
        return None
    if action.target is not None and action.target.element_id:
        el = parse.element(action.target.element_id)
        if el is not None:
            return el
    return target_element(action, parse)


def record_from_episode(episode: Episode, *, goal: str | None = None, source: str = "episode",
                        app: str | None = None) -> TaskRecord:
    """A task record from the actions an episode actually executed."""
    steps: list[str] = []
    instructions: list[Instruction] = []
    actions: list[Action] = []
    for st in episode.steps:
        act = st.executed
        if act is None or act.is_terminal or act.type is ActionType.WAIT:
            continue
        el = _element_for(act, st.parse)
        ins = instruction_for(act, el, st.parse)
        if ins is None:
            continue
        desc = describe_step(act, el, st.parse) if el is not None else (
            act.target.description if act.target and act.target.description else ins.in_words())
        steps.append(desc)
        instructions.append(ins)
        actions.append(act)
        if app is None and st.foreground_package:
            app = st.foreground_package
    return TaskRecord(goal=goal or episode.goal, steps=tuple(steps), instructions=tuple(instructions),
                      actions=tuple(actions), app=app, source=source, episode_id=episode.id)


def record_from_macro(macro: Macro, goal: str | None = None) -> TaskRecord:
    """A task record from a macro's semantic steps (a recorded demonstration)."""
    steps, instructions, actions = [], [], []
    for s in macro.steps:
        ins = instruction_for(s.action)
        if ins is None:
            continue
        fp = s.target.fingerprint if s.target else None
        if fp is not None and ins.op in (Op.CLICK, Op.LONG_CLICK, Op.SWITCH) and not ins.object:
            ins = Instruction(ins.op, ins.param, s.description.split(" ", 1)[-1])
        elif ins.op in (Op.CLICK, Op.LONG_CLICK, Op.SWITCH, Op.EDIT, Op.SCROLL) and s.description:
            obj = s.description
            for lead in ("tap ", "long-press ", "turn on ", "turn off "):
                if obj.startswith(lead):
                    obj = obj[len(lead):]
            if ins.op is Op.EDIT:
                obj = obj.split(" into ", 1)[1] if " into " in obj else ""
            if ins.op is Op.SCROLL:
                obj = obj.split(" in ", 1)[1] if " in " in obj else ""
            if obj.startswith("the "):
                obj = obj[4:]
            ins = Instruction(ins.op, ins.param, obj)
        steps.append(s.description or ins.in_words())
        instructions.append(ins)
        actions.append(s.action)
    return TaskRecord(goal=goal or macro.description or macro.name, steps=tuple(steps),
                      instructions=tuple(instructions), actions=tuple(actions), app=macro.app,
                      source="demonstration")


def is_success(episode: Episode) -> bool:
    return episode.status is EpisodeStatus.SUCCEEDED
