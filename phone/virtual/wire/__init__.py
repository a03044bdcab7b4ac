"""The virtual phone over real wire protocols: an ADB transport server (adbd side) and
the scrcpy v3 server side.  Start one with ``serve_phone(phone, port)``."""

from phone.virtual.wire.adbd import ServedPhoneServer, serve_phone

__all__ = ["ServedPhoneServer", "serve_phone"]
