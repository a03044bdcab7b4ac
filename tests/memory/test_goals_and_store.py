"""Which goals count as the same task, and the memory kept in the project database."""

from __future__ import annotations

from agent.macros.recorder import Observation, make_step
from agent.memory.goals import contradicts, equivalent_goals, same_goal
from agent.memory.memory import DecisionMemory
from agent.memory.types import How, Remembered
from agent.types import Action
from app.knowledge_store import SqliteKnowledgeStore
from app.storage import Store
from tests.agent.screens import settings_parse


def test_the_same_words_are_the_same_goal_and_opposite_states_or_other_numbers_never_equivalent():
    assert same_goal("Turn off Wi-Fi", "turn off wi-fi!") and not same_goal("Turn off Wi-Fi", "")
    assert contradicts("Turn on Wi-Fi", "Disable wifi") and not contradicts("Turn on Wi-Fi", "Enable wifi")
    assert contradicts("Set a timer for 5 minutes", "Set a timer for 10 minutes")
    assert equivalent_goals("Disable wifi", ["Turn off Wi-Fi", "Turn on Wi-Fi", "Turn off mobile data"]) == [
        ("Turn off Wi-Fi", equivalent_goals("Disable wifi", ["Turn off Wi-Fi"])[0][1])]


def test_the_equivalence_of_two_goals_does_not_move_with_what_else_is_remembered():
    alone = equivalent_goals("Disable wifi", ["Turn off Wi-Fi"])
    crowded = equivalent_goals("Disable wifi", ["Turn off Wi-Fi", "Start the stopwatch", "Open Settings",
                                                "Turn on airplane mode", "Delete the note about the dentist"])
    assert alone == crowded


def test_decisions_survive_in_the_database_and_a_later_decision_replaces_the_earlier(tmp_path):
    parse = settings_parse()
    step = make_step(Action.tap(540, 300), Observation(parse, None, "com.android.settings"))
    with Store(tmp_path / "t.sqlite") as db:
        memory = DecisionMemory(SqliteKnowledgeStore(db))
        first = memory.remember(Remembered("Turn off Wi-Fi", "com.android.settings", "abc", step))
        second = memory.remember(Remembered("turn off wi-fi", "com.android.settings", "abc", step, How.EDITED))
        other = memory.remember(Remembered("Turn off Wi-Fi", "com.android.settings", "abc", step, visit=1))
    with Store(tmp_path / "t.sqlite") as db:
        memory = DecisionMemory(SqliteKnowledgeStore(db))
        assert {e.id for e in memory.all()} == {second.id, other.id} and first.id != second.id
        kept = next(e for e in memory.all() if e.id == second.id)
        assert kept == second and kept.step.target is not None and kept.step.target.fingerprint is not None
        memory.retire(kept, "rejected: not this one")
        memory.forget(other.id)
        assert [(e.id, e.retired) for e in memory.all()] == [(second.id, "rejected: not this one")]
        assert list(memory.by_app()) == ["com.android.settings"]


def test_a_number_on_one_side_only_keeps_the_scorer_out_but_not_the_model():
    assert contradicts("Enable the 8:30 alarm", "Turn on my Gym alarm")
    assert not contradicts("Enable the 8:30 alarm", "Turn on my Gym alarm", strict=False)
    assert contradicts("Enable the 8:30 alarm", "Turn on the 7:00 alarm", strict=False)
