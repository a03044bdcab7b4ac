"""What every input of a benchmark cell really did: the virtual phone's truth beside the command.

``TruthRecordingDevice`` wraps a ``VirtualPhone`` for the online benchmark: it can perturb
or drop taps (grounding noise, seeded) and records, for every input, what was commanded
and what the phone's ground truth says was touched (``Performed``); ``combine`` folds the
inputs of one agent step into one record.  Qt-free, model-free; it judges nothing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from agent.device import Key


@dataclass(frozen=True)
class Performed:
    """What an input really did, next to what was commanded."""

    kind: str
    commanded: str
    performed: str
    target: str = ""
    text: str = ""
    matches: bool = True


def _label(el: Any, truth: Any = None) -> str:
    """How a person would name the element: its text or label, else the first text
    inside it (a list row's title), else its icon, id or kind."""
    if el is None:
        return ""
    if el.text or el.label:
        return str(el.text or el.label)
    if truth is not None:
        inner = [e for e in truth.elements if e is not el and (e.text or e.label) and el.rect.contains_rect(e.rect)]
        if inner:
            first = min(inner, key=lambda e: (e.rect.top, e.rect.left))
            return str(first.text or first.label)
    return str(getattr(el, "icon", "") or el.resource_id.split("/")[-1] or el.kind.value)


def _hit(truth: Any, x: int, y: int) -> Any:
    """The element a touch at (x, y) lands on: the smallest clickable one containing the
    point, else the smallest element with text."""
    inside = [e for e in truth.elements if e.rect.left <= x < e.rect.right and e.rect.top <= y < e.rect.bottom]
    clickable = [e for e in inside if e.clickable]
    pool = clickable or [e for e in inside if e.text or e.label]
    return min(pool, key=lambda e: e.rect.area) if pool else None


class TruthRecordingDevice:
    """Wraps a ``VirtualPhone``: optionally perturbs or drops taps (grounding noise) and
    records, for every input, what was commanded and what really happened."""

    def __init__(self, phone: Any, *, seed: int = 0, tap_sd_px: float = 0.0, drop: float = 0.0) -> None:
        self.phone = phone
        self._rng = random.Random(f"bench-grounding-{seed}")
        self.tap_sd_px = tap_sd_px
        self.drop = drop
        self.log: list[Performed] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.phone, name)

    @property
    def info(self) -> Any:
        return self.phone.info

    def screen_size(self) -> Any:
        return self.phone.screen_size()

    def screenshot(self, *, with_hierarchy: bool = False) -> Any:
        return self.phone.screenshot(with_hierarchy=with_hierarchy)

    def dump_hierarchy(self) -> str:
        return self.phone.dump_hierarchy()

    def foreground(self) -> tuple[str, str]:
        return self.phone.foreground()

    def close(self) -> None:
        self.phone.close()

    def _touch(self, x: int, y: int, kind: str, do: Any) -> None:
        truth = self.phone.ground_truth()
        intended = _hit(truth, x, y)
        if self.drop and self._rng.random() < self.drop:
            self.log.append(Performed(kind, f"{kind} {_label(intended, truth)}".strip(), "", "", "", False))
            return
        ax, ay = x, y
        if self.tap_sd_px:
            size = self.phone.screen_size()
            ax = min(max(0, round(x + self._rng.gauss(0, self.tap_sd_px))), size.width - 1)
            ay = min(max(0, round(y + self._rng.gauss(0, self.tap_sd_px))), size.height - 1)
        actual = _hit(truth, ax, ay)
        same = (intended is None and actual is None) or (
            intended is not None and actual is not None and intended.id == actual.id
        )
        do(ax, ay)
        self.log.append(
            Performed(kind, f"{kind} {_label(intended, truth)}".strip(), f"{kind} {_label(actual, truth)}".strip(),
                      _label(actual, truth), "", same)
        )

    def tap(self, x: int, y: int) -> None:
        self._touch(x, y, "tap", self.phone.tap)

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._touch(x, y, "tap", lambda ax, ay: self.phone.long_press(ax, ay, duration_ms))

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self.phone.swipe(x1, y1, x2, y2, duration_ms)
        d = "down" if y2 < y1 else "up" if abs(y2 - y1) >= abs(x2 - x1) else ("right" if x2 < x1 else "left")
        self.log.append(Performed("scroll", f"scroll {d}", f"scroll {d}"))

    def input_text(self, text: str) -> None:
        self.phone.input_text(text)
        self.log.append(Performed("type", f"type {text!r}", f"type {text!r}", "", text, True))

    def key(self, key: Key | str) -> None:
        k = Key(key) if not isinstance(key, Key) else key
        self.phone.key(k)
        name = k.value.lower()
        self.log.append(Performed(name, f"press {name}", f"press {name}"))

    def open_app(self, name_or_package: str) -> None:
        self.phone.open_app(name_or_package)
        self.log.append(Performed("open_app", f"open {name_or_package}", f"open {name_or_package}", name_or_package))


def combine(entries: list[Performed]) -> Performed | None:
    """One step may send several inputs (typing taps its field first): the last one names
    the kind; the step did what was commanded only if every input did."""
    if not entries:
        return None
    last = entries[-1]
    return Performed(
        kind=last.kind,
        commanded=" then ".join(e.commanded for e in entries),
        performed=" then ".join(e.performed for e in entries if e.performed),
        target=last.target,
        text=last.text,
        matches=all(e.matches for e in entries),
    )
