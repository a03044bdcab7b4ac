"""Runs started from the window feed the knowledge store: decisions pass through the
learning wrapper unchanged and a finished episode is archived exactly once."""

from agent.events import Finished
from agent.types import Decision, DecisionKind, Episode, EpisodeStatus
from app.gui.agent_setup import knowledge_for, learning_from
from app.storage import Store


class _Knowledge:
    def __init__(self):
        self.learned = []

    def learn_from_episode(self, episode):
        self.learned.append(episode)


def _run():
    got = yield "proposed"
    assert got == Decision(DecisionKind.APPROVE)
    yield Finished(status=EpisodeStatus.SUCCEEDED, note="", episode=Episode(goal="g", id="e1"))
    return "done"


def test_decisions_pass_through_and_the_finished_episode_is_learned_once():
    knowledge = _Knowledge()
    gen = learning_from(_run(), knowledge)
    assert next(gen) == "proposed"
    finished = gen.send(Decision(DecisionKind.APPROVE))
    assert isinstance(finished, Finished)
    try:
        gen.send(None)
    except StopIteration as stop:
        assert stop.value == "done"
    assert [e.id for e in knowledge.learned] == ["e1"]


def test_a_learning_failure_never_breaks_the_run():
    class Broken:
        def learn_from_episode(self, episode):
            raise RuntimeError("disk full")

    gen = learning_from(_run(), Broken())
    next(gen)
    assert isinstance(gen.send(Decision(DecisionKind.APPROVE)), Finished)


def test_knowledge_lives_in_the_project_database(tmp_path):
    with Store(tmp_path / "k.sqlite") as store:
        assert knowledge_for(store) is not None
    assert knowledge_for(None) is None
