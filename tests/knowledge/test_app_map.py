"""App maps: the screen fingerprint, exploration of the virtual phone's apps, safety while
exploring, path finding and the planner's hint, storage and invalidation on app version."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent.device import DeviceInfo
from agent.knowledge.app_map import OUTSIDE, SKIPPED, TRIED, AppMap, MapError, names_app, rank_apps
from agent.knowledge.explore import ExploreBudget, Explorer, ExploreRefused
from agent.knowledge.guide import AppMaps, MapGuide
from agent.knowledge.guided import GuidedPlanner
from agent.knowledge.map_language import LanguageMaps, map_id
from agent.knowledge.retrieval import LexicalScorer
from agent.knowledge.screen_key import screen_key
from agent.knowledge.store import MemoryStore
from agent.planners.base import PlanContext
from agent.types import Action, ActionType
from phone.virtual.phone import VirtualPhone
from tests.knowledge.recording_planner import Recorder
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser

PARSER = ScreenParser(PipelineConfig(mode="tree", ocr="none", detector="none", icons="none"))


def key_of(phone: VirtualPhone) -> str:
    shot = phone.screenshot(with_hierarchy=True)
    return screen_key(PARSER.parse(shot), shot.foreground_package or "", shot.foreground_activity or "").key


def tap_text(phone: VirtualPhone, text: str) -> None:
    parse = PARSER.parse(phone.screenshot(with_hierarchy=True))
    el = next(e for e in parse.elements if e.text == text or e.label.startswith(text))
    phone.tap(el.rect.center.x, el.rect.center.y)


def explored(app: str, steps: int = 400, phone: VirtualPhone | None = None) -> tuple[AppMap, VirtualPhone]:
    phone = phone or VirtualPhone()
    return Explorer(phone, PARSER, app, budget=ExploreBudget(max_steps=steps)).run(), phone


# ---- the screen fingerprint ----------------------------------------------------------------


@pytest.mark.parametrize("app", ["Settings", "Clock", "Contacts", "Notes", "Calendar", "Files"])
def test_a_screen_keeps_its_key_when_the_clock_ticks_the_theme_flips_and_the_language_changes(app):
    base = VirtualPhone()
    base.open_app(app)
    k = key_of(base)
    for _ in range(5):  # minutes pass: the status bar and any clock digits change
        base.state["clock_minutes"] += 7
        assert key_of(base) == k
    for theme, lang in (("dark", "en"), ("light", "de"), ("dark", "de")):
        other = VirtualPhone(theme=theme, lang=lang)
        other.open_app(app)
        assert key_of(other) == k, f"{app} in {theme}/{lang}"


def test_different_pages_of_an_app_have_different_keys():
    phone = VirtualPhone()
    phone.open_app("Settings")
    main = key_of(phone)
    tap_text(phone, "Network & internet")
    network = key_of(phone)
    phone.key("BACK")
    tap_text(phone, "Display")
    display = key_of(phone)
    assert len({main, network, display}) == 3


def test_a_list_that_grows_keeps_the_screen_key():
    phone = VirtualPhone()
    phone.open_app("Notes")
    k = key_of(phone)
    notes = phone.state["notes"]["notes"]
    notes.append(dict(notes[0], id=max(n["id"] for n in notes) + 1, title="Another note"))
    assert key_of(phone) == k


# ---- exploration ---------------------------------------------------------------------------


def test_exploring_settings_finds_its_pages_and_the_way_to_wifi():
    m, phone = explored("Settings")
    visited = {v.split("/", 1)[1] for v in phone.state["ui"]["visited"] if v.startswith("com.android.settings/")}
    assert {"main", "network", "wifi", "display", "sound", "apps"} <= visited
    assert {"system", "about", "location"} <= visited  # below the fold of the first screen's list
    below = [e for e in m.screens[m.root].elements.values() if e.below]
    assert below and all(m.describe(m.root, e.key).startswith("opens") for e in below if e.status == TRIED)
    assert len(m.screens) >= 15 and m.root
    wifi = next(s.key for s in m.screens.values() if s.activity.endswith("WifiActivity"))
    path = m.path(m.root, wifi)
    assert path is not None and [m.screens[e.src].elements[e.element].name for e in path][0] == "Network & internet"
    assert "opens" in m.describe(m.root, path[0].element)


def test_exploration_never_taps_a_sensitive_element_and_records_why():
    m, phone = explored("Contacts")
    skipped = {e.name: e.reason for s in m.screens.values() for e in s.elements.values() if e.status == SKIPPED}
    assert "deleting" in skipped.values()
    assert all(e.status != TRIED for s in m.screens.values() for e in s.elements.values() if e.reason)
    assert phone.state["contacts"]["people"] == VirtualPhone().state["contacts"]["people"]


def test_the_shop_is_explored_without_paying_and_messages_without_sending():
    fresh = VirtualPhone()
    m, phone = explored("Shop")
    assert "paying" in m.not_tried()
    assert phone.state["shop"].get("orders", []) == fresh.state["shop"].get("orders", [])
    m2, phone2 = explored("Messages")
    assert "sending" in m2.not_tried()
    assert phone2.state["messages"]["sent"] == fresh.state["messages"]["sent"]


def test_exploration_stops_at_its_budget_and_resumes_from_the_map():
    phone = VirtualPhone()
    progress = []
    first = Explorer(phone, PARSER, "Settings", budget=ExploreBudget(max_steps=30), progress=progress.append).run()
    assert not first.complete and 30 <= first.steps_used <= 32
    assert progress[-1].done and progress[-1].steps == first.steps_used
    assert [p.steps for p in progress] == sorted(p.steps for p in progress)
    tried_before = first.coverage()["tried"]
    second = Explorer(phone, PARSER, "Settings", app_map=first, budget=ExploreBudget(max_steps=30)).run()
    assert second is first and second.coverage()["tried"] > tried_before and second.steps_used >= 60


def test_a_real_phone_is_not_explored_without_consent():
    class RealLooking(VirtualPhone):
        @property
        def info(self) -> DeviceInfo:
            return DeviceInfo("R58M", is_virtual=False)

    asked = []
    with pytest.raises(ExploreRefused):
        Explorer(RealLooking(), PARSER, "Notes", consent=lambda risks: asked.append(risks) or False).run()
    assert asked and "never types" in asked[0] and "delet" in asked[0]
    m = Explorer(RealLooking(), PARSER, "Notes", consent=lambda risks: True,
                 budget=ExploreBudget(max_steps=10)).run()
    assert m.screens


# ---- the map as knowledge -----------------------------------------------------------------


def test_the_map_survives_the_store_and_is_forgotten_when_the_app_version_changes():
    m, _ = explored("Notes", 60)
    m.app_version = "1.0"
    store = MemoryStore()
    maps = AppMaps(store)
    maps.save(m)
    key = map_id(m.package, m.language)  # kept under its app and language
    back = maps.load(key, "1.0")
    assert back is not None and back.to_data() == m.to_data()
    assert maps.load(key, "") is not None  # a phone that cannot tell the version keeps the map
    assert maps.load(key, "2.0") is None
    assert store.load_app_map(key) is None  # stale: deleted


def test_a_map_made_where_the_phone_could_not_name_the_app_reads_back_with_its_usual_name():
    """A real phone over adb lists no app names: the map is still "Settings", not a package,
    so a goal that names the app finds it and the hint says "open Settings"."""
    m = AppMap.from_data({"package": "com.android.settings", "label": "com.android.settings"})
    assert m.label == "Settings"
    assert AppMap.from_data({"package": "com.tapwise.shop"}).label == "Shop"


def test_a_map_from_a_newer_tapwise_is_refused_with_a_clear_error():
    data = AppMap("com.x").to_data()
    data["schema"] = 99
    with pytest.raises(MapError, match="newer Tapwise"):
        AppMap.from_data(data)


# ---- the hint ---------------------------------------------------------------------------------


def context(phone: VirtualPhone, goal: str) -> PlanContext:
    shot = phone.screenshot(with_hierarchy=True)
    return PlanContext(goal=goal, parse=PARSER.parse(shot), screen="")


def test_the_maps_next_step_is_taken_without_the_model_and_after_a_rejection_it_is_only_a_hint():
    m, _ = explored("Settings")
    phone = VirtualPhone()
    phone.open_app("Settings")
    inner = Recorder()
    planner = GuidedPlanner(inner, MapGuide([m]), phone, small_model=True)
    ctx = context(phone, "Turn on Wi-Fi")
    followed = planner.propose(ctx)
    assert not inner.seen  # no model call: the map knows the way
    assert followed.action.type is ActionType.TAP and followed.planner == "recorder+map"
    assert followed.rationale.startswith("App map: from here,") and "'Network & internet'" in followed.rationale
    first = ctx.parse.element(followed.action.target.element_id)
    assert first is not None and first.label.startswith("Network & internet")
    # the user turned it down on this screen: the model plans, with the map's words as a hint
    proposal = planner.propose(replace(ctx, rejected=(followed.action,)))
    seen = inner.seen[-1]
    hint = seen.notes[-1]
    assert hint.startswith("App map: from here,") and "'Network & internet'" in hint
    assert seen.parse.elements[0].label.startswith("Network & internet")
    assert hint in proposal.evidence
    assert {e.id for e in seen.parse.elements} == {e.id for e in ctx.parse.elements}


def test_the_map_does_not_lead_away_from_what_the_goal_names_on_this_screen():
    """On the product page the map knows a way to the cart, but "Buy now" — words the goal
    gives — is here: the guide takes no map step and the model plans, with the hint."""
    m, _ = explored("Shop")
    phone = VirtualPhone()
    phone.open_app("Shop")
    tap_text(phone, "Bluetooth Speaker Mini")
    goal = "Buy the mini Bluetooth speaker now"
    ctx = context(phone, goal)
    hint = MapGuide([m]).hint(goal, ctx.parse, phone.screenshot(with_hierarchy=True))
    assert hint is not None and hint.follow is not None  # the map alone would leave this page
    inner = Recorder()
    proposal = GuidedPlanner(inner, MapGuide([m]), phone, small_model=True).propose(ctx)
    assert inner.seen and proposal.planner == "recorder"
    assert any(n.startswith("App map:") for n in inner.seen[-1].notes)


def test_a_value_the_goal_gives_is_picked_on_this_screen_before_the_map_leads_on():
    """On the month the map goes straight to a new event; the goal's "March 20" is a day
    shown here, to pick first: the guide leaves that to the model."""
    m, _ = explored("Calendar")
    phone = VirtualPhone()
    phone.open_app("Calendar")
    goal = "Block March 20 as an all-day Holiday"
    ctx = context(phone, goal)
    hint = MapGuide([m]).hint(goal, ctx.parse, phone.screenshot(with_hierarchy=True))
    assert hint is not None and hint.follow is not None and hint.follow.target.description == "Create event"
    inner = Recorder()
    GuidedPlanner(inner, MapGuide([m]), phone, small_model=True).propose(ctx)
    assert inner.seen


def test_a_path_starting_below_the_fold_says_to_scroll_first():
    m, _ = explored("Settings")
    phone = VirtualPhone()
    phone.open_app("Settings")
    hint = MapGuide([m]).hint("Show the phone's model number in About phone", context(phone, "x").parse,
                              phone.screenshot(with_hierarchy=True))
    assert hint is not None and "scroll down, then 'About phone'" in hint.text and not hint.element_ids


def test_outside_the_app_the_hint_names_the_app_to_open():
    m, _ = explored("Settings")
    phone = VirtualPhone()  # on the launcher
    hint = MapGuide([m]).hint("Turn on Wi-Fi", context(phone, "x").parse, phone.screenshot(with_hierarchy=True))
    assert hint is not None and "open Settings" in hint.text and not hint.element_ids
    assert hint.follow is not None and hint.follow.type is ActionType.OPEN_APP and hint.follow.app == "Settings"


def test_outside_every_app_the_app_is_chosen_app_against_app_not_by_words_every_app_shows():
    """"Tell Ben Carter …": Contacts shows his name too, and "Call", "Text", "Create contact";
    scored app against app (words several apps show weigh little) the conversation list wins."""
    maps = [explored(app, 120)[0] for app in ("Contacts", "Notes", "Messages")]
    phone = VirtualPhone()
    hint = MapGuide(maps).hint("Tell Ben Carter 'Thanks again'", context(phone, "x").parse,
                               phone.screenshot(with_hierarchy=True))
    assert hint is not None and hint.follow is not None and hint.follow.app == "Messages", hint


def test_a_goal_names_an_app_by_a_plain_word_form_but_not_by_a_synonym():
    assert names_app("Delete the note about the dentist", "Notes")
    assert names_app("Add Tokyo to my world clocks", "Clock")
    assert not names_app("Make the text as large as possible", "Messages")
    m1, m2 = AppMap("com.a", label="Notes"), AppMap("com.b", label="Messages")
    ranked = rank_apps("Pin the Book ideas note", [m2, m1], LexicalScorer())
    assert [m.label for m, _ in ranked][0] == "Notes"


def test_a_path_step_that_cannot_be_found_again_gives_no_hint():
    m, _ = explored("Settings")
    for s in m.screens.values():  # the first steps of every path no longer match anything on screen
        for e in s.elements.values():
            e.fingerprint = type(e.fingerprint)(text="Nothing like this", resource_id="gone", kind="button")
    phone = VirtualPhone()
    phone.open_app("Settings")
    inner = Recorder()
    ctx = context(phone, "Turn on Wi-Fi")
    GuidedPlanner(inner, MapGuide([m]), phone, evidence=False, small_model=True).propose(ctx)
    assert inner.seen[-1] is ctx  # planned exactly as without a map


def test_a_goal_on_no_mapped_screen_gives_no_hint():
    m, _ = explored("Notes", 60)
    phone = VirtualPhone()
    phone.open_app("Notes")
    assert MapGuide([m]).hint("qqq zzz", context(phone, "x").parse, phone.screenshot(with_hierarchy=True)) is None


def test_an_outside_edge_is_described_as_leaving_the_app():
    m = AppMap("com.x")
    from agent.knowledge.app_map import MapElement, MapScreen
    from agent.types import Fingerprint

    m.screens["a"] = MapScreen("a", "com.x", elements={"k": MapElement("k", "Share", "button", Fingerprint())})
    m.add_edge("a", "k", OUTSIDE)
    assert m.describe("a", "k") == "leaves the app" and m.path("a", OUTSIDE) is None


# ---- runs and demonstrations grow the same map ---------------------------------------------


def test_a_solved_run_adds_its_transitions_to_the_explored_map():
    from agent.knowledge.base import Knowledge
    from agent.types import Episode, Step

    m, _ = explored("Settings", 60)  # budget spent before the Internet page was opened
    store = MemoryStore()
    AppMaps(store).save(m)
    phone = VirtualPhone()
    phone.open_app("Settings")
    steps = []
    for n, text in enumerate(("Network & internet", "Internet")):
        shot = phone.screenshot(with_hierarchy=True)
        parse = PARSER.parse(shot)
        el = next(e for e in parse.elements if e.label.startswith(text) and e.clickable)
        act = Action.tap(el.rect.center.x, el.rect.center.y)
        phone.tap(act.touch.x, act.touch.y)
        steps.append(Step(index=n, parse=parse, executed=act, foreground_package=shot.foreground_package))
    shot = phone.screenshot(with_hierarchy=True)
    steps.append(Step(index=2, parse=PARSER.parse(shot), executed=Action.simple(ActionType.COMPLETE),
                      foreground_package=shot.foreground_package))
    english = LanguageMaps(store, m.language)  # a run reads and grows the maps of the phone's language
    Knowledge(english).learn_transitions(Episode(goal="open the Wi-Fi settings", steps=tuple(steps)))
    grown = AppMaps(english).load("com.android.settings")
    assert grown is not None
    assert grown.edges[(m.root, "id:network")].count == m.edges[(m.root, "id:network")].count + 1  # seen again
    runs = [e for e in grown.edges.values() if e.source == "run"]
    network = m.edges[(m.root, "id:network")].dst
    assert [e.src for e in runs] == [network]  # the new step starts on the explored screen (matched by shape)
    assert runs[0].dst in grown.screens and runs[0].dst not in m.screens  # and leads to a screen it adds


def test_the_words_naming_the_app_choose_no_screen_of_it():
    from agent.knowledge.guide import screen_words

    assert screen_words("Show the weather in the Clock app", "Clock").split() == ["Show", "the", "weather"]
    assert screen_words("Open the Clock tab", "Clock") == "Open the Clock tab"  # a tab, not the app
    m, _ = explored("Clock")
    phone = VirtualPhone()
    phone.open_app("Clock")
    goal = "Show the weather in the Clock app"
    assert MapGuide([m]).hint(goal, context(phone, goal).parse, phone.screenshot(with_hierarchy=True)) is None
