"""The `tapwise bench` commands that need neither the virtual phone nor an LLM."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from app.cli.bench import bench_app
from evaluation.metrics import EpisodeResult
from evaluation.results import ResultsDB

runner = CliRunner()

GOLD = {
    "format": "aitw",
    "episodes": [
        {
            "episode_id": "e1",
            "goal": "open wifi settings",
            "steps": [
                {"action_type": 4, "touch_point": [0.42, 0.15], "lift_point": [0.42, 0.15],
                 "ui_positions": [[0.40, 0.10, 0.05, 0.80]]},
                {"action_type": 4, "touch_point": [0.8, 0.5], "lift_point": [0.2, 0.5]},
                {"action_type": 3, "typed_text": "home wifi"},
                {"action_type": 10},
            ],
        }
    ],
}
PRED = {
    "format": "aitw",
    "episodes": [
        {
            "episode_id": "e1",
            "steps": [
                {"action_type": 4, "touch_point": [0.42, 0.85], "lift_point": [0.42, 0.85]},
                {"action_type": 4, "touch_point": [0.5, 0.8], "lift_point": [0.5, 0.2]},
                {"action_type": 3, "typed_text": "Home WiFi"},
                {"action_type": 10},
            ],
        }
    ],
}


def test_bench_aitw_prints_scores_and_writes_json(tmp_path: Path) -> None:
    g, p, out = tmp_path / "g.json", tmp_path / "p.json", tmp_path / "s.json"
    g.write_text(json.dumps(GOLD))
    p.write_text(json.dumps(PRED))
    res = runner.invoke(bench_app, ["aitw", str(g), str(p), "--json", str(out), "--steps"])
    assert res.exit_code == 0, res.output
    assert "75.0%" in res.output
    data = json.loads(out.read_text())
    # tap in the same row box: match; vertical vs horizontal swipe: no; type: yes; complete: yes.
    assert [s["matched"] for s in data["steps_detail"]] == [True, False, True, True]
    assert data["click_region"] == 1.0 and data["scroll_direction"] == 0.0
    assert data["typed_text"] == 1.0  # "home wifi" vs "Home WiFi" agree after case folding


def test_bench_aitw_reports_a_bad_file_without_a_traceback(tmp_path: Path) -> None:
    g = tmp_path / "g.json"
    g.write_text("{not json")
    res = runner.invoke(bench_app, ["aitw", str(g), str(g)])
    assert res.exit_code == 2
    assert "not valid JSON" in res.output and "Traceback" not in res.output


def test_bench_report_writes_markdown_and_html(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with ResultsDB(db) as store:
        store.open_run("r1", {"model": "SmolLM2-135M-Instruct"})
        for i in range(3):
            store.save("r1", EpisodeResult("a", f"t{i}", success=i > 0, steps=2))
            store.save("r1", EpisodeResult("b", f"t{i}", success=False, steps=4))
    res = runner.invoke(bench_app, ["report", str(tmp_path / "rep"), "--db", str(db), "--run", "r1"])
    assert res.exit_code == 0, res.output
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "SmolLM2-135M-Instruct" in md and "| a | 3 | 66.7" in md
    assert (tmp_path / "rep" / "report.html").exists()


def test_bench_report_names_the_missing_run(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    ResultsDB(db).open_run("r1", {})
    res = runner.invoke(bench_app, ["report", str(tmp_path / "rep"), "--db", str(db), "--run", "nope"])
    assert res.exit_code == 2 and "no run named 'nope'" in res.output


def test_bench_aitw_scores_an_episode_from_the_tapwise_database(tmp_path: Path) -> None:
    from agent.types import Action, Episode, ImageRef, Proposal, Step
    from app.settings import load_settings
    from app.storage import Store

    settings, _ = load_settings()
    shot = ImageRef("s.png", "0" * 64, 1000, 2000)
    tap = Action.tap(150, 840)  # [0.42, 0.15]: same row box as the gold tap
    ep = Episode(goal="g", id="ep42", steps=(Step(0, screenshot=shot, proposal=Proposal(tap), executed=tap),))
    with Store(settings.database_path) as store:
        store.begin_episode(ep)
        for step in ep.steps:
            store.append_step(ep.id, step)
    g = tmp_path / "g.json"
    g.write_text(json.dumps({"format": "aitw", "episodes": [{"episode_id": "x", "steps": [GOLD["episodes"][0]["steps"][0]]}]}))
    res = runner.invoke(bench_app, ["aitw", str(g), "episode:ep42"])
    assert res.exit_code == 0, res.output
    assert "100.0%" in res.output
    res = runner.invoke(bench_app, ["aitw", str(g), "episode:nope"])
    assert res.exit_code == 2 and "nope" in res.output
