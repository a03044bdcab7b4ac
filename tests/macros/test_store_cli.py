"""The SQLite knowledge store behind the agent's KnowledgeStore protocol."""

from __future__ import annotations

import pytest

from agent.knowledge.base import Knowledge
from agent.knowledge.store import KnowledgeStore, MacroStore
from agent.knowledge.types import Instruction, Op, TaskRecord
from agent.types import Action
from app.knowledge_store import SqliteKnowledgeStore
from app.storage import Store
from tests.macros.fakephone import FakePhone
from tests.macros.test_knowledge import episode_on_fake_phone
from tests.macros.test_record_replay import record_new_alarm


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "t.sqlite")
    yield s
    s.close()


def test_sqlite_store_implements_the_protocols(store):
    assert isinstance(SqliteKnowledgeStore(store), KnowledgeStore)
    assert isinstance(store, MacroStore)


def test_knowledge_survives_reopening_the_database(tmp_path):
    path = tmp_path / "k.sqlite"
    s = Store(path)
    k = Knowledge(SqliteKnowledgeStore(s))
    k.learn_from_episode(episode_on_fake_phone())
    k.learn_from_demonstration(record_new_alarm(FakePhone()), "make a wake-up alarm")
    k.instructions.add_compound("copy the title", [Instruction(Op.LONG_CLICK, "800", "title"),
                                                   Instruction(Op.CLICK, "1", "Copy")])
    k.context.set("connectedDevices.earphones", "Pixel Buds Pro")
    s.close()

    s2 = Store(path)
    k2 = Knowledge(SqliteKnowledgeStore(s2))
    sources = sorted(r.source for r in k2.tasks.all())
    assert sources == ["demonstration", "episode"]
    assert k2.instructions.decomposition("Copy the title") is not None
    assert k2.context.get("connectedDevices.earphones") == "Pixel Buds Pro"
    assert len(k2.graph.nodes) >= 3 and k2.graph.edges
    assert "make a wake-up alarm" in k2.planner_examples("create a wake-up alarm")
    k2.store.delete_task(k2.tasks.all()[0].id)
    assert len(k2.tasks.all()) == 1
    s2.close()


def test_task_records_round_trip_exactly(store):
    ks = SqliteKnowledgeStore(store)
    rec = TaskRecord(goal="g", steps=("tap A",), instructions=(Instruction(Op.CLICK, "1", "A"),),
                     actions=(Action.tap(1, 2),), app="x")
    ks.save_task(rec)
    assert ks.tasks() == [rec]
