"""A virtual phone served in another process, as a task's oracle sees it.

``ServedSimPhone`` reads the phone's state (and resets it) over ``adb shell
tapwise-bench``, the served phone's own shell command, so a task's success condition and
checkpoints can be checked on a phone the agent only reaches through adb: the device farm's
served phones and the window's virtual phone.  Nothing else of the phone is reachable here,
and no real phone answers that command.
"""

from __future__ import annotations

import json
from typing import Any

from agent.device import DeviceError


class ServedSimPhone:
    """What a task's oracle needs of a served virtual phone (its ``state`` and a
    ``reset``), read and written over ``adb shell tapwise-bench``."""

    def __init__(self, device: Any, *, seed: int = 0, noise: dict[str, Any] | None = None) -> None:
        self._device = device  # an ``phone.adb.adb_device.AdbDevice``
        self.seed = seed
        self.noise = dict(noise or {})

    def screen_size(self) -> Any:
        return self._device.screen_size()

    def close(self) -> None:
        """Nothing to release: the arena closes the adb connection."""

    def _shell(self, *args: str) -> str:
        ret = self._device.adb.shell2(["tapwise-bench", *args], timeout=30)
        if ret.returncode != 0:
            raise DeviceError(
                f"the phone did not answer `tapwise-bench {args[0]}` ({ret.output.strip()[:200]})",
                "only Tapwise's served virtual phone can run the built-in tasks",
            )
        return str(ret.output)

    @property
    def state(self) -> dict[str, Any]:
        data = json.loads(self._shell("state"))
        if not isinstance(data, dict):
            raise DeviceError("the phone's state is not a JSON object")
        return data

    def shown(self) -> list[dict[str, Any]]:
        """Every toast and snackbar the phone showed since its reset (kind, text, wall-clock
        ``shown_at``/``hidden_at``): the phone's own account of what flashed."""
        data = json.loads(self._shell("shown"))
        if not isinstance(data, list):
            raise DeviceError("the phone's list of shown messages is not a JSON list")
        return [d for d in data if isinstance(d, dict)]

    def reset(self, overrides: dict[str, Any] | None = None) -> None:
        from phone.virtual.wire.bench_control import encode

        self._shell("reset", encode({"seed": self.seed, "noise": self.noise, "state": overrides or {}}))
