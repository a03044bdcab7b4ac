"""Tasks for the virtual phone, loaded from YAML data files, and their oracles.

A task file holds one task (a mapping) or several (a list, or a mapping with a
``tasks:`` list).  Each task has an id, goal phrasings (``goals:``, English, the first
one the wording everything was tuned on; ``goals_de:`` for the phone in German), the app, initial-state
overrides, a success condition and ordered checkpoints evaluated on ``phone.state``, a
step budget and a reference solution whose targets (element text, resource id,
content-desc) are resolved against the phone's ground truth when replayed; a reference
step that must wait for the user's approval is marked ``sensitive: <category>``
(``{tap: Delete, sensitive: deleting}``); the targets name English screen text and are
put in the phone's language when resolved (``phone.virtual.localise``).  Errors in a
file name the file and the field.  This module evaluates and replays; it draws nothing.

Conditions (``success`` and each checkpoint) are mappings:
``{path: settings.wifi, eq: false}`` with one of ``eq ne ieq contains icontains gte lte
in len_gte len_eq has`` (``has`` matches a list of mappings against the given fields,
strings compared case-insensitively), ``{visited: "package/page"}``, or the combinators
``{all: [...]}``, ``{any: [...]}``, ``{not: {...}}``.

A task that types a secret refers to it as ``{{secret:NAME}}`` in its goals and steps and
holds ``secrets: {NAME: value}``: what the user keeps in their vault for it.  Its reference
steps type those values (``Step.secret_text``); a run gets them from the vault it is given.
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from agent.device import Key
from agent.execute import execute
from agent.types import Action, ActionType, Direction, Fingerprint, Target
from phone.virtual.i18n import LANGUAGES
from phone.virtual.localise import local_target

if TYPE_CHECKING:
    from phone.virtual.phone import VirtualPhone
    from phone.virtual.truth import GroundTruth, TruthElement

log = logging.getLogger(__name__)

BUILTIN_DIR = Path(__file__).with_name("tasks")
_OPS = ("eq", "ne", "ieq", "contains", "icontains", "gte", "lte", "in", "len_gte", "len_eq", "has")
_SIMPLE = {"back": ActionType.BACK, "home": ActionType.HOME, "enter": ActionType.ENTER, "wait": ActionType.WAIT,
           "complete": ActionType.COMPLETE, "impossible": ActionType.IMPOSSIBLE}
_TARGET_KEYS = {"text", "id", "desc", "contains", "near", "index", "kind", "icon"}


class TaskError(ValueError):
    """A task file is malformed; the message names the file and the field."""


class WordingError(ValueError):
    """A task has no goal in the asked language, or not that many wordings."""


class StepError(RuntimeError):
    """A reference step could not be resolved on the current screen."""


_MISSING = object()


def get_path(state: dict, path: str) -> Any:
    cur: Any = state
    for part in (p.replace("\\.", ".") for p in re.split(r"(?<!\\)\.", path)):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.lstrip("-").isdigit() and -len(cur) <= int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return _MISSING
    return cur


def _norm(v: Any) -> Any:
    if isinstance(v, str):
        return " ".join(v.replace("\u2011", "-").replace("\u00a0", " ").split()).lower()
    return v


def _match_item(item: Any, want: dict) -> bool:
    if not isinstance(item, dict):
        return False
    for k, v in want.items():
        got = get_path(item, k)
        if got is _MISSING or _norm(got) != _norm(v):
            return False
    return True


def check_condition(cond: dict, state: dict) -> bool:
    if "all" in cond:
        return all(check_condition(c, state) for c in cond["all"])
    if "any" in cond:
        return any(check_condition(c, state) for c in cond["any"])
    if "not" in cond:
        return not check_condition(cond["not"], state)
    if "visited" in cond:
        return cond["visited"] in state.get("ui", {}).get("visited", [])
    value = get_path(state, cond["path"])
    if value is _MISSING:
        return False
    op = next(o for o in _OPS if o in cond)
    want = cond[op]
    try:
        if op == "eq":
            return value == want
        if op == "ne":
            return value != want
        if op == "ieq":
            return _norm(str(value)) == _norm(str(want))
        if op == "contains":
            return want in value
        if op == "icontains":
            if isinstance(value, list):
                return any(_norm(str(want)) in _norm(str(v)) for v in value)
            return _norm(str(want)) in _norm(str(value))
        if op == "gte":
            return value >= want
        if op == "lte":
            return value <= want
        if op == "in":
            return value in want
        if op == "len_gte":
            return len(value) >= want
        if op == "len_eq":
            return len(value) == want
        if op == "has":
            return any(_match_item(i, want) for i in value)
    except TypeError:
        return False
    return False


def _validate_condition(cond: Any, where: str) -> None:
    if not isinstance(cond, dict) or not cond:
        raise TaskError(f"{where}: a condition must be a non-empty mapping, got {cond!r}")
    if "all" in cond or "any" in cond:
        key = "all" if "all" in cond else "any"
        items = cond[key]
        if not isinstance(items, list) or not items:
            raise TaskError(f"{where}.{key}: must be a non-empty list of conditions")
        for i, c in enumerate(items):
            _validate_condition(c, f"{where}.{key}[{i}]")
        return
    if "not" in cond:
        _validate_condition(cond["not"], f"{where}.not")
        return
    if "visited" in cond:
        if not isinstance(cond["visited"], str):
            raise TaskError(f"{where}.visited: must be a string like 'com.android.settings/network'")
        return
    if "path" not in cond or not isinstance(cond["path"], str):
        raise TaskError(f"{where}: needs 'path' (a dotted state path), or all/any/not/visited")
    ops = [o for o in _OPS if o in cond]
    if len(ops) != 1:
        raise TaskError(f"{where}: needs exactly one operator of {', '.join(_OPS)}; got {sorted(cond)}")
    extra = set(cond) - {"path", *ops}
    if extra:
        raise TaskError(f"{where}: unknown keys {sorted(extra)}")
    if ops[0] == "has" and not isinstance(cond["has"], dict):
        raise TaskError(f"{where}.has: must be a mapping of fields to match")


@dataclass(frozen=True)
class Step:
    """One reference step: an action kind plus, for taps, a target resolved at replay time."""

    kind: str
    target: dict[str, Any] | None = None
    text: str | None = None
    direction: str | None = None
    app: str | None = None
    key: str | None = None
    #: what the step does that must wait for approval (``deleting``, ``sending``, ``paying``,
    #: ``installing``, ``security``, ``secret``), written ``{tap: Delete, sensitive: deleting}``
    sensitive: str | None = None
    #: A ``type`` step that refers to a secret types this value (the task's ``secrets``);
    #: the step's ``text`` and its action keep the reference.
    secret_text: str | None = field(default=None, repr=False, compare=False)

    def describe(self) -> str:
        if self.target:
            return f"{self.kind} {self.target}"
        return f"{self.kind} {self.text or self.direction or self.app or self.key or ''}".strip()

    def resolve(self, truth: GroundTruth, lang: str = "en") -> TruthElement:
        """The element this step names on ``truth``'s screen; on a phone in another
        language ``lang``, the target's English words are first put in that language."""
        t = local_target(self.target or {}, lang)
        cands = list(truth.elements)
        if "text" in t:
            cands = [e for e in cands if _norm(e.text) == _norm(str(t["text"]))]
        if "contains" in t:
            cands = [e for e in cands if _norm(str(t["contains"])) in _norm(e.text)]
        if "desc" in t:
            cands = [e for e in cands if _norm(e.label) == _norm(str(t["desc"]))]
        if "icon" in t:
            cands = [e for e in cands if e.icon == t["icon"]]
        if "kind" in t:
            cands = [e for e in cands if e.kind.value == t["kind"]]
        if "id" in t:
            rid = str(t["id"])
            cands = [e for e in cands if e.resource_id == rid or e.resource_id.endswith("/" + rid)]
        if not cands:
            raise StepError(f"no element matches {t} on this screen ({truth.package}/{truth.activity})")
        if "near" in t:
            anchors = [e for e in truth.elements if _norm(e.text) == _norm(str(t["near"]))]
            if not anchors:
                raise StepError(f"no element with text {t['near']!r} to be near")
            a = anchors[0].rect.center
            cands.sort(key=lambda e: abs(e.rect.center.y - a.y) * 4 + abs(e.rect.center.x - a.x))
        else:
            cands.sort(key=lambda e: (not e.clickable, 0))
        idx = int(t.get("index", 0))
        if idx >= len(cands):
            raise StepError(f"only {len(cands)} elements match {t}")
        return cands[idx]

    def to_action(self, phone: VirtualPhone) -> Action:
        """The concrete ``agent.types.Action`` for the phone's current screen."""
        k = self.kind
        if k in ("tap", "long_press"):
            el = self.resolve(phone.ground_truth(), getattr(phone, "lang", "en"))
            c = el.rect.center
            target = Target(point=c, description=el.text or el.label or el.resource_id,
                            fingerprint=Fingerprint(text=el.text, label=el.label, resource_id=el.resource_id,
                                                    class_name=el.class_name, kind=el.kind.value))
            if k == "tap":
                return Action.tap(c.x, c.y, target=target)
            return Action(ActionType.LONG_PRESS, touch=c, target=target, duration_ms=800)
        if k == "swipe":
            size = phone.screen_size()
            return Action.scroll(Direction(self.direction).opposite, size)  # type: ignore[arg-type]
        if k == "scroll":
            return Action.scroll(self.direction or "down", phone.screen_size())
        if k == "type":
            return Action.type_text(self.text or "")
        if k == "open_app":
            return Action.open_app(self.app or "")
        if k in _SIMPLE:
            return Action(_SIMPLE[k])
        if k == "key":
            raise StepError("raw key steps have no Action form; use execute()")
        raise StepError(f"unknown step kind {k!r}")

    def execute(self, phone: VirtualPhone) -> Action | None:
        """Perform the step through the phone's public input API; returns the action."""
        if self.kind == "key":
            phone.key(Key(self.key))
            return None
        action = self.to_action(phone)
        perform(phone, action if self.secret_text is None else Action.type_text(self.secret_text))
        return action


def perform(phone: VirtualPhone, action: Action) -> None:
    """Execute an ``agent.types.Action`` on the phone through the Device API."""
    execute(action, phone)


@dataclass(frozen=True)
class Task:
    id: str
    goals: tuple[str, ...]
    app: str
    success: dict[str, Any]
    solution: tuple[Step, ...]
    step_budget: int
    checkpoints: tuple[dict[str, Any], ...] = ()
    initial_state: dict[str, Any] = field(default_factory=dict)
    impossible: bool = False
    tags: tuple[str, ...] = ()
    source: str = ""
    #: goals written for the phone in another language (``goals_de:`` in YAML), by language
    local_goals: dict[str, tuple[str, ...]] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)  # {{secret:NAME}} -> value, for replays and tests

    @property
    def goal(self) -> str:
        """Wording 0 in English: the one the agent was tuned on."""
        return self.goals[0]

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages this task has goals in (English always first)."""
        return ("en", *sorted(self.local_goals))

    def wordings(self, language: str = "en") -> tuple[str, ...]:
        """Every wording of the goal in ``language`` (empty when none was written)."""
        return self.goals if language == "en" else self.local_goals.get(language, ())

    def wording(self, index: int, language: str = "en") -> str:
        """Wording ``index`` in ``language``; ``WordingError`` saying what exists otherwise."""
        found = self.wordings(language)
        if not found:
            raise WordingError(f"task {self.id} has no goals in {language!r} (it has: {', '.join(self.languages)})")
        if not 0 <= index < len(found):
            raise WordingError(f"task {self.id} has {len(found)} wording(s) in {language!r} (0 to {len(found) - 1}); "
                               f"there is no wording {index}")
        return found[index]

    def setup(self, phone: VirtualPhone, language: str | None = None) -> None:
        """Reset the phone to this task's start: fresh state plus overrides, home screen;
        with ``language``, the phone's UI in that language (a setting of its state, so a
        phone served over adb switches too)."""
        if language is None:
            phone.reset(self.initial_state)
            return
        if language not in LANGUAGES:
            raise WordingError(f"the virtual phone has no language {language!r}; choose one of {', '.join(LANGUAGES)}")
        state = copy.deepcopy(self.initial_state)
        state.setdefault("settings", {})["language"] = language
        phone.reset(state)

    def is_success(self, phone: VirtualPhone, final_action: Action | None = None) -> bool:
        """Whether the task is done.  Impossible tasks succeed only when the final action
        is ``impossible``; others when the success condition holds on the phone state."""
        if self.impossible:
            return final_action is not None and final_action.type is ActionType.IMPOSSIBLE
        if final_action is not None and final_action.type is ActionType.IMPOSSIBLE:
            return False
        return check_condition(self.success, phone.state)

    def checkpoints_done(self, phone: VirtualPhone) -> int:
        """How many checkpoints hold, counted in order from the first."""
        n = 0
        for cp in self.checkpoints:
            if not check_condition(cp, phone.state):
                break
            n += 1
        return n

    def checkpoint_flags(self, phone: VirtualPhone) -> list[bool]:
        return [check_condition(cp, phone.state) for cp in self.checkpoints]

    def reference_actions(self) -> tuple[Step, ...]:
        return self.solution


def replay(task: Task, phone: VirtualPhone, *, setup: bool = True) -> list[Action | None]:
    """Run the reference solution through the public input API; returns the actions."""
    if setup:
        task.setup(phone)
    done: list[Action | None] = []
    for i, step in enumerate(task.solution):
        try:
            done.append(step.execute(phone))
        except StepError as exc:
            raise StepError(f"task {task.id}, step {i + 1} ({step.describe()}): {exc}") from exc
    return done


# ---- parsing ----------------------------------------------------------------------------


_SENSITIVE_KINDS = ("deleting", "sending", "paying", "installing", "security", "secret")


def _parse_step(raw: Any, where: str) -> Step:
    if isinstance(raw, dict) and "sensitive" in raw:
        rest = {k: v for k, v in raw.items() if k != "sensitive"}
        mark = raw["sensitive"]
        if mark not in _SENSITIVE_KINDS:
            raise TaskError(f"{where}.sensitive: must be one of {', '.join(_SENSITIVE_KINDS)}, got {mark!r}")
        inner: Any = rest
        if len(rest) == 1 and next(iter(rest.values())) is None:  # {enter: null, sensitive: sending}
            inner = next(iter(rest))
        return replace(_parse_step(inner, where), sensitive=mark)
    if isinstance(raw, str):
        name = raw.strip().lower()
        if name in _SIMPLE:
            return Step(name)
        raise TaskError(f"{where}: unknown step {raw!r}; use back/home/enter/complete/impossible/wait or a mapping")
    if not isinstance(raw, dict) or len(raw) != 1:
        raise TaskError(f"{where}: a step must be a word (back) or a one-key mapping (tap: ...), got {raw!r}")
    (kind, arg), = raw.items()
    if kind in ("tap", "long_press"):
        if isinstance(arg, str):
            return Step(kind, target={"text": arg})
        if not isinstance(arg, dict) or not arg:
            raise TaskError(f"{where}.{kind}: needs a text string or a target mapping (text/id/desc/contains/near)")
        bad = set(arg) - _TARGET_KEYS
        if bad:
            raise TaskError(f"{where}.{kind}: unknown target keys {sorted(bad)}; allowed {sorted(_TARGET_KEYS)}")
        return Step(kind, target=dict(arg))
    if kind in ("swipe", "scroll"):
        if arg not in ("up", "down", "left", "right"):
            raise TaskError(f"{where}.{kind}: direction must be up/down/left/right, got {arg!r}")
        if kind == "scroll":
            return Step("scroll", direction=arg)
        return Step("swipe", direction=arg)
    if kind == "type":
        if not isinstance(arg, (str, int)) or str(arg) == "":
            raise TaskError(f"{where}.type: needs non-empty text")
        return Step("type", text=str(arg))
    if kind == "open_app":
        if not isinstance(arg, str) or not arg.strip():
            raise TaskError(f"{where}.open_app: needs an app name or package")
        return Step("open_app", app=arg)
    if kind == "key":
        try:
            Key(str(arg).upper())
        except ValueError:
            raise TaskError(f"{where}.key: unknown key {arg!r}; use one of {[k.value for k in Key]}") from None
        return Step("key", key=str(arg).upper())
    raise TaskError(f"{where}: unknown step kind {kind!r}")


_FIELDS = {"id", "goals", "goal", "app", "success", "solution", "step_budget", "checkpoints", "initial_state",
           "impossible", "tags", "secrets"}
_LOCAL_GOALS = {f"goals_{lang}": lang for lang in LANGUAGES if lang != "en"}


def _goal_list(raw: Any, key: str, where: str) -> tuple[str, ...]:
    goals = [raw] if isinstance(raw, str) else raw
    if not isinstance(goals, list) or not goals or not all(isinstance(g, str) and g.strip() for g in goals):
        raise TaskError(f"{where}: field {key!r} must be a non-empty list of strings")
    if len({" ".join(g.split()).casefold() for g in goals}) != len(goals):
        raise TaskError(f"{where}: field {key!r} lists the same wording twice")
    return tuple(goals)


def parse_task(raw: Any, source: str, index: int | None = None) -> Task:
    where = f"{source}" + (f"[{index}]" if index is not None else "")
    if not isinstance(raw, dict):
        raise TaskError(f"{where}: a task must be a mapping, got {type(raw).__name__}")
    tid = raw.get("id")
    if not isinstance(tid, str) or not tid.strip():
        raise TaskError(f"{where}: field 'id' is missing or not a string")
    where = f"{source}: task {tid!r}"
    unknown = set(raw) - _FIELDS - set(_LOCAL_GOALS)
    if unknown:
        raise TaskError(f"{where}: unknown field(s) {sorted(unknown)}; allowed {sorted(_FIELDS | set(_LOCAL_GOALS))}")
    goals = _goal_list(raw.get("goals", raw.get("goal")), "goals", where)
    local = {lang: _goal_list(raw[key], key, where) for key, lang in _LOCAL_GOALS.items() if key in raw}
    app = raw.get("app")
    if not isinstance(app, str) or not app.strip():
        raise TaskError(f"{where}: field 'app' must be a package name")
    impossible = bool(raw.get("impossible", False))
    success = raw.get("success")
    if success is None and impossible:
        success = {"path": "ui.foreground", "eq": "__never__"}
    if success is None:
        raise TaskError(f"{where}: field 'success' is missing")
    _validate_condition(success, f"{where}: field 'success'")
    cps = raw.get("checkpoints", []) or []
    if not isinstance(cps, list):
        raise TaskError(f"{where}: field 'checkpoints' must be a list of conditions")
    for i, cp in enumerate(cps):
        _validate_condition(cp, f"{where}: field 'checkpoints[{i}]'")
    sol = raw.get("solution")
    if not isinstance(sol, list) or not sol:
        raise TaskError(f"{where}: field 'solution' must be a non-empty list of steps")
    steps = tuple(_parse_step(s, f"{where}: field 'solution[{i}]'") for i, s in enumerate(sol))
    budget = raw.get("step_budget", max(5, 2 * len(steps)))
    if not isinstance(budget, int) or budget < len(steps):
        raise TaskError(f"{where}: field 'step_budget' must be an integer >= the solution length ({len(steps)})")
    init = raw.get("initial_state", {}) or {}
    if not isinstance(init, dict):
        raise TaskError(f"{where}: field 'initial_state' must be a mapping")
    tags = raw.get("tags", []) or []
    if not isinstance(tags, list):
        raise TaskError(f"{where}: field 'tags' must be a list")
    secrets = raw.get("secrets", {}) or {}
    if not isinstance(secrets, dict) or not all(isinstance(k, str) and isinstance(v, (str, int))
                                                for k, v in secrets.items()):
        raise TaskError(f"{where}: field 'secrets' must map secret names to values")
    secrets = {k: str(v) for k, v in secrets.items()}
    steps = tuple(_with_secret(s, secrets, f"{where}: field 'solution[{i}]'") for i, s in enumerate(steps))
    return Task(id=tid, goals=goals, local_goals=local, app=app, success=success, solution=steps, step_budget=budget,
                checkpoints=tuple(cps), initial_state=init, impossible=impossible, tags=tuple(map(str, tags)),
                source=source, secrets=secrets)


def _with_secret(step: Step, secrets: dict[str, str], where: str) -> Step:
    """A ``type`` step that refers to a secret, with the value it types (from the task's ``secrets``)."""
    from agent.secrets import SecretMissing, names_in, resolve

    if step.kind != "type" or not names_in(step.text):
        return step
    try:
        return replace(step, secret_text=resolve(step.text or "", lambda n: secrets[n] if n in secrets
                                                  else _missing(n)))
    except SecretMissing as exc:
        raise TaskError(f"{where}: refers to {{{{secret:{exc.name}}}}}, which the task's 'secrets' does not hold") from None


def _missing(name: str) -> str:
    from agent.secrets import SecretMissing

    raise SecretMissing(name)


def load_task_file(path: Path) -> list[Task]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise TaskError(f"{path}: not valid YAML: {exc}") from None
    except OSError as exc:
        raise TaskError(f"{path}: cannot read: {exc}") from None
    if isinstance(data, dict) and "tasks" in data:
        data = data["tasks"]
    if isinstance(data, list):
        return [parse_task(t, str(path), i) for i, t in enumerate(data)]
    if data is None:
        raise TaskError(f"{path}: the file is empty")
    return [parse_task(data, str(path))]


def load_tasks(extra_dirs: Iterable[str | Path] = (), *, builtin: bool = True) -> list[Task]:
    """All tasks: the built-in ones plus every ``*.yaml``/``*.yml``/``*.json`` in ``extra_dirs``."""
    dirs: list[Path] = [BUILTIN_DIR] if builtin else []
    dirs += [Path(d) for d in extra_dirs]
    tasks: list[Task] = []
    seen: dict[str, str] = {}
    for d in dirs:
        if not d.is_dir():
            raise TaskError(f"{d}: not a folder of task files")
        for path in sorted(list(d.glob("*.yaml")) + list(d.glob("*.yml")) + list(d.glob("*.json"))):
            for t in load_task_file(path):
                if t.id in seen:
                    raise TaskError(f"{path}: task id {t.id!r} is already defined in {seen[t.id]}")
                seen[t.id] = str(path)
                tasks.append(t)
    return tasks


def tasks_by_id(tasks: Sequence[Task]) -> dict[str, Task]:
    return {t.id: t for t in tasks}
