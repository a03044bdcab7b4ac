"""The Qt-free device layer: real phones over adb (``adb_device.AdbDevice``), discovery
(``discovery``), the adb server on this computer (``adb_host``), our scrcpy v3 client
(``scrcpy_client``, ``scrcpy_protocol``) and the live mirror with screenshot fallback
(``mirror.Mirror``).  Import the submodules directly; nothing heavy loads here."""
