"""Every stored core type survives a save/load round trip; bad documents fail clearly."""

import json

import pytest
from hypothesis import HealthCheck, given, settings

from agent import codec
from agent.types import Action, Autonomy, Episode, LatentState, Step, StepOutcome
from tests.core.strategies import actions, decisions, episodes, latents, macros, parses, proposals, steps

ROUND_TRIP = settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)


@pytest.mark.parametrize(
    "strategy", [actions(), decisions(), latents, proposals, parses(), steps(), episodes(), macros],
    ids=["action", "decision", "latent", "proposal", "parse", "step", "episode", "macro"],
)
def test_every_core_type_round_trips_through_json(strategy):
    @ROUND_TRIP
    @given(obj=strategy)
    def check(obj):
        text = codec.dumps(obj)
        back = codec.loads(text)
        assert back == obj
        assert json.loads(text)["version"] >= 1

    check()


def test_documents_carry_their_kind_and_schema_version():
    doc = codec.encode(LatentState(progression="opened Settings"))
    assert doc["schema"] == "latent_state" and doc["version"] == 1


def test_a_document_from_a_newer_schema_is_refused_with_advice():
    doc = codec.encode(Episode(goal="x"))
    doc["version"] = 99
    with pytest.raises(codec.SchemaTooNew, match="upgrade Tapwise"):
        codec.decode(doc)


def test_a_missing_field_is_named():
    doc = codec.encode(Action.tap(1, 2))
    del doc["data"]["type"]
    with pytest.raises(codec.CodecError, match="type"):
        codec.decode(doc)


def test_a_document_of_the_wrong_kind_is_refused():
    with pytest.raises(codec.CodecError, match="expected a macro"):
        codec.decode(codec.encode(Action.tap(1, 2)), expected="macro")


@pytest.mark.parametrize("text", ["", "{", "[]", '{"schema": "episode"}', '{"schema": "nope", "version": 1, "data": {}}'])
def test_garbage_is_a_codec_error_not_a_crash(text):
    with pytest.raises(codec.CodecError):
        codec.loads(text)


def test_invalid_action_inside_a_document_is_refused():
    doc = codec.encode(Action.tap(1, 2))
    doc["data"]["touch"] = None
    with pytest.raises(codec.CodecError, match="touch point or a target"):
        codec.decode(doc)


def test_older_versions_are_migrated(monkeypatch):
    kind_cls, _ = codec.SCHEMAS["latent_state"]
    monkeypatch.setitem(codec.SCHEMAS, "latent_state", (kind_cls, 2))
    monkeypatch.setitem(codec.MIGRATIONS, "latent_state", {1: lambda d: {**d, "mistakes": d["mistakes"] or "none"}})
    old = {"schema": "latent_state", "version": 1, "data": codec.to_data(LatentState())}
    assert codec.decode(old).mistakes == "none"


def test_steps_and_episodes_stored_before_timings_and_the_autonomy_enum_still_read():
    step_v1 = codec.encode(Step(3, outcome=StepOutcome.REJECTED))
    step_v1["version"] = 1
    del step_v1["data"]["timings_ms"]
    old_step = codec.decode(step_v1, "step")
    assert old_step.index == 3 and old_step.timings_ms == () and old_step.timing("llm") is None

    episode_v1 = codec.encode(Episode(goal="Turn off Wi-Fi"))
    episode_v1["version"] = 1
    episode_v1["data"]["autonomy"] = "approve_all"
    assert codec.decode(episode_v1, "episode").autonomy is Autonomy.APPROVE


def test_a_step_keeps_where_its_time_went():
    step = Step(0, timings_ms=(("frame", 12.5), ("llm", 800.0), ("llm", 200.0)))
    back = codec.loads(codec.dumps(step))
    assert back.timings_ms == step.timings_ms
    assert back.timing("llm") == 1000.0 and back.timing("execute") is None


def test_autonomy_reads_the_old_spelling_and_refuses_nonsense():
    assert Autonomy("approve_all") is Autonomy.APPROVE is Autonomy("approve")
    with pytest.raises(ValueError):
        Autonomy("sometimes")
