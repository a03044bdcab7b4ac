"""The one place where stored things are turned into JSON and back.

Every stored document is wrapped in an envelope ``{"schema": KIND, "version": N,
"data": ...}``.  Reading a document from a newer schema raises ``SchemaTooNew``;
an older one is migrated step by step through ``MIGRATIONS``.  Conversion of the
frozen dataclasses is delegated to pydantic's ``TypeAdapter`` (which understands
stdlib dataclasses, enums and tuples), so no hand-written field lists drift out of date.
This module does no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from agent.macros.types import Macro
from agent.types import Action, Decision, Episode, LatentState, Proposal, Step, Target
from vision.types import ScreenParse

T = TypeVar("T")

#: Kinds of stored documents and their current schema versions.
SCHEMAS: dict[str, tuple[type, int]] = {
    "episode": (Episode, 2),
    "step": (Step, 3),
    "macro": (Macro, 2),
    "action": (Action, 1),
    "target": (Target, 1),
    "proposal": (Proposal, 1),
    "decision": (Decision, 1),
    "latent_state": (LatentState, 1),
    "screen_parse": (ScreenParse, 1),
}



def _step_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 records where each step's time went; older steps were not timed."""
    return {**data, "timings_ms": data.get("timings_ms") or []}


def _step_2_to_3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3 keeps what flashed on the screen after a step; older steps saw nothing."""
    return {**data, "transients": data.get("transients") or []}


def _episode_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 spells the ask-every-step autonomy ``approve`` (version 1: ``approve_all``)
    and times its steps."""
    out = dict(data)
    if out.get("autonomy") in (None, "", "approve_all"):
        out["autonomy"] = "approve"
    out["steps"] = [_step_1_to_2(s) if isinstance(s, dict) else s for s in out.get("steps") or []]
    return out


def _macro_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 may say of a step how it was healed (``MacroStep.healed``); older steps were not."""
    return {**data, "steps": [{**s, "healed": None} if isinstance(s, dict) else s for s in data.get("steps") or []]}


#: ``MIGRATIONS[kind][v]`` turns version ``v`` data into version ``v + 1`` data.
MIGRATIONS: dict[str, dict[int, Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "step": {1: _step_1_to_2, 2: _step_2_to_3},
    "episode": {1: _episode_1_to_2},
    "macro": {1: _macro_1_to_2},
}


class CodecError(ValueError):
    """A stored document could not be read; the message says what and where."""


class SchemaTooNew(CodecError):
    """The document was written by a newer Tapwise than this one."""


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def _adapter(cls: type) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


def kind_of(obj: object) -> str:
    for kind, (cls, _) in SCHEMAS.items():
        if type(obj) is cls:
            return kind
    raise TypeError(f"{type(obj).__name__} is not a stored type")


def to_data(obj: object) -> Any:
    """The JSON-compatible form of a core object, without an envelope."""
    return _adapter(type(obj)).dump_python(obj, mode="json")


def from_data(cls: type[T], data: Any) -> T:
    """Build a core object from its JSON-compatible form; errors name the field."""
    try:
        return _adapter(cls).validate_python(data)  # type: ignore[no-any-return]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "(top level)"
        raise CodecError(
            f"invalid {cls.__name__}: field {where}: {first.get('msg')} "
            f"({exc.error_count()} problem(s) in all)"
        ) from exc
    except (ValueError, TypeError) as exc:
        raise CodecError(f"invalid {cls.__name__}: {exc}") from exc


def encode(obj: object) -> dict[str, Any]:
    """Wrap an object in its schema envelope."""
    kind = kind_of(obj)
    return {"schema": kind, "version": SCHEMAS[kind][1], "data": to_data(obj)}


def decode(doc: Any, expected: str | None = None) -> Any:
    """Read an envelope, migrating older versions; raise ``CodecError`` on anything odd."""
    if not isinstance(doc, dict):
        raise CodecError(f"expected a JSON object, got {type(doc).__name__}")
    missing = [k for k in ("schema", "version", "data") if k not in doc]
    if missing:
        raise CodecError(f"not a Tapwise document: missing {', '.join(missing)}")
    kind = doc["schema"]
    if kind not in SCHEMAS:
        raise CodecError(f"unknown document kind {kind!r}")
    if expected is not None and kind != expected:
        raise CodecError(f"expected a {expected} document, got a {kind} document")
    cls, current = SCHEMAS[kind]
    version = doc["version"]
    if type(version) is not int or version < 1:  # bool is an int to Python, not a version
        raise CodecError(f"bad schema version {version!r}")
    if version > current:
        raise SchemaTooNew(
            f"this {kind} was written with schema version {version}, but this Tapwise "
            f"reads up to version {current}: upgrade Tapwise to open it"
        )
    data = doc["data"]
    while version < current:
        step = MIGRATIONS.get(kind, {}).get(version)
        if step is None:
            raise CodecError(f"no migration for {kind} from version {version}")
        data = step(data)
        version += 1
    return from_data(cls, data)


def dumps(obj: object, **kwargs: Any) -> str:
    return json.dumps(encode(obj), ensure_ascii=False, **kwargs)


#: How deeply a document read by ``loads`` may nest (Tapwise's own documents stay far below).
MAX_DEPTH = 64


def _no_constant(name: str) -> Any:
    raise CodecError(f"not valid JSON: {name} is not a number JSON allows")


def outside_strings(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """``(index, character)`` of ``text`` from ``start`` on, leaving out what lies inside a
    JSON string (its quotes too): the characters that give the text its structure."""
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        else:
            yield i, ch


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in ``text``, outside strings (cheap, no recursion)."""
    depth = deepest = 0
    for _i, ch in outside_strings(text):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def loads(text: str | bytes, expected: str | None = None) -> Any:
    """Read a document from JSON text (see ``read_json``) and decode it."""
    return decode(read_json(text), expected)


def read_json(text: str | bytes) -> Any:
    """Parse untrusted JSON text.  Refuses (``CodecError``) bytes that are not UTF-8,
    ``NaN``/``Infinity``, and nesting deeper than ``MAX_DEPTH``: nothing here raises anything else."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CodecError(f"not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    if nesting_depth(text) > MAX_DEPTH:
        raise CodecError(f"not a Tapwise document: nested more than {MAX_DEPTH} levels deep")
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise CodecError(f"not valid JSON: {exc}") from exc
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise CodecError("not a Tapwise document: nested too deeply") from None
