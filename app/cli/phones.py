"""The phone a command runs on (``tapwise run``, ``tapwise mcp``): the virtual phone or an
adb serial, set up for a task, streamed over scrcpy when the run is to be recorded.

``open_phone`` returns the phone, the task (virtual phone only) and what the task's check
reads: the in-process phone, or — when the run is recorded, which needs the mirrored
stream — the virtual phone served in its own process and reached through adb
(``phone.virtual.launcher``), its state read over ``adb shell tapwise-bench``.  Problems
are a ``PhoneProblem`` with the message to print.  Heavy imports stay inside.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any


class PhoneProblem(RuntimeError):
    """The phone could not be opened; the message says why."""


@dataclass
class OpenedPhone:
    phone: Any
    task: Any = None  # phone.virtual.tasks.Task, on the virtual phone with --task
    judged: Any = None  # what ``task.is_success`` reads
    note: str = ""  # to tell the user (how the phone was opened)
    mirror_problem: str = ""  # why the stream did not start (nothing can be recorded)


def open_phone(device: str, task_id: str | None, *, streamed: bool = False) -> OpenedPhone:
    """See the module docstring; ``streamed`` starts the scrcpy mirror (and waits for its
    first frame) so the run can be recorded."""
    from agent.device import DeviceError

    task = None
    if device == "sim" and task_id:
        from phone.virtual.tasks import load_tasks

        task = {t.id: t for t in load_tasks()}.get(task_id)
        if task is None:
            raise PhoneProblem(f"no task {task_id!r}; see `tapwise sim tasks`")
    if device == "sim" and not streamed:
        from phone.virtual.phone import VirtualPhone

        sim = VirtualPhone()
        if task is not None:
            task.setup(sim)
        return OpenedPhone(sim, task, sim)
    note = ""
    try:
        if device == "sim":
            from phone.virtual.launcher import launch_device
            from phone.virtual.remote import ServedSimPhone

            phone: Any = launch_device()
            judged: Any = ServedSimPhone(phone.inner)
            if task is not None:
                judged.reset(task.initial_state or None)
            note = "recording needs the mirrored stream: the virtual phone is served in its own process"
        else:
            from phone.adb.adb_device import AdbDevice

            if not streamed:
                return OpenedPhone(AdbDevice(device))
            from phone.adb.mirror import MirroredDevice

            phone = judged = MirroredDevice(AdbDevice(device))
    except DeviceError as exc:
        raise PhoneProblem(str(exc)) from None
    return OpenedPhone(phone, task, judged, note, start_mirror(phone))


def start_mirror(phone: Any, timeout: float = 20.0) -> str:
    """Start the scrcpy mirror and wait for its first frame; why it did not, or ""."""
    from agent.device import DeviceError

    try:
        mirror = phone.start_mirror()
    except DeviceError as exc:
        return str(exc)
    end = time.monotonic() + timeout
    while mirror.latest() is None and mirror.running and time.monotonic() < end:
        time.sleep(0.05)
    if mirror.latest() is None:
        return "the mirror sent no picture"
    return ""
