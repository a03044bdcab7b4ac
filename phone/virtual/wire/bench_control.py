"""``tapwise-bench``: the served virtual phone's benchmark side channel over adb shell.

A benchmark cell that drives a served virtual phone through adb (as the device farm does)
still needs what only the virtual phone can give: a reset to a task's starting state and
the app state its oracle reads.  This module answers two shell commands, both reachable
with a plain ``adb shell`` and nothing else:

- ``tapwise-bench reset PAYLOAD`` — PAYLOAD is base64 of a JSON object with optional
  ``seed`` (int), ``noise`` (``NoiseConfig`` fields) and ``state`` (overrides merged into a
  fresh state); the phone restarts from there, the home screen in front.
- ``tapwise-bench state`` — the phone's whole app state as one line of JSON.
- ``tapwise-bench shown`` — every toast and snackbar the phone showed since its last reset,
  with wall-clock shown/hidden times, as one line of JSON (what the record of a run is
  measured against).

It never runs tasks, judges success or talks to a model: the caller does that with the
state it reads back.  A real phone has no such command, which is how a caller tells a
virtual phone from a real one.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from typing import Any

from phone.virtual.wire.served_phone import ServedPhone

USAGE = "usage: tapwise-bench reset BASE64_JSON | tapwise-bench state | tapwise-bench shown\n"


def run(phone: ServedPhone, args: list[str]) -> tuple[int, str, str]:
    """Run one ``tapwise-bench`` command; returns (exit status, stdout, stderr)."""
    if not args or args[0] not in ("reset", "state", "shown"):
        return 2, "", USAGE
    sim = phone.phone
    if not hasattr(sim, "reset") or not hasattr(sim, "state"):
        return 1, "", "tapwise-bench: this phone has no resettable state\n"
    if args[0] == "shown":
        flashes = getattr(sim, "flashes", None)
        with phone.lock:
            shown = list(flashes.shown) if flashes is not None else []
        return 0, json.dumps(shown, separators=(",", ":")) + "\n", ""
    if args[0] == "state":
        with phone.lock:
            return 0, json.dumps(sim.state, separators=(",", ":"), default=list) + "\n", ""
    if len(args) != 2:
        return 2, "", USAGE
    try:
        payload = json.loads(base64.b64decode(args[1], validate=True).decode("utf-8"))
    except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return 2, "", f"tapwise-bench: the payload is not base64 of JSON ({exc})\n"
    if not isinstance(payload, dict):
        return 2, "", "tapwise-bench: the payload must be a JSON object\n"
    try:
        _reset(phone, payload)
    except (TypeError, ValueError) as exc:
        return 2, "", f"tapwise-bench: {exc}\n"
    return 0, "ok\n", ""


def _reset(phone: ServedPhone, payload: dict[str, Any]) -> None:
    sim: Any = phone.phone
    noise_fields = payload.get("noise") or {}
    with phone.lock:
        if "seed" in payload:
            sim.seed = int(payload["seed"])
        if noise_fields:
            if not isinstance(noise_fields, dict):
                raise ValueError("'noise' must be an object of NoiseConfig fields")
            known = {f.name for f in dataclasses.fields(sim.noise)}
            unknown = sorted(set(noise_fields) - known)
            if unknown:
                raise ValueError(f"unknown noise field(s): {', '.join(unknown)}")
            values = {k: tuple(v) if isinstance(v, list) else v for k, v in noise_fields.items()}
            sim.noise = dataclasses.replace(type(sim.noise)(), **values)
        state = payload.get("state") or None
        if state is not None and not isinstance(state, dict):
            raise ValueError("'state' must be an object")
        sim.reset(state)
    phone._changed()  # wake the screen streamers: the whole screen changed


def encode(payload: dict[str, Any]) -> str:
    """The PAYLOAD argument for ``tapwise-bench reset``."""
    return base64.b64encode(json.dumps(payload, separators=(",", ":")).encode("utf-8")).decode("ascii")
