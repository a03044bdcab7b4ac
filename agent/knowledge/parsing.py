"""The parsing agent (Prompt2Task §4.1.3): step descriptions — from the task
repository or tutorial text the user pastes — become an editable instruction table
(open, click, long click, switch, edit, scroll, back).

Known compound steps are expanded from the instruction set; the rest go to the LLM in
one prompt that carries the instruction definitions and similar solved mappings as
examples.  Rows the LLM leaves out or garbles are parsed by rules, and without an LLM
the rules do everything.  ``LLM`` is any ``prompt -> reply`` callable.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from .context import extract_json
from .repository import InstructionSet
from .types import Instruction, Op, to_op

log = logging.getLogger(__name__)

LLM = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class InstructionRow:
    step: str
    instruction: Instruction
    origin: str = "rules"  # rules | llm | instruction_set | user


@dataclass(frozen=True, slots=True)
class InstructionTable:
    """The parsed, user-editable plan.  Edits return a new table."""

    rows: tuple[InstructionRow, ...] = ()

    @property
    def instructions(self) -> tuple[Instruction, ...]:
        return tuple(r.instruction for r in self.rows)

    def _check(self, i: int) -> None:
        if not 0 <= i < len(self.rows):
            raise IndexError(f"row {i + 1} does not exist: the table has {len(self.rows)} row(s)")

    def edit(self, i: int, *, op: str | Op | None = None, param: str | None = None,
             object: str | None = None) -> InstructionTable:
        self._check(i)
        r = self.rows[i]
        ins = r.instruction
        new = Instruction(to_op(str(op)) if op is not None else ins.op,
                          ins.param if param is None else param,
                          ins.object if object is None else object)
        rows = list(self.rows)
        rows[i] = replace(r, instruction=new, origin="user")
        return InstructionTable(tuple(rows))

    def delete(self, i: int) -> InstructionTable:
        self._check(i)
        return InstructionTable(self.rows[:i] + self.rows[i + 1:])

    def insert(self, i: int, instruction: Instruction, step: str = "") -> InstructionTable:
        if not 0 <= i <= len(self.rows):
            raise IndexError(f"cannot insert at row {i + 1}")
        row = InstructionRow(step or instruction.in_words(), instruction, "user")
        return InstructionTable(self.rows[:i] + (row,) + self.rows[i:])

    def move(self, i: int, to: int) -> InstructionTable:
        self._check(i)
        self._check(to)
        rows = list(self.rows)
        rows.insert(to, rows.pop(i))
        return InstructionTable(tuple(rows))

    def render(self) -> str:
        lines = ["| # | operation | parameter | object | from step |", "|---|---|---|---|---|"]
        for n, r in enumerate(self.rows, 1):
            i = r.instruction
            lines.append(f"| {n} | {i.op.value} | {i.param} | {i.object} | {r.step} |")
        return "\n".join(lines)


# ---- splitting tutorial text into steps -----------------------------------------------------

_NUMBERED = re.compile(r"^\s*(?:step\s*)?\d+\s*[.):\-]\s*", re.I)
_BULLET = re.compile(r"^\s*[-*\u2022]\s*")


def split_steps(text: str) -> list[str]:
    """Break tutorial text or a description into single steps."""
    parts: list[str] = []
    for line in text.replace("\r", "").split("\n"):
        line = _BULLET.sub("", _NUMBERED.sub("", line)).strip()
        if not line:
            continue
        for chunk in re.split(r"\s*(?:->|→|>>|;|\bthen\b|(?<=[a-z0-9'\"])\.\s+(?=[A-Z]))\s*", line):
            chunk = chunk.strip(" ,.")
            chunk = re.sub(r"^(and|first|next|finally|after that|now)\s+,?\s*", "", chunk, flags=re.I)
            chunk = re.sub(r"^,\s*", "", chunk).strip()
            if chunk:
                parts.append(chunk)
    return parts


# ---- rules ------------------------------------------------------------------------------------

_Q = r"['\"\u2018\u2019\u201c\u201d]"


def _clean_obj(s: str) -> str:
    s = s.strip(" .,")
    s = re.sub(r"^(on|at)\s+", "", s, flags=re.I)
    return re.sub(r"^the\s+", "", s, flags=re.I).strip()


def rule_parse(step: str) -> Instruction:
    """Parse one step by patterns; unknown phrasing becomes a click on the words."""
    s = step.strip().rstrip(".")
    low = s.lower()
    m = re.match(r"^(?:open|launch|start|go to)\s+(?:the\s+)?(.+?)(?:\s+app(?:lication)?)?$", s, re.I)
    if m and not re.search(r"\b(tab|page|menu|screen|settings? page)\b", low):
        return Instruction(Op.OPEN, _clean_obj(m.group(1)))
    m = re.match(r"^(?:long[\s-]?press|long[\s-]?click|press and hold|hold)\s+(?:on\s+)?(.+)$", s, re.I)
    if m:
        return Instruction(Op.LONG_CLICK, "800", _clean_obj(m.group(1)))
    m = re.match(r"^(?:turn|switch|toggle)\s+(on|off)\s+(.+)$", s, re.I) or re.match(
        r"^(?:turn|switch|toggle)\s+(.+?)\s+(on|off)$", s, re.I)
    if m:
        a, b = m.group(1), m.group(2)
        state, obj = (a, b) if a.lower() in ("on", "off") else (b, a)
        return Instruction(Op.SWITCH, state.lower(), _clean_obj(obj))
    m = re.match(r"^(enable|disable)\s+(.+)$", s, re.I)
    if m:
        return Instruction(Op.SWITCH, "on" if m.group(1).lower() == "enable" else "off", _clean_obj(m.group(2)))
    m = re.match(rf"^(?:type|enter|input|write|fill in)\s+{_Q}(.+?){_Q}(?:\s+(?:in|into|in the|on)\s+(.+))?$", s, re.I)
    if m:
        return Instruction(Op.EDIT, m.group(1), _clean_obj(m.group(2) or ""))
    m = re.match(r"^(?:type|enter|input|write)\s+(.+?)(?:\s+(?:in|into)\s+(.+))?$", s, re.I)
    if m:
        return Instruction(Op.EDIT, m.group(1).strip(" '\""), _clean_obj(m.group(2) or ""))
    m = re.match(r"^(?:scroll|swipe)\s+(up|down|left|right)?(?:\s*(?:in|on|through)\s+(.+))?", s, re.I)
    if m:
        return Instruction(Op.SCROLL, (m.group(1) or "down").lower(), _clean_obj(m.group(2) or ""))
    if re.match(r"^(?:go\s+)?(?:to\s+the\s+)?home(?:\s*screen)?$|^go home", low):
        return Instruction(Op.BACK, "homepage")
    if re.match(r"^(?:go\s+|press\s+)?back\b|^return\b|^navigate back", low):
        return Instruction(Op.BACK, "previous")
    m = re.match(r"^(?:tap|click|press|select|choose|touch|hit|open)\s+(?:on\s+)?(.+)$", s, re.I)
    if m:
        return Instruction(Op.CLICK, "1", _clean_obj(m.group(1)))
    return Instruction(Op.CLICK, "1", _clean_obj(s))


# ---- the agent ----------------------------------------------------------------------------------


OP_TABLE = """Operations (choose one per instruction):
- open: parameter = the app's name
- click: parameter = how many times (default 1); object = the control to tap
- long_click: parameter = press time in ms (default 800); object = the control
- switch: parameter = on or off; object = the switch or checkbox
- edit: parameter = the text to type; object = the text field
- scroll: parameter = up, down, left or right (the direction the content moves into view); object = the list (optional)
- back: parameter = previous or homepage"""


def build_prompt(steps: Sequence[str], examples: Sequence[tuple[str, Sequence[Instruction]]]) -> str:
    lines = [
        "Turn each numbered phone-task step into one or more instructions.",
        OP_TABLE,
        "Describe the object by its visible text, icon or position, as a user would.",
        'Reply with ONLY a JSON list like [{"step": 1, "op": "click", "param": "1", "object": "Wi-Fi"}].',
    ]
    if examples:
        lines.append("Examples of steps parsed before:")
        for desc, ins in examples:
            rendered = "; ".join(f'{{"op": "{i.op.value}", "param": "{i.param}", "object": "{i.object}"}}' for i in ins)
            lines.append(f"- {desc!r} => {rendered}")
    lines.append("Steps:")
    lines += [f"{n}. {s}" for n, s in enumerate(steps, 1)]
    return "\n".join(lines)


class ParsingAgent:
    def __init__(self, llm: LLM | None = None, instruction_set: InstructionSet | None = None) -> None:
        self.llm = llm
        self.iset = instruction_set
        self.last_prompt: str = ""

    def parse(self, text_or_steps: str | Sequence[str]) -> InstructionTable:
        steps = split_steps(text_or_steps) if isinstance(text_or_steps, str) else [s for s in text_or_steps if s.strip()]
        if not steps:
            raise ValueError("no steps found in the text: give one step per line or numbered steps")
        per_step: dict[int, list[InstructionRow]] = {}
        todo: list[int] = []
        for i, s in enumerate(steps):
            dec = self.iset.decomposition(s) if self.iset is not None else None
            if dec:
                per_step[i] = [InstructionRow(s, ins, "instruction_set") for ins in dec]
            else:
                todo.append(i)
        if todo and self.llm is not None:
            per_step.update(self._ask_llm(steps, todo))
        for i in todo:
            if i not in per_step:
                per_step[i] = [InstructionRow(steps[i], rule_parse(steps[i]), "rules")]
        rows = [r for i in range(len(steps)) for r in per_step[i]]
        return InstructionTable(tuple(rows))

    def _ask_llm(self, steps: list[str], todo: list[int]) -> dict[int, list[InstructionRow]]:
        examples: list[tuple[str, Sequence[Instruction]]] = []
        if self.iset is not None:
            seen = set()
            for i in todo:
                for m in self.iset.similar(steps[i], k=2):
                    if m.description not in seen:
                        seen.add(m.description)
                        examples.append((m.description, m.instructions))
        sub = [steps[i] for i in todo]
        self.last_prompt = build_prompt(sub, examples[:8])
        assert self.llm is not None
        try:
            data = extract_json(self.llm(self.last_prompt))
        except Exception as exc:
            log.warning("parsing agent: unusable LLM reply (%s); using rules", exc)
            return {}
        if isinstance(data, dict):
            data = data.get("instructions", [data])
        out: dict[int, list[InstructionRow]] = {}
        for item in data if isinstance(data, list) else []:
            if not isinstance(item, dict):
                continue
            try:
                n = int(item.get("step", 0)) - 1
                ins = Instruction(to_op(str(item.get("op", ""))), str(item.get("param", "") or ""),
                                  str(item.get("object", "") or ""))
            except (ValueError, TypeError) as exc:
                log.info("parsing agent: skipped a bad row %r (%s)", item, exc)
                continue
            if 0 <= n < len(todo):
                i = todo[n]
                out.setdefault(i, []).append(InstructionRow(steps[i], ins, "llm"))
        return out
