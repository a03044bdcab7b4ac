"""Specification of the goals' wordings and languages: every task is asked at least three
ways, the yardstick and twenty more tasks in German too, the reference solutions (written
against the English screens) replay to success on the phone in German, and a wording or
language a task lacks is a clear error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from phone.virtual.i18n import LANGUAGES
from phone.virtual.localise import local_target, local_words
from phone.virtual.phone import VirtualPhone
from phone.virtual.task_sets import TASK_SETS
from phone.virtual.tasks import Task, TaskError, WordingError, load_task_file, load_tasks, replay
from tests.phone_virtual.task_cli import sim_tasks, write_airplane_task

TASKS = load_tasks()
BY_ID = {t.id: t for t in TASKS}
YARDSTICK = TASK_SETS["yardstick"]


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def test_every_task_has_at_least_three_distinct_wordings():
    for t in TASKS:
        assert len({_norm(g) for g in t.goals}) >= 3, (t.id, t.goals)


def test_wording_zero_is_still_the_first_goal_of_every_task():
    assert all(t.goal == t.goals[0] == t.wording(0) for t in TASKS)


def test_every_yardstick_task_has_at_least_two_german_wordings():
    for tid in YARDSTICK:
        assert len({_norm(g) for g in BY_ID[tid].wordings("de")}) >= 2, tid


def test_twenty_more_tasks_in_german_spread_over_the_apps():
    more = [t for t in TASKS if t.wordings("de") and t.id not in YARDSTICK]
    assert len(more) >= 20
    assert len({t.app for t in more}) >= 6
    assert all(len(t.wordings("de")) >= 2 for t in more)


def test_german_goals_are_not_english_ones_and_no_wording_is_shared_by_two_tasks():
    seen: dict[str, str] = {}
    for t in TASKS:
        english = {_norm(g) for g in t.goals}
        assert not english & {_norm(g) for g in t.wordings("de")}, t.id
        for lang in t.languages:
            for g in t.wordings(lang):
                assert seen.setdefault(_norm(g), t.id) == t.id, (g, t.id, seen[_norm(g)])


def test_the_task_languages_are_the_phone_languages():
    assert {lang for t in TASKS for lang in t.languages} <= set(LANGUAGES)


@pytest.fixture(scope="module")
def german_phone():
    phone = VirtualPhone(lang="de")
    yield phone
    phone.close()


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_reference_solution_succeeds_on_the_phone_in_german(task: Task, german_phone: VirtualPhone):
    task.setup(german_phone)
    assert german_phone.lang == "de"
    if task.wordings("de"):
        assert not task.is_success(german_phone), f"{task.id} is already solved on the German phone"
    actions = replay(task, german_phone, setup=False)
    assert task.is_success(german_phone, actions[-1] if actions else None), task.id


def test_the_german_screens_show_german_words_where_the_solution_taps(german_phone: VirtualPhone):
    task = BY_ID["settings.wifi_off"]
    task.setup(german_phone)
    german_phone.open_app("Settings")
    shown = {e.text for e in german_phone.ground_truth().elements}
    assert "Netzwerk & Internet" in shown and "Network & internet" not in shown


def test_targets_are_put_in_the_phone_language():
    assert local_words("8:30 AM", "de") == "08:30" and local_words("4:05 PM", "de") == "16:05"
    assert local_words("Thu, Mar 12, 2026", "de") == "Do., 12. Mär. 2026"
    assert local_words("Network & internet", "de") == "Netzwerk & Internet"
    assert local_words("Wi-Fi", "de") == "WLAN"  # the UI string has a non-breaking hyphen
    assert local_words("Bright Morning", "de") == "Bright Morning"  # no translation: the same words
    assert local_target({"id": "switch_widget", "near": "Wi-Fi", "index": 1}, "de") == {
        "id": "switch_widget", "near": "WLAN", "index": 1}
    assert local_target({"text": "Settings"}, "en") == {"text": "Settings"}


def test_a_task_asked_for_a_wording_or_language_it_lacks_says_what_it_has():
    task = BY_ID["settings.airplane_on"]
    assert len(task.goals) == 3
    with pytest.raises(WordingError, match=r"3 wording\(s\) in 'en' \(0 to 2\); there is no wording 7"):
        task.wording(7)
    lacking = next(t for t in TASKS if not t.wordings("de"))
    with pytest.raises(WordingError, match="no goals in 'de'"):
        lacking.wording(0, "de")
    with pytest.raises(WordingError, match="no language 'fr'"):
        task.setup(VirtualPhone(), "fr")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("goals_fr: [Active le mode avion]\n", "unknown field"),
        ("goals_de: []\n", "'goals_de' must be a non-empty list"),
        ("goals_de: [Flugmodus an, '  flugmodus   AN ']\n", "'goals_de' lists the same wording twice"),
    ],
)
def test_malformed_german_goals_name_the_file_and_the_field(tmp_path: Path, extra: str, message: str):
    path = tmp_path / "t.yaml"
    path.write_text("id: t1\ngoals: [Airplane mode on]\napp: a\nsuccess: {path: a, eq: 1}\nsolution: [back]\n" + extra)
    with pytest.raises(TaskError, match=re.escape(message)) as err:
        load_task_file(path)
    assert str(path) in str(err.value)


def test_german_goals_load_beside_the_english_ones(tmp_path: Path):
    path = tmp_path / "t.yaml"
    path.write_text("id: t1\ngoals: [Airplane mode on, Flight mode please]\ngoals_de: [Flugmodus an]\napp: a\n"
                    "success: {path: a, eq: 1}\nsolution: [back]\n")
    (task,) = load_task_file(path)
    assert task.languages == ("en", "de")
    assert task.wordings("en") == ("Airplane mode on", "Flight mode please") and task.wording(0, "de") == "Flugmodus an"


def test_validate_on_the_german_phone_from_the_command_line(tmp_path: Path):
    write_airplane_task(tmp_path, goals_de="Flugmodus an")
    res = sim_tasks(str(tmp_path), "--only-extra", "--validate", "--language", "de")
    assert res.exit_code == 0, res.output
    assert "ok   extra.airplane" in res.output and "Flugmodus an" in res.output
    assert "failed on the phone in 'de'" in res.output
    res = sim_tasks("--language", "fr")
    assert res.exit_code == 2 and "speaks en, de" in res.output
