"""A run assembled by ``app.compose.build_run`` on a database that holds app maps plans with
the maps (``GuidedPlanner``); a map whose app has another version on the phone is forgotten."""

from __future__ import annotations

from agent.knowledge.app_map import AppMap
from agent.knowledge.guide import AppMaps
from agent.knowledge.guided import GuidedPlanner, with_maps
from app.knowledge_store import SqliteKnowledgeStore
from app.storage import Store


class Planner:
    name = "plain"
    uses_latent = False

    def propose(self, ctx):  # type: ignore[no-untyped-def]
        raise AssertionError("not called")


class PhoneWithVersions:
    def __init__(self, versions: dict[str, str]) -> None:
        self.versions = versions

    def foreground(self) -> tuple[str, str]:
        return "com.launcher", ""

    def app_version(self, package: str) -> str:
        return self.versions.get(package, "")


def test_stored_maps_guide_the_planner_and_a_map_of_another_app_version_is_not_used(tmp_path):
    from agent.planners.base import PlanContext
    from vision.geometry import Size
    from vision.types import ScreenParse

    store = Store(tmp_path / "t.db")
    ks = SqliteKnowledgeStore(store)
    plain = Planner()
    bare = with_maps(plain, ks)  # no map: the screen's own evidence only
    assert isinstance(bare, GuidedPlanner) and bare.inner is plain and not bare.guide.maps
    AppMaps(ks).save(AppMap("com.x", "X", "1.0"))
    AppMaps(ks).save(AppMap("com.y", "Y", "5"))
    phone = PhoneWithVersions({"com.x": "1.0", "com.y": "6"})
    guided = with_maps(plain, ks, phone)
    assert isinstance(guided, GuidedPlanner) and guided.inner is plain and guided.name == "plain"
    assert set(guided.guide.maps) == {"com.x", "com.y"}  # building the run asks the phone nothing
    plain.propose = lambda ctx: "planned"  # type: ignore[method-assign,assignment,return-value]
    assert guided.propose(PlanContext("g", ScreenParse(Size(10, 10)), "")) == "planned"
    assert set(guided.guide.maps) == {"com.x"}  # the first step dropped the stale map


def test_build_run_hands_run_episode_the_guided_planner(tmp_path, monkeypatch):
    from app.compose import RunRequest, build_run
    from app.settings import Settings
    from phone.virtual.phone import VirtualPhone

    store = Store(tmp_path / "t.db")
    AppMaps(SqliteKnowledgeStore(store)).save(AppMap("com.android.settings", "Settings"))
    seen = planner_seen(monkeypatch)
    build_run(RunRequest("Turn off Wi-Fi", planner="visiontasker"), Settings(data_dir=tmp_path),
              device=VirtualPhone(), parser=object(), store=store, client=Client())  # type: ignore[arg-type]
    from agent.memory.planner import RememberingPlanner

    # the user's decisions (the decision memory) sit outside the maps and the screen's evidence
    assert isinstance(seen["planner"], RememberingPlanner)
    assert isinstance(seen["planner"].inner, GuidedPlanner)


def test_a_run_on_a_phone_that_cannot_say_its_language_sees_every_language_s_maps(tmp_path, monkeypatch):
    """An unknown UI language only means the maps are not told apart: a map made in English
    still guides the run (it was hidden behind the maps "of no language")."""
    from app.compose import RunRequest, build_run
    from app.settings import Settings
    from phone.virtual.phone import VirtualPhone

    class Mute(VirtualPhone):
        def ui_language(self) -> str:
            return ""  # the phone cannot say

    store = Store(tmp_path / "t.db")
    AppMaps(SqliteKnowledgeStore(store)).save(AppMap("com.android.settings", "Settings", language="en"))
    seen = planner_seen(monkeypatch)
    build_run(RunRequest("Turn off Wi-Fi", planner="visiontasker"), Settings(data_dir=tmp_path),
              device=Mute(), parser=object(), store=store, client=Client())  # type: ignore[arg-type]
    assert set(seen["planner"].inner.guide.maps) == {"com.android.settings"}


class Client:
    """A client the run is built with and never asks (the run's episode is not started)."""

    model = "m"


def planner_seen(monkeypatch) -> dict:  # type: ignore[no-untyped-def]
    """Record the planner ``build_run`` hands to the runner, instead of running."""
    import agent.runner

    seen: dict = {}

    def fake_run_episode(goal, device, parser, planner, *a, **k):  # type: ignore[no-untyped-def]
        seen["planner"] = planner
        return iter(())

    monkeypatch.setattr(agent.runner, "run_episode", fake_run_episode)
    return seen
