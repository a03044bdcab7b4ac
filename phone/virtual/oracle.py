"""The virtual phone's own verdict on a goal typed in the window.

When the goal is one of the virtual phone's task goals (any of its phrasings, in any
language, compared
without case, spacing or a final full stop), the task's success condition decides whether
the run succeeded: ``judge_for(goal, device)`` returns a judge the runner calls with the
final action, reading the phone's state in the window's process (the in-window phone) or
over adb (the phone served in its own process).  For any other goal, and on a real phone,
there is no judge and the user is asked.

Reads state only: never changes the phone, never sets a task up.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from typing import Any

from agent.types import Action

log = logging.getLogger(__name__)

Judge = Callable[[Action | None], bool]


def _key(goal: str) -> str:
    return re.sub(r"\s+", " ", goal).strip().rstrip(".!").casefold()


@functools.cache
def _goals() -> dict[str, Any]:
    from phone.virtual.tasks import load_tasks

    index: dict[str, Any] = {}
    for task in load_tasks():
        for goal in (*task.goals, *(g for lang in task.languages[1:] for g in task.wordings(lang))):
            index.setdefault(_key(goal), task)
    return index


def task_for_goal(goal: str) -> Any:
    """The built-in task whose goal this is (``phone.virtual.tasks.Task``), or None."""
    try:
        return _goals().get(_key(goal))
    except Exception as exc:  # unreadable task files: no verdict, the user is asked
        log.warning("the virtual phone's tasks could not be read: %s", exc)
        return None


def _state_holder(device: object) -> Any:
    """What holds the phone's ``state``: the phone itself, or its state over adb."""
    from phone.virtual.launcher import LaunchedDevice
    from phone.virtual.phone import VirtualPhone
    from phone.virtual.remote import ServedSimPhone

    inner = device
    if isinstance(inner, VirtualPhone):
        return inner
    if isinstance(inner, LaunchedDevice):
        return ServedSimPhone(inner.inner)
    return None


def judge_for(goal: str, device: object) -> Judge | None:
    """A judge for ``goal`` on ``device`` when it is the virtual phone and the goal one of its tasks."""
    task = task_for_goal(goal)
    if task is None:
        return None
    holder = _state_holder(device)
    if holder is None:
        return None

    def judge(final: Action | None) -> bool:
        return bool(task.is_success(holder, final))

    log.info("the virtual phone will judge %r (task %s)", goal, task.id)
    return judge
