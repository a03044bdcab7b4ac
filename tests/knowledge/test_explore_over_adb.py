"""Exploration of the virtual phone served over the ADB wire protocol, driven through
Debian's ``adb`` and our real-phone device layer (not the in-process phone)."""

from __future__ import annotations

import pytest

from agent.knowledge.app_map import SKIPPED, TRIED
from agent.knowledge.explore import ExploreBudget, Explorer
from agent.knowledge.guide import AppMaps, MapGuide
from agent.knowledge.map_language import map_id
from app.knowledge_store import SqliteKnowledgeStore
from app.storage import Store
from phone.adb.adb_device import AdbDevice
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser

pytestmark = [pytest.mark.adb, pytest.mark.slow]

PARSER = ScreenParser(PipelineConfig(mode="tree", ocr="none", detector="none", icons="none"))


def test_exploring_notes_over_adb_maps_its_screens_and_never_deletes(adb_env, served, tmp_path):
    dev = AdbDevice(served.serial, adb_env.host)
    before = {n["id"] for n in served.phone.state["notes"]["notes"]}
    progress = []
    m = Explorer(dev, PARSER, "Notes", budget=ExploreBudget(max_steps=60, max_seconds=240),
                 progress=progress.append).run()
    assert len(m.screens) >= 2 and m.edges
    assert any(e.status == TRIED for s in m.screens.values() for e in s.elements.values())
    deleting = [e for s in m.screens.values() for e in s.elements.values() if e.reason == "deleting"]
    assert deleting and all(e.status == SKIPPED for e in deleting)
    assert {n["id"] for n in served.phone.state["notes"]["notes"]} >= before  # no note was deleted
    assert progress and progress[-1].done
    visited = {v for v in served.phone.state["ui"]["visited"] if v.startswith("com.google.android.keep/")}
    assert {"com.google.android.keep/main", "com.google.android.keep/edit"} <= visited

    store = Store(tmp_path / "tapwise.db")
    maps = AppMaps(SqliteKnowledgeStore(store))
    maps.save(m)
    again = maps.load(map_id(m.package, m.language))  # kept under its app and the phone's language
    assert again is not None and again.to_data() == m.to_data()
    served.phone.key("HOME")
    shot = dev.screenshot(with_hierarchy=True)
    hint = MapGuide([again]).hint("Write a new note", PARSER.parse(shot), shot)
    assert hint is not None and "open Notes" in hint.text
