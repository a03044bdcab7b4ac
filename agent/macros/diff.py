"""Comparing two versions of a macro, step by step.

Steps are aligned with ``difflib`` on what they do (action kind plus words); aligned
pairs that differ in detail (words, typed text, fingerprint, coordinates) are reported
as changed.  Pure functions; rendering is plain text for the CLI and GUI to show.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from agent.macros.types import Macro, MacroStep


@dataclass(frozen=True, slots=True)
class StepChange:
    """One difference: ``kind`` is added, removed, changed or same."""

    kind: str
    old_index: int | None
    new_index: int | None
    old: MacroStep | None
    new: MacroStep | None
    details: tuple[str, ...] = ()


def _key(s: MacroStep) -> str:
    return f"{s.action.type.value}:{s.description.casefold()}"


def _details(a: MacroStep, b: MacroStep) -> tuple[str, ...]:
    out: list[str] = []
    if a.description != b.description:
        out.append(f"words: {a.description!r} -> {b.description!r}")
    if a.action.type != b.action.type:
        out.append(f"action: {a.action.type.value} -> {b.action.type.value}")
    if a.action.text != b.action.text:
        out.append(f"text: {a.action.text!r} -> {b.action.text!r}")
    if a.action.touch != b.action.touch:
        ta = f"({a.action.touch.x}, {a.action.touch.y})" if a.action.touch else "-"
        tb = f"({b.action.touch.x}, {b.action.touch.y})" if b.action.touch else "-"
        out.append(f"point: {ta} -> {tb}")
    fa = a.target.fingerprint if a.target else None
    fb = b.target.fingerprint if b.target else None
    if fa != fb:
        fields = [f for f in ("text", "label", "resource_id", "class_name", "kind", "block_caption",
                              "block_role", "rel_x", "rel_y", "crop_hash")
                  if getattr(fa, f, None) != getattr(fb, f, None)]
        out.append("fingerprint: " + (", ".join(fields) if fields else "added/removed"))
    if a.expected_package != b.expected_package:
        out.append(f"package: {a.expected_package} -> {b.expected_package}")
    return tuple(out)


def diff_macros(old: Macro, new: Macro) -> list[StepChange]:
    """The step-level differences between two macros (usually two versions of one)."""
    a, b = [_key(s) for s in old.steps], [_key(s) for s in new.steps]
    changes: list[StepChange] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            for k in range(i2 - i1):
                sa, sb = old.steps[i1 + k], new.steps[j1 + k]
                d = _details(sa, sb)
                changes.append(StepChange("changed" if d else "same", i1 + k, j1 + k, sa, sb, d))
        elif op == "replace" and (i2 - i1) == (j2 - j1):
            for k in range(i2 - i1):
                sa, sb = old.steps[i1 + k], new.steps[j1 + k]
                changes.append(StepChange("changed", i1 + k, j1 + k, sa, sb, _details(sa, sb)))
        else:
            for k in range(i1, i2):
                changes.append(StepChange("removed", k, None, old.steps[k], None))
            for k in range(j1, j2):
                changes.append(StepChange("added", None, k, None, new.steps[k]))
    return changes


def render_diff(old: Macro, new: Macro, *, show_same: bool = False) -> str:
    """A readable diff: ``+`` added, ``-`` removed, ``~`` changed, ``=`` same."""
    lines = [f"{old.name} v{old.version} -> {new.name} v{new.version}"]
    if old.name != new.name:
        lines.append(f"  name: {old.name!r} -> {new.name!r}")
    if old.parameters != new.parameters:
        lines.append(f"  parameters: {list(old.parameters)} -> {list(new.parameters)}")
    for c in diff_macros(old, new):
        if c.kind == "same" and not show_same:
            continue
        mark = {"added": "+", "removed": "-", "changed": "~", "same": "="}[c.kind]
        idx = c.new_index if c.new_index is not None else c.old_index
        step = c.new or c.old
        assert step is not None and idx is not None
        lines.append(f"{mark} {idx + 1:>2}. {step.description}")
        lines.extend(f"       {d}" for d in c.details)
    if len(lines) == 1:
        lines.append("  (no step differences)")
    return "\n".join(lines)


def summarize(old: Macro | None, new: Macro, *, limit: int = 2) -> str:
    """What a version changed, in a few words: "step 3 changed: 'tap Wi-Fi' → 'open Settings'"."""
    if old is None:
        return f"recorded, {len(new.steps)} step{'s' if len(new.steps) != 1 else ''}"
    said: list[str] = []
    if old.name != new.name:
        said.append(f"renamed from {old.name!r}")
    if old.parameters != new.parameters:
        said.append("parameters: " + (", ".join(new.parameters) or "none"))
    changes = [c for c in diff_macros(old, new) if c.kind != "same"]
    for c in changes[:limit]:
        if c.kind == "changed" and c.old is not None and c.new is not None and c.new_index is not None:
            words = (f": {c.old.description!r} → {c.new.description!r}" if c.old.description != c.new.description
                     else "")
            said.append(f"step {c.new_index + 1} changed{words}")
        elif c.kind == "added" and c.new is not None and c.new_index is not None:
            said.append(f"step {c.new_index + 1} added: {c.new.description!r}")
        elif c.kind == "removed" and c.old is not None and c.old_index is not None:
            said.append(f"step {c.old_index + 1} removed: {c.old.description!r}")
    if len(changes) > limit:
        said.append(f"{len(changes) - limit} more change{'s' if len(changes) - limit != 1 else ''}")
    return "; ".join(said) or "no step differences"
