"""Everything that is a phone, Qt-free: ``phone.adb`` (real phones through adb, the
scrcpy v3 mirror, the uiautomator2 link, discovery) and ``phone.virtual`` (the virtual
phone: apps, rendering, tasks and oracles, and its ADB / scrcpy / uiautomator2 servers).
Both implement ``agent.device.Device``; the real side never imports the virtual one."""
