"""The names a redactor may replace, read from a phone the way Tapwise reads a real one:
``adb shell content query`` on the contacts provider, here answered by the served
virtual phone and sent through Debian's ``adb`` and adbutils."""

from __future__ import annotations

import pytest

from phone.adb.adb_device import AdbDevice

pytestmark = pytest.mark.adb


def test_contact_names_come_from_the_contacts_provider(adb_env, served) -> None:
    served.phone.state["contacts"]["people"].append({"first": "Maria", "last": "Lopez, Jr."})  # a comma in a name
    dev = AdbDevice(served.serial, adb_env.host)
    try:
        names = dev.contact_names()
    finally:
        dev.close()
    assert names == served.phone.contact_names() and "Elena Rossi" in names and "Maria Lopez, Jr." in names
    raw = adb_env.adb("-s", served.serial, "shell", "content", "query", "--uri",
                      "content://com.android.contacts/contacts", "--projection", "display_name").stdout
    assert "Row: 0 display_name=" in raw


def test_a_row_s_values_run_to_the_next_column_not_to_the_next_comma() -> None:
    from phone.adb.adb_device import content_rows

    out = ("Row: 0 _id=1, display_name=Lopez, Maria, photo_id=NULL\n"
           "Row: 1 _id=2, display_name=Ben Carter, photo_id=7\n"
           "Row: 2 _id=3, display_name=NULL, photo_id=NULL\n")
    rows = content_rows(out, ("_id", "display_name", "photo_id"))
    assert [r["display_name"] for r in rows] == ["Lopez, Maria", "Ben Carter", "NULL"]
    assert rows[0] == {"_id": "1", "display_name": "Lopez, Maria", "photo_id": "NULL"}
    assert content_rows("No result found.\n", ("display_name",)) == []
