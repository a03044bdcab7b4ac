"""Completing a recorded macro from the app map: a macro that stops short of its goal gets
the steps the map knows from where it stops, as a new version marked "from the app map",
that replays to success on the virtual phone; sensitive steps are marked so a replay
asks; with no map, or no known way, the error names the command that builds the map."""

from __future__ import annotations

import copy

import pytest
from typer.testing import CliRunner

from agent.events import AwaitingDecision
from agent.knowledge.app_map import TRIED, AppMap, MapElement, MapScreen
from agent.knowledge.explore import ExploreBudget, Explorer
from agent.knowledge.guide import AppMaps
from agent.knowledge.macro_path import follow
from agent.knowledge.map_build import learn_step
from agent.macros.complete import (
    MAP_MARK,
    CompletionError,
    NoMapPath,
    complete,
    ending_by_replay,
    is_from_map,
    sensitive_reason,
)
from agent.macros.recorder import Observation, Recorder
from agent.macros.replay import Replayer, run_unattended
from agent.macros.types import Macro, MacroStep
from agent.types import Action, ActionType, Decision, DecisionKind, Fingerprint
from app.storage import Store

sim = pytest.importorskip("phone.virtual.phone")

from phone.virtual.tasks import load_tasks, tasks_by_id  # noqa: E402
from vision.config import PipelineConfig  # noqa: E402
from vision.pipeline import ScreenParser  # noqa: E402

PARSER = ScreenParser(PipelineConfig(mode="tree", ocr="none", detector="none", icons="none"))


def explored(app: str, steps: int) -> AppMap:
    """The app's map, explored on a fresh virtual phone within ``steps`` device actions."""
    return Explorer(sim.VirtualPhone(), PARSER, app, budget=ExploreBudget(max_steps=steps)).run()


@pytest.fixture(scope="module")
def settings_map() -> AppMap:
    return explored("Settings", 60)


def record(name: str, *taps: str, description: str = "") -> Macro:
    """A macro recorded on the mirror of a fresh virtual phone: tap each text in turn
    (the first on the home screen, so it becomes "open the app")."""
    phone = sim.VirtualPhone()

    def observe() -> Observation:
        s = phone.screenshot(with_hierarchy=True)
        return Observation(PARSER.parse(s), s.image, s.foreground_package)

    rec = Recorder()
    for words in taps:
        before = observe()
        el = next(e for e in before.parse.elements
                  if (e.text == words or e.label.split(" · ")[0] == words) and (e.clickable or e.text))
        c = el.rect.center
        phone.tap(c.x, c.y)
        rec.record(Action.tap(c.x, c.y), before, observe())
    return rec.build(name, description=description)


def replay_on_task(macro: Macro, task_id: str, approve=None):  # type: ignore[no-untyped-def]
    """Replay ``macro`` on a virtual phone set up for the task; the result and the phone."""
    task = tasks_by_id(load_tasks())[task_id]
    phone = sim.VirtualPhone()
    task.setup(phone)
    result = run_unattended(Replayer(phone, PARSER), macro, approve=approve)
    return result, task.is_success(phone), phone


# ---- the main case ---------------------------------------------------------------------------


def test_a_macro_that_only_opens_settings_is_completed_to_the_dark_theme_switch(settings_map, tmp_path):
    macro = record("Turn on dark theme", "Settings")
    assert [s.description for s in macro.steps] == ["open the 'Settings' app"]

    done = complete(macro, [settings_map])

    assert [a.words for a in done.added] == ["tap 'Display'", "turn on 'Dark theme'"]
    assert (done.start, done.target) == ("Settings", "Display")
    new = done.macro
    assert (new.id, new.version) == (macro.id, 2) and new.steps[0] == macro.steps[0]
    for added in new.steps[1:]:
        assert is_from_map(added) and MAP_MARK in added.description and not sensitive_reason(added)
        assert added.target is not None and added.target.fingerprint is not None  # re-found like a recorded step
        assert added.expected_package == "com.android.settings"
    assert new.steps[2].expect_checked is True  # a replay leaves the switch alone when it is on already
    display = next(e for e in settings_map.screens[settings_map.root].elements.values() if e.name == "Display")
    first = new.steps[1].target
    assert first is not None and first.fingerprint == display.fingerprint
    # saved as the next version: the recorded one is kept
    store = Store(tmp_path / "t.db")
    store.save_macro(macro)
    store.save_macro(new)
    assert store.macro_versions(macro.id) == [1, 2]
    assert len(store.load_macro(macro.id, 1).steps) == 1 and len(store.load_macro(macro.id).steps) == 3
    store.close()


def test_the_completed_version_replays_to_success_and_the_recorded_one_does_not(settings_map):
    macro = record("Turn on dark theme", "Settings")
    done = complete(macro, [settings_map])

    result, success, phone = replay_on_task(done.macro, "settings.dark_theme_on")
    assert result.succeeded, result
    assert success and phone.state["settings"]["dark_theme"] is True  # the task's oracle
    assert [r.level for r in result.steps[1:]] == ["text", "text"]  # found by the map's fingerprints
    _result, success_before, _ = replay_on_task(macro, "settings.dark_theme_on")
    assert not success_before


def test_the_replay_leaves_the_switch_alone_when_dark_theme_is_on_already(settings_map):
    done = complete(record("Turn on dark theme", "Settings"), [settings_map])
    phone = sim.VirtualPhone()
    phone.state["settings"]["dark_theme"] = True
    result = run_unattended(Replayer(phone, PARSER), done.macro)
    assert result.succeeded and phone.state["settings"]["dark_theme"] is True
    assert result.steps[-1].effect == "already_set"


def test_a_recording_of_the_first_two_steps_is_followed_through_the_map_and_finished(settings_map):
    macro = record("airplane", "Settings", "Network & internet", description="Turn on airplane mode")
    end = follow(macro, [settings_map])
    assert end.known and settings_map.screens[end.key].label() != settings_map.screens[settings_map.root].label()

    done = complete(macro, [settings_map])  # the goal is the macro's description

    assert [a.words for a in done.added] == ["turn on 'Airplane mode'"]
    assert done.goal == "Turn on airplane mode" and len(done.macro.steps) == 3
    assert "where the Settings map expects what “Turn on airplane mode” needs: it adds 1 step there" in done.summary()
    result, success, phone = replay_on_task(done.macro, "settings.airplane_on")
    assert result.succeeded and success and phone.state["settings"]["airplane_mode"] is True


def test_a_goal_from_another_option_replaces_the_macros_own(settings_map):
    macro = record("Turn on dark theme", "Settings")
    done = complete(macro, [settings_map], goal="Turn on airplane mode")
    assert [a.words for a in done.added][-1] == "turn on 'Airplane mode'"
    assert done.macro.description == "Turn on airplane mode"


def test_a_macro_that_already_reaches_its_goal_gets_nothing_added(settings_map):
    macro = record("Turn on dark theme", "Settings", "Display", "Dark theme")
    with pytest.raises(CompletionError, match="Nothing to add"):
        complete(macro, [settings_map])


# ---- when the map cannot help ------------------------------------------------------------------


def test_without_a_map_of_the_app_the_error_names_the_command_to_explore():
    macro = record("Turn on dark theme", "Settings")
    with pytest.raises(NoMapPath, match="explore the app first: tapwise explore Settings"):
        complete(macro, [])
    with pytest.raises(NoMapPath, match="no app map of Settings"):
        complete(macro, [explored("Notes", 20)])  # a map, but of another app


def test_a_goal_the_map_knows_no_way_to_says_to_explore_first(settings_map):
    macro = record("qqq", "Settings", description="Make the zzyzx frobnicate")
    with pytest.raises(NoMapPath) as err:
        complete(macro, [settings_map])
    text = str(err.value)
    assert "knows no way from 'Settings'" in text and "tapwise explore Settings" in text


def test_when_the_map_cannot_follow_a_recorded_step_a_replay_finds_where_the_macro_ends(settings_map):
    m = copy.deepcopy(settings_map)
    display = next(k for (src, k) in m.edges if src == m.root and m.edges[(src, k)].dst != src
                   and m.screens[src].elements[k].name == "Display")
    del m.edges[(m.root, display)]  # the map no longer knows where 'Display' leads
    macro = record("Turn on dark theme", "Settings", "Display")
    with pytest.raises(NoMapPath, match="--replay"):
        complete(macro, [m])

    end = ending_by_replay(Replayer(sim.VirtualPhone(), PARSER), macro, [m])

    assert end.known and m.screens[end.key].label() == "Display"
    done = complete(macro, [m], end=end)
    assert [a.words for a in done.added] == ["turn on 'Dark theme'"]


# ---- safety -----------------------------------------------------------------------------------


def test_a_step_through_a_sensitive_element_is_marked_and_the_replay_asks_before_it():
    m = explored("Files", 200)
    trash = next(e for s in m.screens.values() for e in s.elements.values() if e.name.startswith("Trash"))
    assert trash.reason == "deleting"  # exploring never tapped it ...
    phone = sim.VirtualPhone()  # ... but a demonstration did: the map learns where it leads
    phone.open_app("Files")
    shot = phone.screenshot(with_hierarchy=True)
    before = PARSER.parse(shot)
    el = next(e for e in before.elements if e.label.startswith("Trash") and e.clickable)
    phone.tap(el.rect.center.x, el.rect.center.y)
    after = phone.screenshot(with_hierarchy=True)
    learn_step(m, before, el, PARSER.parse(after), after.foreground_package or "", source="demonstration")
    macro = record("trash", "Files", description="Show the files in the trash")

    done = complete(macro, [m])

    marked = [a for a in done.added if a.sensitive]
    assert [a.words for a in marked] == ["tap 'Trash'"] and "deleting" in marked[0].sensitive
    assert "sensitive: deleting" in marked[0].step.description and sensitive_reason(marked[0].step)
    assert "a replay asks before it" in done.summary()
    asked: list[str] = []

    def approve(ev: AwaitingDecision) -> Decision:
        asked.append(ev.reason)
        return Decision(DecisionKind.APPROVE)

    result = run_unattended(Replayer(sim.VirtualPhone(), PARSER), done.macro, approve=approve)
    assert result.succeeded
    assert len(asked) == 1 and "sensitive action (deleting" in asked[0]


def test_an_edge_a_demonstration_added_through_a_sensitive_element_is_marked_sensitive():
    m = AppMap("com.example.bank", "Bank", root="home")
    m.screens["home"] = MapScreen("home", m.package, title="Bank", size=(1080, 2400), elements={
        "text:delete account": MapElement("text:delete account", "Delete account", "button",
                                         Fingerprint(text="Delete account", kind="button"), TRIED,
                                         bounds=(0, 600, 1080, 760)),
        "text:cards": MapElement("text:cards", "Cards", "button", Fingerprint(text="Cards", kind="button"), TRIED,
                                 bounds=(0, 800, 1080, 960))})
    m.screens["closing"] = MapScreen("closing", m.package, title="Deleting your account", size=(1080, 2400),
                                     texts=("Deleting your account", "Reason for leaving"), elements={
        "text:reason for leaving": MapElement("text:reason for leaving", "Reason for leaving", "button",
                                              Fingerprint(text="Reason for leaving", kind="button"),
                                              bounds=(0, 600, 1080, 760))})
    m.screens["cards"] = MapScreen("cards", m.package, title="Cards", size=(1080, 2400))
    m.add_edge("home", "text:delete account", "closing", source="demonstration")
    m.add_edge("home", "text:cards", "cards")
    macro = Macro("leave", (MacroStep(Action.open_app("com.example.bank"), "open the 'Bank' app",
                                      expected_package="com.example.bank"),),
                  app="com.example.bank", description="Pick a reason for leaving before the account is deleted")

    done = complete(macro, [m])

    assert [a.words for a in done.added] == ["tap 'Delete account'", "tap 'Reason for leaving'"]
    assert done.added[0].sensitive and not done.added[1].sensitive
    assert sensitive_reason(done.macro.steps[1]) == done.added[0].sensitive


# ---- the command ------------------------------------------------------------------------------


@pytest.fixture
def cli_db(monkeypatch, tmp_path, settings_map):
    monkeypatch.setenv("TAPWISE_DATA_DIR", str(tmp_path))
    from app.knowledge_store import SqliteKnowledgeStore
    from app.settings import load_settings

    settings, _ = load_settings()
    store = Store(settings.database_path)
    macro = store.save_macro(record("Turn on dark theme", "Settings"))
    maps = AppMaps(SqliteKnowledgeStore(store))
    store.close()
    return settings.database_path, macro, maps


def _versions(path, macro_id):  # type: ignore[no-untyped-def]
    store = Store(path)
    try:
        return store.macro_versions(macro_id)
    finally:
        store.close()


def test_the_command_says_to_explore_first_when_there_is_no_map(cli_db):
    from app.cli.macro import macro_app

    path, macro, _maps = cli_db
    out = CliRunner().invoke(macro_app, ["complete", "Turn on dark theme"])
    assert out.exit_code == 1 and "tapwise explore Settings" in " ".join(out.output.split())
    assert _versions(path, macro.id) == [1]


def test_the_dry_run_shows_the_steps_and_changes_nothing_then_the_command_saves_a_version(cli_db, settings_map):
    from app.cli.macro import macro_app
    from app.knowledge_store import SqliteKnowledgeStore

    path, macro, _maps = cli_db
    store = Store(path)
    AppMaps(SqliteKnowledgeStore(store)).save(settings_map)
    store.close()
    runner = CliRunner()

    out = runner.invoke(macro_app, ["complete", "Turn on dark theme", "--dry-run"])

    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert "tap 'Display' (from the app map)" in text and "turn on 'Dark theme' (from the app map)" in text
    assert "dry run: nothing saved" in text
    assert _versions(path, macro.id) == [1]

    out = runner.invoke(macro_app, ["complete", "Turn on dark theme"])

    assert out.exit_code == 0 and "saved as version 2; version 1 is kept" in " ".join(out.output.split())
    assert _versions(path, macro.id) == [1, 2]
    store = Store(path)
    assert [s.action.type for s in store.load_macro(macro.id).steps] == [ActionType.OPEN_APP, ActionType.TAP,
                                                                        ActionType.TAP]
    store.close()
