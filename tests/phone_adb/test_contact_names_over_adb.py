"""The names a redactor may replace, read from a phone the way Tapwise reads a real one:
``adb shell content query`` on the contacts provider, here answered by the served
virtual phone and sent through Debian's ``adb`` and adbutils."""

from __future__ import annotations

import pytest

from phone.adb.adb_device import AdbDevice

pytestmark = pytest.mark.adb


def test_contact_names_come_from_the_contacts_provider(adb_env, served) -> None:
    dev = AdbDevice(served.serial, adb_env.host)
    try:
        names = dev.contact_names()
    finally:
        dev.close()
    assert names == served.phone.contact_names() and "Elena Rossi" in names
    raw = adb_env.adb("-s", served.serial, "shell", "content", "query", "--uri",
                      "content://com.android.contacts/contacts", "--projection", "display_name").stdout
    assert "Row: 0 display_name=" in raw
