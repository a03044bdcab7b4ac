"""A second virtual phone configured like the one the user sees, for work that must not
touch the user's: automatic exploration taps through every app on the twin.

``twin_of(device, lang)`` answers a phone of the same size profile, theme, layout, state
seed and installed apps, showing ``lang`` (the language the user's phone shows now: it may have
been switched in Settings since it started):

* for a virtual phone served in its own process (``launcher.LaunchedDevice``, how the
  window drives it), another served process, reached through adb like the first;
* for a virtual phone inside this process (``phone.VirtualPhone``), another one here.

None for anything else (a real phone, a virtual phone started elsewhere).  The caller
closes the twin.  Knows nothing of Qt or of exploration.
"""

from __future__ import annotations

import copy
import logging

from agent.device import Device

log = logging.getLogger(__name__)


def twin_of(device: object, lang: str = "", *, command_timeout_s: float = 15.0) -> Device | None:
    """A separate virtual phone like ``device`` (see the module docstring), or None."""
    from phone.virtual.launcher import LaunchedDevice, launch_device
    from phone.virtual.phone import VirtualPhone

    if isinstance(device, LaunchedDevice):
        started = device.launched
        log.info("starting a twin of the served virtual phone %s (%s, %s, %s)", started.serial, started.profile,
                 started.theme, lang or started.lang)
        return launch_device(started.profile, started.theme, lang or started.lang, seed=started.seed,
                             layout=started.layout, command_timeout_s=command_timeout_s)
    if isinstance(device, VirtualPhone):
        from phone.virtual.apps import OPTIONAL_APPS

        apps = {opt.key: copy.deepcopy(device.state[opt.key]) for opt in OPTIONAL_APPS if opt.key in device.state}
        theme = "dark" if device.state["settings"].get("dark_theme") else "light"
        return VirtualPhone(profile=device.profile.name, theme=theme, lang=lang or device.lang, seed=device.seed,
                            state=apps or None, layout=device.layout)
    return None


__all__ = ["twin_of"]
