"""The grounding benchmark's run: each instruction carried out as a one-step goal on its
screen, the tap point scored against the target box, every result kept as it is known.

Per screen, the screenshot is parsed once from pixels (no tree; ScreenSpot has none).
Per instruction, a ``Chooser`` turns the goal and the parse into a tap: ``ModelChooser``
goes the window's way (``evaluation.offline.replay.StepReplayer``: the planner with the
screen's own evidence, the model's structured reply, the grounder); ``OracleChooser`` is
a scripted chooser that always names the element under the target (the ceiling the parse
allows).  Before choosing, a ``second_look`` (optional) may add what a closer reading of
the screen finds for the goal's words; what it did is part of the evidence.

A ``Verdict`` holds the tap point, whether it lies inside the target box (ScreenSpot's
strict accuracy) and whether the parse offered an element holding the target's centre
(coverage), so a miss of the parse and a miss of the choice are told apart; and how the
elements are named (``naming``): the one under the target, and the counts over all the
screen offers, so the share of elements no goal's words can point at is known.  Results go
to a JSON-lines file, one line per instruction, written as soon as it is known; a run
started again with the same file skips what is already there.  No printing, no Qt.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Protocol

from agent.screen_text import description, fenced
from agent.structured import choosable, element_name, takes_a_tap
from evaluation.grounding.records import GroundingRecord
from vision.geometry import Point
from vision.naming import is_description
from vision.row_parts import tap_point
from vision.types import Element, Screen, ScreenParse

log = logging.getLogger(__name__)

SCHEMA = 1


@dataclass(frozen=True, slots=True)
class Choice:
    """Where a chooser tapped (``point`` None: it did not tap) and why."""

    point: Point | None
    element: Element | None = None
    evidence: tuple[str, ...] = ()
    error: str | None = None
    llm_calls: int = 0
    reply: str = ""  # the action as the chooser said it ("tap 'Focus mode' [12]")
    decided_by: str = ""  # who chose: the planner's name ("zeroshot-"), "+screen" when the evidence acted alone


class Chooser(Protocol):
    name: str

    def choose(self, goal: str, parse: ScreenParse, record: GroundingRecord) -> Choice: ...


class SecondLook(Protocol):
    """Reads the screen again for a goal; returns the parse to use and what it did."""

    def __call__(self, goal: str, screen: Screen, parse: ScreenParse) -> tuple[ScreenParse, tuple[str, ...]]: ...


def offered(parse: ScreenParse) -> list[Element]:
    """The elements a reply may name with a tap (what the model chooses from)."""
    return [e for e in choosable(parse) if takes_a_tap(e)]


#: How an offered element is named, from most to least use to a goal's words.
NAMINGS = ("words", "name", "described", "bare")


def naming(e: Element) -> str:
    """``words``: its own text; ``name``: a label it carries (the icon classifier's, the
    tree's description, the words beside it); ``described``: only a description made here
    by kind, place and neighbour ("icon right of 'Focus mode'"); ``bare``: nothing."""
    if e.text:
        return "words"
    label = e.label.split(" · ")[0].strip()
    if not label:
        return "bare"
    return "described" if is_description(label) else "name"


def namings(parse: ScreenParse) -> tuple[int, ...]:
    """How many offered elements of ``parse`` are named each way (in ``NAMINGS``' order)."""
    kinds = [naming(e) for e in offered(parse)]
    return tuple(kinds.count(k) for k in NAMINGS)


def covering(parse: ScreenParse, point: Point) -> Element | None:
    """The smallest offered element holding ``point``, or None."""
    hits = [e for e in offered(parse) if e.rect.contains(point)]
    return min(hits, key=lambda e: e.rect.area) if hits else None


class OracleChooser:
    """Always taps the element under the target's centre (the smallest offered one holding
    it), where the grounder aims at it (``vision.row_parts.tap_point``); with none there, no tap."""

    name = "oracle"

    def choose(self, goal: str, parse: ScreenParse, record: GroundingRecord) -> Choice:
        e = covering(parse, record.box.center)
        if e is None:
            return Choice(None, None, ("no element holds the target's centre",), "not in the parse")
        return Choice(tap_point(e, parse.elements), e, (f"element under the target [{e.id}]",),
                      reply=f"tap {element_name(e)!r} [{e.id}]")


class ModelChooser:
    """The window's one step: planner (with the screen's evidence), structured reply, grounder."""

    def __init__(self, replayer: object, name: str = "model") -> None:
        self.replayer = replayer  # an ``evaluation.offline.replay.StepReplayer``
        self.name = name

    def choose(self, goal: str, parse: ScreenParse, record: GroundingRecord) -> Choice:
        from evaluation.offline.replay import Observation

        obs = Observation(parse, fenced(description(parse)))
        pred = self.replayer.predict(goal, obs, (), 0)  # type: ignore[attr-defined]
        evidence = tuple(pred.proposal.evidence) if pred.proposal is not None else ()
        who = pred.proposal.planner if pred.proposal is not None else ""
        if pred.action is None:
            return Choice(None, None, evidence, pred.error or "no action", len(pred.calls))
        action = pred.action
        point = action.touch or (action.target.point if action.target is not None else None)
        el = parse.element(action.target.element_id) if action.target is not None and action.target.element_id else None
        if point is None:
            return Choice(None, el, evidence, f"no tap: {action.describe()}", len(pred.calls), action.describe(), who)
        return Choice(point, el, evidence, None, len(pred.calls), action.describe(), who)


@dataclass(frozen=True, slots=True)
class Verdict:
    """One instruction's outcome, as stored."""

    key: str
    screen: str
    half: str
    kind: str
    instruction: str
    box: tuple[int, int, int, int]  # left, top, right, bottom
    point: tuple[int, int] | None
    inside: bool
    covered: bool  # an offered element holds the target's centre
    cover_words: str  # that element's words
    element: str  # the words of the element tapped
    reply: str
    evidence: tuple[str, ...]
    error: str | None
    looked_again: bool
    llm_calls: int
    parse_s: float  # this screen's parse, shared by its instructions
    choose_s: float
    chooser: str
    decided_by: str = ""
    cover_naming: str = ""  # how the element under the target is named (``NAMINGS``), "" if none
    screen_namings: tuple[int, ...] = ()  # the screen's offered elements per ``NAMINGS`` (first parse)
    schema: int = SCHEMA


def judge(record: GroundingRecord, parse: ScreenParse, choice: Choice, *, chooser: str, parse_s: float,
          choose_s: float, looked_again: bool = False, screen_namings: tuple[int, ...] = ()) -> Verdict:
    cover = covering(parse, record.box.center)
    p = choice.point
    return Verdict(
        key=record.key, screen=record.screen, half=record.half, kind=record.kind, instruction=record.instruction,
        box=(record.box.left, record.box.top, record.box.right, record.box.bottom),
        point=(p.x, p.y) if p is not None else None, inside=p is not None and record.box.contains(p),
        covered=cover is not None, cover_words=element_name(cover) if cover is not None else "",
        element=element_name(choice.element) if choice.element is not None else "", reply=choice.reply,
        evidence=choice.evidence, error=choice.error, looked_again=looked_again, llm_calls=choice.llm_calls,
        parse_s=round(parse_s, 3), choose_s=round(choose_s, 3), chooser=chooser, decided_by=choice.decided_by,
        cover_naming=naming(cover) if cover is not None else "", screen_namings=screen_namings)


class ResultsFile:
    """The run's JSON-lines file: a first line with the run's settings, then one verdict a line.

    Opening an existing file with other settings is refused (a run is continued only as
    it was started); a line cut short by a crash is ignored (that instruction runs again)."""

    def __init__(self, path: Path, settings: dict[str, object]) -> None:
        self.path = path
        self.settings = settings
        self.done: dict[str, Verdict] = {}
        if path.is_file() and path.stat().st_size:
            self._read()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"settings": settings}) + "\n", encoding="utf-8")

    def _read(self) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        try:
            head = json.loads(lines[0])["settings"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ValueError(f"{self.path} is not a grounding results file; name another --out") from exc
        if head != self.settings:
            diff = sorted(k for k in set(head) | set(self.settings) if head.get(k) != self.settings.get(k))
            raise ValueError(f"{self.path} holds a run with other settings ({', '.join(diff)}); "
                             "name another --out, or the same settings to continue it")
        for line in lines[1:]:
            try:
                v = _verdict(json.loads(line))
            except (ValueError, KeyError, TypeError):
                log.warning("ignoring an unreadable line in %s", self.path)
                continue
            self.done[v.key] = v

    def add(self, v: Verdict) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(asdict(v)) + "\n")
        self.done[v.key] = v


def _verdict(data: dict) -> Verdict:
    data = dict(data)
    data["box"] = tuple(data["box"])
    data["point"] = tuple(data["point"]) if data.get("point") is not None else None
    data["evidence"] = tuple(data.get("evidence") or ())
    data["screen_namings"] = tuple(data.get("screen_namings") or ())
    return Verdict(**data)


@dataclass
class Progress:
    """What a caller hears while the run goes on."""

    on_screen: Callable[[str, float], None] | None = None
    on_verdict: Callable[[Verdict, int, int], None] | None = None
    skipped: int = 0
    errors: list[str] = field(default_factory=list)


def run(records: Sequence[GroundingRecord], parse: Callable[[Screen], ScreenParse], chooser: Chooser,
        results: ResultsFile, *, second_look: SecondLook | None = None, progress: Progress | None = None) -> list[Verdict]:
    """Every record not yet in ``results``, screen by screen; returns all verdicts of ``records``."""
    from vision.imageio import load_rgb

    progress = progress or Progress()
    todo = [r for r in records if r.key not in results.done]
    progress.skipped = len(records) - len(todo)
    total, n = len(records), progress.skipped
    for screen_name, group in _by_screen(todo):
        image = load_rgb(group[0].image)
        screen = Screen(image)
        t0 = time.perf_counter()
        base = parse(screen)
        parse_s = time.perf_counter() - t0
        named = namings(base)
        if progress.on_screen is not None:
            progress.on_screen(screen_name, parse_s)
        for rec in group:
            t1 = time.perf_counter()
            this: ScreenParse = base
            notes: tuple[str, ...] = ()
            if second_look is not None:
                this, notes = second_look(rec.instruction, screen, base)
            try:
                choice = chooser.choose(rec.instruction, this, rec)
            except Exception as exc:  # one broken step must not end a long run
                log.exception("choosing for %s failed", rec.key)
                choice = Choice(None, None, (), f"{type(exc).__name__}: {exc}")
            if notes:
                choice = replace(choice, evidence=(*notes, *choice.evidence))
            v = judge(rec, this, choice, chooser=chooser.name, parse_s=parse_s,
                      choose_s=time.perf_counter() - t1, looked_again=bool(notes), screen_namings=named)
            results.add(v)
            n += 1
            if progress.on_verdict is not None:
                progress.on_verdict(v, n, total)
    return [results.done[r.key] for r in records if r.key in results.done]


def _by_screen(records: Iterable[GroundingRecord]) -> list[tuple[str, list[GroundingRecord]]]:
    groups: dict[str, list[GroundingRecord]] = {}
    for r in records:
        groups.setdefault(r.screen, []).append(r)
    return list(groups.items())
