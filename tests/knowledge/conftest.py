"""The phone_adb fixtures (an isolated adb server, a virtual phone served over ADB) for
the exploration tests that drive the phone through the real ``adb``."""

from tests.phone_adb.conftest import adb_env, served

__all__ = ["adb_env", "served"]
