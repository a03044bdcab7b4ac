"""The benchmarks' wording and language axes: ``--wording`` and ``--language`` choose what
the agent is told and on which phone, every result keeps the wording and language it was
run with (a resumed run and the reports keep them apart), a wording or language a task
lacks is skipped with a message (an error when nothing is left), and the figures put the
tuned wording 0 beside the others with the gap counted on the same tasks."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli.bench import bench_app
from evaluation.metrics import EpisodeResult
from evaluation.online import Job, plan_jobs
from evaluation.results import ResultsDB
from evaluation.supervised import SupervisedResult
from evaluation.wordings import axis_figures, parse_languages, parse_wordings, plan_cells
from phone.virtual.tasks import load_tasks
from tests.agent.fake_ollama import FakeLLMServer, Reply

runner = CliRunner()
BY_ID = {t.id: t for t in load_tasks()}

TASK = """
- id: t.airplane
  goals: ["Turn on airplane mode", "Put the phone in flight mode", "I'm boarding, no radios please"]
  goals_de: ["Schalte den Flugmodus ein", "Ich steige ins Flugzeug, Funk aus bitte"]
  app: com.android.settings
  step_budget: 4
  success: {path: settings.airplane_mode, eq: true}
  solution:
    - open_app: Settings
    - tap: Network & internet
    - tap: Airplane mode
- id: t.english_only
  goals: ["Turn on Bluetooth", "Enable bluetooth", "Switch on BT"]
  app: com.android.settings
  step_budget: 4
  success: {path: settings.bluetooth, eq: true}
  solution:
    - open_app: Settings
    - tap: Connected devices
    - tap: Bluetooth
"""


# ---- choosing the cells -------------------------------------------------------------------


def test_wording_and_language_specs_are_read_or_refused_with_what_to_write():
    assert parse_wordings("0") == (0,) and parse_wordings("2,0,2") == (2, 0) and parse_wordings("all") is None
    for bad in ("first", "-1", "", "1,x"):
        with pytest.raises(ValueError, match="wording number"):
            parse_wordings(bad)
    assert parse_languages("de") == ("de",) and parse_languages("en, de") == ("en", "de")
    with pytest.raises(ValueError, match="speaks en, de"):
        parse_languages("fr")


def test_a_wording_a_task_lacks_is_skipped_with_a_message_and_the_others_run():
    four, three = BY_ID["settings.roaming_off"], BY_ID["settings.airplane_on"]
    assert (len(four.goals), len(three.goals)) == (4, 3)
    cells, skipped = plan_cells([four, three], (3,))
    assert [(c.task_id, c.wording, c.goal) for c in cells] == [(four.id, 3, four.goals[3])]
    assert skipped == [f"{three.id}: 3 wording(s) in 'en' (0 to 2), no wording 3; skipped"]


def test_nothing_left_to_run_is_an_error_saying_what_the_tasks_have():
    with pytest.raises(ValueError, match=r"has wording 7 in 'en': they have 3 in 'en'.*pick a wording number below"):
        plan_cells([BY_ID["settings.airplane_on"]], (7,))
    no_german = next(t for t in BY_ID.values() if not t.wordings("de"))
    with pytest.raises(ValueError, match="0 in 'de'"):
        plan_cells([no_german], (0,), ("de",))


def test_all_wordings_in_both_languages_and_tasks_without_german_goals_skipped_for_german_only():
    task, english_only = BY_ID["settings.airplane_on"], next(t for t in BY_ID.values() if not t.wordings("de"))
    cells, skipped = plan_cells([task, english_only], None, ("en", "de"))
    got = [(c.task_id, c.language, c.wording) for c in cells]
    assert got == [(task.id, "en", 0), (task.id, "en", 1), (task.id, "en", 2), (task.id, "de", 0), (task.id, "de", 1),
                   *((english_only.id, "en", i) for i in range(len(english_only.goals)))]
    assert skipped == [f"{english_only.id}: no goals written in 'de' (it has: en); skipped"]
    assert cells[3].goal == task.wordings("de")[0]


def test_online_jobs_carry_the_wording_and_language_in_their_key():
    jobs = plan_jobs(["a", "b"], ["t1", "t2"], 1, ["none"], {}, asked={"t1": [("en", 0), ("de", 1)]})
    assert [(j.planner, j.task_id, j.language, j.wording) for j in jobs] == [
        ("a", "t1", "en", 0), ("b", "t1", "en", 0), ("a", "t1", "de", 1), ("b", "t1", "de", 1),
        ("a", "t2", "en", 0), ("b", "t2", "en", 0)]
    assert len({j.key for j in jobs}) == len(jobs)


# ---- the figures ----------------------------------------------------------------------------


def _sup(task: str, interventions: int, wording: int = 0, language: str = "en") -> SupervisedResult:
    return SupervisedResult(task, True, "succeeded", "", wording=wording, language=language, rejections=interventions)


def test_the_gap_to_the_tuned_wording_is_counted_on_the_same_tasks_only():
    results = [_sup("a", 0), _sup("b", 2), _sup("a", 1, 1), _sup("b", 4, 1), _sup("a", 3, 3), _sup("a", 5, 0, "de")]
    figs = {f.label: f for f in axis_figures(results, {"i": lambda r: float(r.interventions)})}
    assert figs["en · w0 (tuned)"].means == {"i": 1.0} and figs["en · w0 (tuned)"].gaps == {"i": None}
    assert figs["en · w1"].means == {"i": 2.5} and figs["en · w1"].gaps == {"i": 1.5}
    # wording 3 exists for task a only: compared with a's wording 0 (0), not with the mean over a and b (1)
    assert figs["en · w3"].gaps == {"i": 3.0} and figs["en · w3"].paired_tasks == 1
    assert figs["de · w0"].gaps == {"i": 5.0}
    pooled = figs["en · wordings 1+ pooled"]
    assert pooled.cells == 3 and pooled.means == {"i": round(8 / 3, 3)}


# ---- results keep their wording and language -----------------------------------------------


def test_results_of_another_wording_or_language_are_other_cells_and_read_back_with_them(tmp_path: Path):
    with ResultsDB(tmp_path / "r.sqlite") as db:
        db.open_run("r", {})
        for w, lang in ((0, "en"), (1, "en"), (0, "de")):
            db.save("r", EpisodeResult("p", "t", wording=w, language=lang, success=w == 1))
        got = {(r.wording, r.language): r.success for r in db.results("r")}
        assert got == {(0, "en"): False, (1, "en"): True, (0, "de"): False}
        assert db.done_cells("r") == {("p", "t", 0, "none", 0, "en"), ("p", "t", 0, "none", 1, "en"),
                                      ("p", "t", 0, "none", 0, "de")}
        assert db.done_keys("r") == {("p", "t", 0, "none")}


def test_a_results_database_of_the_first_schema_is_upgraded_in_place(tmp_path: Path):
    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema', '1');
        CREATE TABLE runs (run_id TEXT PRIMARY KEY, settings TEXT NOT NULL, created_at REAL NOT NULL,
                           updated_at REAL NOT NULL);
        INSERT INTO runs VALUES ('r', '{}', 0, 0);
        CREATE TABLE results (run_id TEXT NOT NULL, planner TEXT NOT NULL, task_id TEXT NOT NULL,
            seed INTEGER NOT NULL, noise TEXT NOT NULL, status TEXT NOT NULL, doc TEXT NOT NULL,
            finished_at REAL NOT NULL, PRIMARY KEY (run_id, planner, task_id, seed, noise));
        CREATE TABLE problems (run_id TEXT NOT NULL, source TEXT NOT NULL, message TEXT NOT NULL, at REAL NOT NULL,
            PRIMARY KEY (run_id, source));
    """)
    con.execute("INSERT INTO results VALUES ('r', 'p', 't', 0, 'none', 'done', ?, 0)",
                (json.dumps({"planner": "p", "task_id": "t", "success": True}),))
    con.commit()
    con.close()
    with ResultsDB(path) as db:
        (old,) = db.results("r")
        assert (old.wording, old.language, old.success) == (0, "en", True)
        db.save("r", EpisodeResult("p", "t", wording=2))
        assert len(db.results("r")) == 2
    assert sqlite3.connect(path).execute("SELECT value FROM meta WHERE key='schema'").fetchone() == ("2",)


# ---- the commands ----------------------------------------------------------------------------


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    d = tmp_path / "tasks"
    d.mkdir()
    (d / "t.yaml").write_text(TASK)
    return d


def test_online_runs_every_wording_in_both_languages_and_stores_each(task_dir: Path, tmp_path: Path):
    db = tmp_path / "r.sqlite"
    args = ["online", "--planners", "zeroshot-", "--tasks", str(task_dir), "--model", "fake-model:latest",
            "--backend", "ollama", "--db", str(db), "--run", "w", "--wording", "all", "--language", "en,de"]
    with FakeLLMServer(default=Reply("done")) as fake:
        res = runner.invoke(bench_app, [*args, "--base-url", fake.url], env={"COLUMNS": "160"})
        assert res.exit_code == 0, res.output
        prompts = fake.prompts("Schalte den Flugmodus ein")
        again = runner.invoke(bench_app, [*args, "--base-url", fake.url])
    assert again.exit_code == 0 and "8 episodes already done" in again.output, again.output
    assert "t.english_only: no goals written in 'de'" in res.output
    assert "de · w1" in res.output and "en · w0 (tuned)" in res.output
    with ResultsDB(db) as store:
        got = {(r.task_id, r.language, r.wording): r.goal for r in store.results("w")}
    assert len(got) == 3 + 2 + 3
    assert got[("t.airplane", "de", 1)] == "Ich steige ins Flugzeug, Funk aus bitte"
    assert got[("t.airplane", "en", 2)] == "I'm boarding, no radios please"
    assert prompts and "Einstellungen" in prompts[0]  # the German goal, on the phone in German


def test_a_job_of_the_online_benchmark_tells_the_agent_the_asked_wording(task_dir: Path):
    from evaluation import online_bench

    with FakeLLMServer(default=Reply("done")) as fake:
        settings = {"tasks_source": str(task_dir), "model": "fake-model:latest", "base_url": fake.url,
                    "backend": "ollama", "max_steps": 2, "aitw": False}
        r = online_bench.run_cell(Job("zeroshot-", "t.airplane", 0, "none", settings, 2, "en"))
        assert fake.prompts("I'm boarding, no radios please")
    assert (r.goal, r.wording, r.language) == ("I'm boarding, no radios please", 2, "en")
    with pytest.raises(ValueError, match="no wording 5"):
        online_bench.run_cell(Job("zeroshot-", "t.airplane", 0, "none", settings, 5, "en"))


def test_supervised_stores_wording_and_language_and_resumes_from_its_file(tmp_path: Path):
    out = tmp_path / "sup.json"
    args = ["supervised", "--scripted", "--tasks", "launcher.open_settings_icon", "--wording", "1", "--language", "de",
            "--out", str(out)]
    res = runner.invoke(bench_app, args)
    assert res.exit_code == 0, res.output
    (arm,) = json.loads(out.read_text())
    (task,) = arm["tasks"]
    german = BY_ID["launcher.open_settings_icon"].wordings("de")[1]
    assert (task["wording"], task["language"], task["goal"]) == (1, "de", german)
    assert arm["settings"]["model"] == "scripted" and arm["by_wording"][0]["label"] == "de · w1"
    again = runner.invoke(bench_app, args)
    assert again.exit_code == 0 and "1 of 1 cells already there" in again.output
    other = runner.invoke(bench_app, [*args, "--budget", "3"])
    assert other.exit_code == 2 and "other settings" in other.output


def test_supervised_refuses_a_wording_no_chosen_task_has():
    res = runner.invoke(bench_app, ["supervised", "--scripted", "--tasks", "settings.airplane_on", "--wording", "7"])
    assert res.exit_code == 2
    assert "has wording 7 in 'en': they have 3 in 'en'" in res.output


def test_supervised_again_asks_the_later_pass_in_its_wording_on_the_same_phone_language(tmp_path: Path):
    out = tmp_path / "again.json"
    task = BY_ID["launcher.open_settings_icon"]
    res = runner.invoke(bench_app, ["supervised", "--scripted", "--tasks", task.id, "--language", "de", "--again",
                                    "--second-wording", "1", "--out", str(out)], env={"COLUMNS": "160"})
    assert res.exit_code == 0, res.output
    first, second = json.loads(out.read_text())
    assert [(t["language"], t["wording"], t["goal"]) for t in first["tasks"]] == [("de", 0, task.wordings("de")[0])]
    assert [(t["language"], t["wording"], t["goal"]) for t in second["tasks"]] == [("de", 1, task.wordings("de")[1])]
    assert second["pass"] == "second pass, wording 1" and "same tasks, 1:" in res.output


def test_supervised_again_leaves_a_task_without_the_later_wording_out_of_that_pass(tmp_path: Path):
    out = tmp_path / "again.json"
    res = runner.invoke(bench_app, ["supervised", "--scripted", "--tasks", "settings.airplane_on,settings.wifi_off",
                                    "--again", "--second-wording", "3", "--out", str(out)])
    assert res.exit_code == 0, res.output
    first, second = json.loads(out.read_text())
    assert [t["task_id"] for t in first["tasks"]] == ["settings.airplane_on", "settings.wifi_off"]
    assert [t["task_id"] for t in second["tasks"]] == ["settings.wifi_off"]  # airplane_on has three wordings


def test_the_escalation_bench_runs_and_records_the_wording_it_was_asked_for(tmp_path: Path) -> None:
    out = tmp_path / "esc.jsonl"
    # no model answers (nothing listens on port 9): the supervisor shows the step where one is needed
    res = runner.invoke(bench_app, [
        "escalation", "--tasks", "launcher.open_settings_icon", "--wording", "1", "--arms", "small",
        "--small-url", "http://127.0.0.1:9/v1", "--small-model", "small", "--big-url", "http://127.0.0.1:9/v1",
        "--big-model", "big", "--planner", "zeroshot-", "--out", str(out)])
    assert res.exit_code == 0, res.output
    row = json.loads(out.read_text(encoding="utf-8"))
    assert row["wording"] == 1 and row["goal"] == BY_ID["launcher.open_settings_icon"].goals[1]
    assert row["arm"] == "small" and row["completed"]
