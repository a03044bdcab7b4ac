"""Macros in and out: JSON (through ``agent.codec``'s schema envelope) and
Android-in-the-Wild-style trajectories.

Import failures raise ``MacroImportError`` whose message says what is wrong and what to
do.  Strings in, strings/dicts out: reading and writing files is the caller's job.
"""

from __future__ import annotations

import logging
from typing import Any

from agent import codec
from agent.macros.editing import fill_parameters, used_parameters
from agent.types import Macro, NotRepresentable
from vision.geometry import Size

log = logging.getLogger(__name__)


class MacroImportError(ValueError):
    """An imported macro could not be read; the message says why and what to do."""


def export_json(macro: Macro, *, indent: int | None = 2) -> str:
    """The macro as a schema-versioned JSON document."""
    return codec.dumps(macro, indent=indent)


def import_json(text: str, *, source: str = "the file") -> Macro:
    """Read a macro exported by ``export_json``; raise ``MacroImportError`` on bad input."""
    try:
        macro = codec.loads(text, expected="macro")
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
    return macro


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
