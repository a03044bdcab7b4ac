"""Nothing in the agent names a development app, a development task or a task's own words:
what the agent knows of apps comes from the phone, exploration and fitted data, never from
the material it was developed on.  (The learned weights may hold interface words — "more",
"options", "settings" — but no file, item or person a task names.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from agent.knowledge.app_map import QUOTED
from phone.virtual.apps import APP_CLASSES, OPTIONAL_APPS
from phone.virtual.tasks import load_tasks

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "agent"
DROIDTASK = ROOT.parent / "shared" / "real-agent" / "droidtask-dev"
#: Names the development tasks give that are not words of any interface.
PROPER = ("Kenji", "Quinn", "CoffeeBar", "Hip Hop", "traveling_photos", "sunset", "test1", "test2", "video2.mp4",
          "Diary.pdf", "pic4.jpg", "I-love-you", "12345678900", "dentist")


def _agent_text() -> dict[Path, str]:
    files = [p for ext in ("*.py", "*.txt", "*.toml", "*.json") for p in AGENT.rglob(ext)]
    return {p: p.read_text(encoding="utf-8") for p in files if "__pycache__" not in p.parts}


def _forbidden() -> set[str]:
    words = set(PROPER)
    for task in load_tasks():
        words.add(task.id)
        for goal in task.goals:
            words.update(next(x for x in q if x) for q in QUOTED.findall(goal))
    words.update(cls.package for cls in (*APP_CLASSES, *OPTIONAL_APPS) if cls.package)
    if DROIDTASK.is_dir():
        for f in DROIDTASK.glob("*/task*.yaml"):
            goal = str(yaml.safe_load(f.read_text(encoding="utf-8")).get("task_name", ""))
            words.update(v for q in QUOTED.findall(goal) for v in q if v and len(v) >= 5 and not v.isalpha())
    return {w for w in words if len(w) >= 4}


@pytest.mark.parametrize("kind", ["package names, task ids and the tasks' own names and values"])
def test_the_agent_names_no_development_app_task_or_task_value(kind):
    found = []
    texts = _agent_text()
    for word in sorted(_forbidden()):
        pattern = re.compile(rf"(?<![\w.]){re.escape(word)}(?![\w])", re.I)
        found += [f"{p.relative_to(ROOT)}: {word!r}" for p, text in texts.items() if pattern.search(text)]
    assert not found, "\n".join(found)
