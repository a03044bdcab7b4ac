"""Play one benchmark cell on one farm phone (runs inside a Ray worker).

A ``local`` slot plays the cell exactly as ``tapwise bench online`` does (an in-process
virtual phone).  A ``served`` slot plays it on a virtual phone served over the ADB
protocol on the worker's host: the agent sees and drives it only through adb (screen,
hierarchy, input), and the task's oracle reads the phone's state through the phone's
``tapwise-bench`` shell command.  Grounding noise becomes the phone's own tap noise
there.  A real phone (``adb``) cannot be judged by the built-in tasks and is refused with
an error result.  A host may name its own model server (``TAPWISE_FARM_BASE_URL``, set
by ``tapwise farm serve --model-url``); cells on it then use that server.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from typing import Any

from evaluation.farm.phones import PhoneKind, PhoneSlot
from evaluation.metrics import EpisodeResult
from evaluation.online import Job, error_result
from phone.virtual.remote import ServedSimPhone

log = logging.getLogger(__name__)

HOST_BASE_URL = "TAPWISE_FARM_BASE_URL"
HOST_BACKEND = "TAPWISE_FARM_BACKEND"
HOST_MODEL = "TAPWISE_FARM_MODEL"


def host_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The cell's settings with this host's model server, when the host names one."""
    url = os.environ.get(HOST_BASE_URL, "").strip()
    if not url:
        return settings
    from agent.llm import guess_backend

    out = dict(settings)
    out["base_url"] = url
    out["backend"] = os.environ.get(HOST_BACKEND, "").strip() or guess_backend(url)
    if os.environ.get(HOST_MODEL, "").strip():
        out["model"] = os.environ[HOST_MODEL].strip()
    return out


class _Unrecorded:
    """An adb phone as the benchmark drives it: inputs go straight through and no
    per-input truth is kept (``log`` stays empty)."""

    log: tuple[Any, ...] = ()

    def __init__(self, device: Any) -> None:
        self._device = device

    def __getattr__(self, name: str) -> Any:
        return getattr(self._device, name)


@dataclass
class ServedArena:
    """A served phone set up for one cell: ``phone`` for the oracle, ``device`` for the agent."""

    phone: ServedSimPhone
    device: Any

    def close(self) -> None:
        self.device.close()


def served_noise(noise: str) -> dict[str, Any]:
    """A benchmark noise profile as the phone's own ``NoiseConfig`` fields."""
    from evaluation.online_bench import NOISE_PROFILES

    profile = NOISE_PROFILES[noise]
    fields = dict(profile.get("phone", {}))
    if profile.get("tap_sd_px"):
        fields["tap_offset_px"] = float(profile["tap_sd_px"])
    if profile.get("drop"):
        fields["drop_taps"] = float(profile["drop"])
    return fields


def open_served(serial: str, job: Job) -> ServedArena:
    from phone.adb.adb_device import AdbDevice

    device = AdbDevice(serial)
    phone = ServedSimPhone(device, seed=job.seed, noise=served_noise(job.noise))
    return ServedArena(phone, _Unrecorded(device))


def play(job: Job, slot: PhoneSlot) -> EpisodeResult:
    """Run ``job`` on ``slot`` and return its result; a broken cell becomes an error result
    (a crashed worker process is Ray's to retry, not this function's)."""
    from evaluation.online import safe_call
    from evaluation.online_bench import run_cell

    job = replace(job, settings=host_settings(job.settings))
    if slot.kind is PhoneKind.LOCAL:
        result: EpisodeResult = safe_call(run_cell, job)
    elif slot.kind is PhoneKind.SERVED:
        def on_served(j: Job) -> EpisodeResult:
            arena = open_served(slot.serial, j)
            try:
                return run_cell(j, arena)  # type: ignore[no-any-return]
            finally:
                arena.close()

        result = safe_call(on_served, job)
    else:
        result = error_result(job, f"{slot.label()}: the built-in tasks need a virtual phone to judge success")
    return replace(result, note=(result.note + f" [{slot.label()}]").strip())
