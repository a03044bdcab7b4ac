"""Runs started from the window feed the knowledge store: decisions pass through the
window's wrapper unchanged, and steps the user demonstrated in a run that did not
succeed reach the task repository as a demonstration for the goal."""

from agent.events import Finished
from agent.types import Action, Decision, DecisionKind, Episode, EpisodeStatus, Step
from app.compose import knowledge_for, learn_demonstrated_steps, on_finished
from app.storage import Store


def _run(episode):
    got = yield "proposed"
    assert got == Decision(DecisionKind.APPROVE)
    yield Finished(status=episode.status, note=episode.note, episode=episode)
    return "done"


def _demonstrated(status):
    shown = Decision(DecisionKind.DEMONSTRATE, action=Action.tap(540, 660))
    steps = (Step(0, decision=shown, executed=Action.tap(540, 660)),)
    return Episode(goal="Turn on airplane mode", id="e1", status=status, note="budget used up", steps=steps)


def keeping_demonstrations(gen, knowledge):
    """The window's wrapper: demonstrated steps are kept when the episode finishes."""
    return on_finished(gen, lambda episode: learn_demonstrated_steps(knowledge, episode))


def _drive(gen):
    assert next(gen) == "proposed"
    assert isinstance(gen.send(Decision(DecisionKind.APPROVE)), Finished)
    try:
        gen.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the run did not end")


def test_a_demonstration_in_a_failed_run_reaches_the_task_repository(tmp_path):
    with Store(tmp_path / "k.sqlite") as store:
        knowledge = knowledge_for(store)
        assert _drive(keeping_demonstrations(_run(_demonstrated(EpisodeStatus.FAILED)), knowledge)) == "done"
        records = knowledge_for(store).tasks.all(source="demonstration")
        assert [r.goal for r in records] == ["Turn on airplane mode"]


def test_a_run_without_demonstrations_adds_no_demonstration(tmp_path):
    episode = Episode(goal="g", id="e2", status=EpisodeStatus.FAILED, steps=(Step(0, executed=Action.tap(1, 1)),))
    with Store(tmp_path / "k.sqlite") as store:
        _drive(keeping_demonstrations(_run(episode), knowledge_for(store)))
        assert knowledge_for(store).tasks.all(source="demonstration") == []


def test_knowledge_lives_in_the_project_database(tmp_path):
    with Store(tmp_path / "k.sqlite") as store:
        assert knowledge_for(store) is not None
    assert knowledge_for(None) is None


def test_the_window_s_device_wrapper_still_lists_the_phone_s_apps_for_structured_replies():
    """Runs started from the window get the serialized device; the reply form's app list
    must come through it (and be empty, meaning any app name, for a phone that cannot say)."""
    from app.compose import app_names
    from app.gui.workers import SerialExecutor, SerializedDevice
    from phone.virtual.phone import VirtualPhone

    executor = SerialExecutor("phone", None)  # type: ignore[arg-type]
    phone = VirtualPhone(seed=0)
    try:
        names = app_names(SerializedDevice(phone, executor))  # type: ignore[arg-type]
        assert names == [name for name, _pkg in phone.installed_apps()] and "Settings" in names
        assert app_names(SerializedDevice(object(), executor)) == []  # type: ignore[arg-type]
    finally:
        phone.close()
        executor.shutdown()
