"""Maps know their language: a map records the UI language it was explored in (read from
the phone: the virtual phone knows it, a phone over adb answers ``getprop
persist.sys.locale``), the store keeps one map per app and language, and the guide reads
the maps of the language the phone shows — so a German goal on a German phone is matched
against German screens, and an English map never speaks for a German phone."""

from __future__ import annotations

import pytest

from agent.knowledge.app_map import AppMap
from agent.knowledge.explore import ExploreBudget
from agent.knowledge.guide import AppMaps, MapGuide
from agent.knowledge.map_language import LanguageMaps, language_of, map_id, phone_language
from agent.knowledge.map_plan import apps_to_explore, launchable_apps
from agent.knowledge.store import MemoryStore
from app.map_upkeep import explore_one, survey
from phone.virtual.phone import VirtualPhone
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser

SETTINGS = "com.android.settings"


@pytest.fixture(scope="module")
def parser() -> ScreenParser:
    return ScreenParser(PipelineConfig(mode="tree", ocr="none", detector="none", icons="none"))


class AdbLike:
    """A phone reached through an adb shell: answers the getprop and package queries as Android does."""

    def __init__(self, out: dict[str, str]) -> None:
        self.out, self.commands = out, []

    def shell(self, cmd: str) -> str:
        self.commands.append(cmd)
        return next((v for k, v in self.out.items() if k in cmd), "")


def test_the_language_is_read_from_the_phone_and_reduced_to_its_primary_tag():
    assert phone_language(VirtualPhone(lang="de")) == "de"
    assert phone_language(AdbLike({"getprop": "de-DE\n\nen-US\n"})) == "de"
    assert phone_language(AdbLike({"getprop": "\nfr\n"})) == "fr"  # only the older property is set
    assert phone_language(AdbLike({})) == "" and phone_language(object()) == ""
    assert language_of("pt_BR") == "pt" and language_of("not a tag!") == ""


def test_a_phone_over_adb_lists_its_launchable_apps_by_package():
    phone = AdbLike({"query-activities": "priority=0 preferredOrder=0 match=0x108000\n"
                                         "com.android.settings/.Settings\n"
                                         "priority=0\norg.example.notes/org.example.notes.MainActivity\n"})
    assert launchable_apps(phone) == [("Settings", "com.android.settings"), ("Notes", "org.example.notes")]
    assert "android.intent.category.LAUNCHER" in phone.commands[0]


def test_one_map_per_app_and_language_and_a_map_without_language_stands_in_until_one_exists():
    store = MemoryStore()
    AppMaps(store).save(AppMap(SETTINGS, "Settings", language="en"))
    AppMaps(store).save(AppMap(SETTINGS, "Einstellungen", language="de"))
    AppMaps(store).save(AppMap("org.old", "Old"))  # made before maps knew their language
    assert sorted(store.app_map_packages()) == sorted([map_id(SETTINGS, "en"), map_id(SETTINGS, "de"), "org.old"])
    de, en, fr = (AppMaps(LanguageMaps(store, lang)) for lang in ("de", "en", "fr"))
    assert de.load(SETTINGS).label == "Einstellungen" and en.load(SETTINGS).label == "Settings"
    assert fr.load(SETTINGS) is None, "an English or German map never speaks for a French phone"
    assert [m.package for m in fr.all()] == ["org.old"]
    # a run on the German phone grows the German map (and makes one where there was none)
    de.save(AppMap("org.new", "Neu"))
    assert map_id("org.new", "de") in store.app_map_packages() and en.load("org.new") is None
    assert de.load("org.new").language == "de"
    # the stand-in grows where it is: it is not relabelled as German
    old = de.load("org.old")
    de.save(old)
    assert "org.old" in store.app_map_packages() and de.load("org.old").language == ""


def test_in_a_store_of_every_language_a_bare_package_never_reads_another_language_s_map():
    store = MemoryStore()
    AppMaps(store).save(AppMap(SETTINGS, "Einstellungen", language="de"))
    every = AppMaps(store)
    assert every.load(SETTINGS) is None, "a German map never stands in for a phone of unknown language"
    assert every.load(map_id(SETTINGS, "de")).label == "Einstellungen"  # named by its key it is there
    assert [m.label for m in every.all()] == ["Einstellungen"]  # and every map is listed
    AppMaps(store).save(AppMap(SETTINGS, "Settings"))  # one of unknown language
    assert every.load(SETTINGS).label == "Settings"


def test_the_plan_names_each_app_without_a_usable_map_and_why():
    apps = [("Settings", "s"), ("Clock", "c"), ("Notes", "n"), ("Files", "f"), ("Shop", "p"), ("Old", "o")]
    maps = {"s": AppMap("s", language="de", complete=True),
            "c": AppMap("c", language="de", app_version="1", complete=True),
            "n": AppMap("n", language="de", steps_used=40),
            "f": AppMap("f", language="de", steps_used=600),  # spent its budget: left as it is
            "o": AppMap("o")}
    todo = apps_to_explore(apps, maps, language="de", versions={"c": "2"}, max_steps=600,
                           other_languages={"p": ["en"]})
    assert [(t.package, t.resume) for t in todo] == [("c", False), ("n", True), ("p", False), ("o", False)]
    reasons = {t.package: t.reason for t in todo}
    assert "version 1" in reasons["c"] and "40 of 600" in reasons["n"] and "in en" in reasons["p"]
    assert "language" in reasons["o"]
    assert next(t for t in todo if t.package == "n").steps == 560


def test_switching_the_phone_to_german_makes_german_maps_that_match_a_german_goal(parser):
    store = MemoryStore()
    phone = VirtualPhone()  # English first
    budget = ExploreBudget(max_steps=60)
    english = survey(phone, lambda: store, max_steps=60)
    assert english.language == "en" and len(english.todo) == len(phone.installed_apps())
    job = next(j for j in english.todo if j.package == SETTINGS)
    explore_one(phone, parser, job, "en", lambda: store, budget=budget)
    assert survey(phone, lambda: store, max_steps=60).todo[0].package != SETTINGS

    phone.state["settings"]["language"] = "de"  # Settings > Languages > Deutsch
    german = survey(phone, lambda: store, max_steps=60)
    assert german.language == "de"
    job = next(j for j in german.todo if j.package == SETTINGS)
    assert "in en" in job.reason and not job.resume, "the English map is kept, a German one is made beside it"
    m = explore_one(phone, parser, job, "de", lambda: store, budget=budget)
    assert m.language == "de" and any(s.title == "Netzwerk & Internet" for s in m.screens.values())
    assert {map_id(SETTINGS, "en"), map_id(SETTINGS, "de")} <= set(store.app_map_packages())

    goal = "Schalte den Flugmodus ein"
    fresh = VirtualPhone(lang="de")
    fresh.open_app(SETTINGS)
    screen = fresh.screenshot(with_hierarchy=True)
    parse = parser.parse(screen)
    german_guide = MapGuide(AppMaps(LanguageMaps(store, "de")).all())
    hint = german_guide.hint(goal, parse, screen)
    assert hint is not None and hint.follow is not None, "the German map knows the way to airplane mode"
    target = german_guide.maps[SETTINGS].screens[hint.target]
    assert target.title == "Netzwerk & Internet" and "Flugmodus" in " ".join(target.texts)
    # the English map of the same app cannot say it, and would call the goal impossible
    english_guide = MapGuide(AppMaps(LanguageMaps(store, "en")).all())
    assert english_guide.hint(goal, parse, screen) is None
    assert english_guide.unreachable(goal, parse) and not german_guide.unreachable(goal, parse)


def test_the_served_virtual_phone_says_its_language_and_its_apps_through_its_shell_as_a_phone_does():
    from phone.virtual.wire.served_phone import ServedPhone
    from phone.virtual.wire.shell_commands import DeviceState, Output, Shell

    phone = VirtualPhone()
    shell = Shell(ServedPhone(phone), DeviceState(props={}))

    def run(line: str) -> str:
        out = Output()
        assert shell.run(line, out) == 0
        return out.stdout.decode()

    assert phone_language(AdbLike({"getprop": run("getprop persist.sys.locale")})) == "en"
    phone.state["settings"]["language"] = "de"  # switched in its Settings app
    assert phone_language(AdbLike({"getprop": run("getprop persist.sys.locale")})) == "de"
    listed = launchable_apps(AdbLike({"query-activities": run(
        "cmd package query-activities --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER")}))
    assert [pkg for _name, pkg in listed] == [pkg for _label, pkg in phone.installed_apps()]
