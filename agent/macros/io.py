"""Macros in and out: JSON (through ``agent.codec``'s schema envelope) and
Android-in-the-Wild-style trajectories.

Import failures raise ``MacroImportError`` whose message says what is wrong and what to
do; imports are bounded (``MAX_IMPORT_CHARS``, ``MAX_STEPS``) and every number is checked
(finite creation time, points that can lie on a screen).  Strings in, strings/dicts out:
reading and writing files is the caller's job.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from agent import codec
from agent.execute import MAX_COORDINATE
from agent.macros.editing import fill_parameters, used_parameters
from agent.macros.types import Macro
from agent.types import NotRepresentable
from vision.geometry import Size

log = logging.getLogger(__name__)


class MacroImportError(ValueError):
    """An imported macro could not be read; the message says why and what to do."""


def export_json(macro: Macro, *, indent: int | None = 2) -> str:
    """The macro as a schema-versioned JSON document."""
    return codec.dumps(macro, indent=indent)


#: The largest macro export accepted (characters); a long recorded macro is well under 1 MB.
MAX_IMPORT_CHARS = 8_000_000
#: The most steps an imported macro may have.
MAX_STEPS = 2_000


def import_json(text: str | bytes, *, source: str = "the file") -> Macro:
    """Read a macro exported by ``export_json``; raise ``MacroImportError`` on bad input."""
    if len(text) > MAX_IMPORT_CHARS:
        raise MacroImportError(
            f"cannot import {source}: it is {len(text) / 1e6:.1f} MB; a macro export is at most "
            f"{MAX_IMPORT_CHARS / 1e6:.0f} MB (up to {MAX_STEPS} steps). Split the macro and import the parts."
        )
    try:
        doc = codec.read_json(text)
        data = doc.get("data") if isinstance(doc, dict) else None
        if isinstance(data, dict) and "version" in data and type(data["version"]) is not int:
            raise codec.CodecError(f"the macro's 'version' must be a whole number, got {data['version']!r}")
        macro = codec.decode(doc, expected="macro")
    except codec.SchemaTooNew as exc:
        raise MacroImportError(f"cannot import {source}: {exc}") from exc
    except codec.CodecError as exc:
        raise MacroImportError(
            f"cannot import {source}: {exc}. Expected a Tapwise macro export "
            "({\"schema\": \"macro\", \"version\": 1, \"data\": {...}})"
        ) from exc
    if not isinstance(macro, Macro):  # pragma: no cover - codec guarantees the kind
        raise MacroImportError(f"cannot import {source}: not a macro")
    undeclared = [p for p in used_parameters(macro) if p not in macro.parameters]
    if undeclared:
        raise MacroImportError(
            f"cannot import {source}: typed text uses parameter(s) "
            + ", ".join("{" + p + "}" for p in undeclared)
            + " that the macro's 'parameters' list does not declare"
        )
    if not macro.steps:
        raise MacroImportError(f"cannot import {source}: the macro has no steps")
    problem = _numbers_problem(macro)
    if problem:
        raise MacroImportError(f"cannot import {source}: {problem}")
    return macro


def _numbers_problem(macro: Macro) -> str | None:
    """What is wrong with the macro's numbers (too many steps, a NaN time, a point no
    screen has), or ``None``."""
    if len(macro.steps) > MAX_STEPS:
        return f"the macro has {len(macro.steps)} steps; at most {MAX_STEPS} are accepted. Split it into parts."
    if not math.isfinite(macro.created_at) or macro.created_at < 0:
        return f"'created_at' must be a time in seconds since 1970, got {macro.created_at!r}"
    for i, step in enumerate(macro.steps, 1):
        a = step.action
        targets = [t for t in (a.target, step.target) if t is not None]
        points = [a.touch, a.lift, *(t.point for t in targets)]
        for p in points:
            if p is not None and not (0 <= p.x <= MAX_COORDINATE and 0 <= p.y <= MAX_COORDINATE):
                return (f"step {i} ({a.type.value}) points at ({p.x}, {p.y}), which is on no screen "
                        f"(0..{MAX_COORDINATE} pixels)")
        if a.duration_ms is not None and not 0 <= a.duration_ms <= 60_000:
            return f"step {i} lasts {a.duration_ms} ms; at most 60000 ms is accepted"
    return None


def to_aitw(macro: Macro, screen: Size, params: dict[str, str] | None = None) -> dict[str, Any]:
    """The macro as an AITW-style episode: goal plus one action dict per step.

    Steps without an AITW form (open_app, wait) are listed under ``skipped`` rather
    than silently dropped.  Parameters are filled from ``params`` when given, else
    left as ``{name}`` placeholders.
    """
    if params:
        macro = fill_parameters(macro, params)
    steps: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for i, s in enumerate(macro.steps):
        try:
            data = s.action.to_aitw(screen)
        except NotRepresentable as exc:
            skipped.append({"step_id": i, "action": s.action.type.value, "reason": str(exc),
                            "description": s.description})
            continue
        steps.append({"step_id": i, "description": s.description, **data})
    steps.append({"step_id": len(macro.steps), "description": "task complete",
                  "action_type": 10, "touch_point": [-1.0, -1.0], "lift_point": [-1.0, -1.0],
                  "typed_text": ""})
    return {
        "episode_id": f"{macro.id}-v{macro.version}",
        "goal_info": macro.description or macro.name,
        "app": macro.app,
        "screen": [screen.width, screen.height],
        "episode_length": len(steps),
        "steps": steps,
        "skipped": skipped,
    }
