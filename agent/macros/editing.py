"""Editing macros: re-describe, edit, reorder, insert and delete steps, turn typed text
into parameters, and fill parameters at run time.

Macros are frozen: every edit returns the next version (same id, ``version + 1``).
No I/O, no device.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from agent.macros.types import Macro, MacroStep
from agent.types import ActionType, Target

_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class MacroEditError(ValueError):
    """An edit that cannot be applied (bad index, bad parameter name...)."""


class MissingParameter(ValueError):
    """A macro parameter has no value; the message names the missing ones."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(
            "missing value for macro parameter(s): " + ", ".join(f"{{{n}}}" for n in names)
            + " — pass them, e.g. --param " + names[0] + "=..."
        )
        self.names = names


def parameters_in(text: str) -> list[str]:
    """Parameter names used in ``text`` (``{contact}`` → ``contact``), in order."""
    return list(dict.fromkeys(_PARAM.findall(text or "")))


def used_parameters(macro: Macro) -> list[str]:
    names: list[str] = []
    for s in macro.steps:
        if s.action.type is ActionType.TYPE:
            names += parameters_in(s.action.text or "")
    return list(dict.fromkeys(names))


def next_version(macro: Macro, steps: tuple[MacroStep, ...] | None = None, **changes: object) -> Macro:
    """The same macro with changes and its version bumped; parameters kept in sync."""
    new = replace(macro, steps=macro.steps if steps is None else steps, version=macro.version + 1, **changes)  # type: ignore[arg-type]
    declared = list(new.parameters)
    for p in used_parameters(new):
        if p not in declared:
            declared.append(p)
    return replace(new, parameters=tuple(declared))


def _check(macro: Macro, index: int) -> None:
    if not 0 <= index < len(macro.steps):
        raise MacroEditError(f"step {index + 1} does not exist: the macro has {len(macro.steps)} step(s)")


def redescribe(macro: Macro, index: int, description: str) -> Macro:
    """Change the words of a step (also what the LLM grounder will look for)."""
    _check(macro, index)
    if not description.strip():
        raise MacroEditError("a step description cannot be empty")
    step = macro.steps[index]
    target = replace(step.target, description=description) if step.target else None
    action = replace(step.action, target=target) if target is not None and step.action.target is not None else step.action
    steps = list(macro.steps)
    steps[index] = replace(step, description=description, target=target, action=action)
    return next_version(macro, tuple(steps))


def replace_step(macro: Macro, index: int, step: MacroStep) -> Macro:
    _check(macro, index)
    steps = list(macro.steps)
    steps[index] = step
    return next_version(macro, tuple(steps))


def delete_step(macro: Macro, index: int) -> Macro:
    _check(macro, index)
    if len(macro.steps) == 1:
        raise MacroEditError("cannot delete the only step of a macro; delete the macro instead")
    steps = list(macro.steps)
    del steps[index]
    return next_version(macro, tuple(steps))


def move_step(macro: Macro, index: int, to: int) -> Macro:
    _check(macro, index)
    _check(macro, to)
    steps = list(macro.steps)
    steps.insert(to, steps.pop(index))
    return next_version(macro, tuple(steps))


def insert_step(macro: Macro, index: int, step: MacroStep) -> Macro:
    if not 0 <= index <= len(macro.steps):
        raise MacroEditError(f"cannot insert at step {index + 1}: the macro has {len(macro.steps)} step(s)")
    steps = list(macro.steps)
    steps.insert(index, step)
    return next_version(macro, tuple(steps))


def rename(macro: Macro, name: str, description: str | None = None) -> Macro:
    if not name.strip():
        raise MacroEditError("a macro needs a name")
    return next_version(macro, name=name, description=macro.description if description is None else description)


def parameterize(macro: Macro, index: int, name: str) -> Macro:
    """Turn the text typed in step ``index`` into the parameter ``{name}``."""
    _check(macro, index)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise MacroEditError(f"bad parameter name {name!r}: use letters, digits and _")
    step = macro.steps[index]
    if step.action.type is not ActionType.TYPE:
        raise MacroEditError(f"step {index + 1} types no text ({step.action.type.value}); only typed text can become a parameter")
    old = step.action.text or ""
    action = replace(step.action, text=f"{{{name}}}")
    description = step.description.replace(f"'{old}'", f"'{{{name}}}'") if old else step.description
    steps = list(macro.steps)
    steps[index] = replace(step, action=action, description=description)
    return next_version(macro, tuple(steps))


def fill_parameters(macro: Macro, values: Mapping[str, str]) -> Macro:
    """A copy whose typed text has every ``{name}`` replaced; raises ``MissingParameter``."""
    needed = list(dict.fromkeys([*macro.parameters, *used_parameters(macro)]))
    missing = [n for n in needed if n not in values or values[n] == ""]
    if missing:
        raise MissingParameter(missing)
    steps = []
    for s in macro.steps:
        if s.action.type is ActionType.TYPE and s.action.text:
            text = _PARAM.sub(lambda m: str(values[m.group(1)]), s.action.text)
            desc = _PARAM.sub(lambda m: str(values[m.group(1)]), s.description)
            s = replace(s, action=replace(s.action, text=text), description=desc)
        steps.append(s)
    return replace(macro, steps=tuple(steps))


def with_target(step: MacroStep, target: Target) -> MacroStep:
    return replace(step, target=target, action=replace(step.action, target=target))
