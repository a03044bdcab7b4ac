"""``tapwise bench grounding``: ScreenSpot-format records on screens drawn here, carried out
by the scripted chooser through the real pixel parse, scored, stored and resumed."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image, ImageDraw
from typer.testing import CliRunner

from app.cli.bench import bench_app
from evaluation.grounding import bench
from evaluation.grounding.records import load_records
from evaluation.grounding.summary import naming_counts, table
from tests.vision.conftest import font
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser

runner = CliRunner()


def _screen(path: Path, rows: list[str]) -> None:
    """A tall list screen saved as JPEG data under a .png name (as ScreenSpot publishes them)."""
    im = Image.new("RGB", (1080, 2400), (255, 255, 255))
    d = ImageDraw.Draw(im)
    for i, title in enumerate(rows):
        y = 400 + 220 * i
        d.text((60, y), title, font=font(46), fill=(20, 20, 20))
        d.line([(1000, y + 10), (1016, y + 28), (1000, y + 46)], fill=(150, 150, 150), width=5)
    im.save(path, format="JPEG", quality=92)


def _dataset(tmp_path: Path) -> Path:
    root = tmp_path / "ss"
    (root / "images").mkdir(parents=True)
    _screen(root / "images" / "one.png", ["Wallpaper", "Sound and vibration"])
    _screen(root / "images" / "two.png", ["Battery", "Storage"])
    records = [
        {"img_filename": "mobile/one.png", "bbox": [30, 360, 1020, 140], "instruction": "open wallpaper", "data_type": "text"},
        {"img_filename": "mobile/one.png", "bbox": [30, 580, 1020, 140], "instruction": "sound settings", "data_type": "text"},
        {"img_filename": "mobile/two.png", "bbox": [30, 580, 1020, 140], "instruction": "check storage", "data_type": "text"},
        {"img_filename": "mobile/two.png", "bbox": [900, 2300, 400, 400], "instruction": "off screen", "data_type": "icon"},
        {"img_filename": "mobile/gone.png", "bbox": [0, 0, 10, 10], "instruction": "missing", "data_type": "icon"},
    ]
    (root / "records.json").write_text(json.dumps(records), encoding="utf-8")
    return root


def test_records_are_read_with_halves_and_unusable_ones_are_reported(tmp_path: Path) -> None:
    records, problems = load_records(_dataset(tmp_path))
    assert [r.instruction for r in records] == ["open wallpaper", "sound settings", "check storage", "off screen"]
    assert {r.half for r in records if r.screen == "one.png"} == {"A"} and records[2].half == "B"
    assert records[3].box.right == 1080 and records[3].box.bottom == 2400  # clipped to the image
    assert [k for k, _ in problems] == ["records#4"] and "gone.png" in problems[0][1]


class _Counting(bench.OracleChooser):
    def __init__(self) -> None:
        self.calls = 0

    def choose(self, goal, parse, record):  # type: ignore[no-untyped-def]
        self.calls += 1
        return super().choose(goal, parse, record)


def test_rows_are_tapped_inside_their_box_and_a_second_run_continues_without_repeating(tmp_path: Path) -> None:
    records, _ = load_records(_dataset(tmp_path))
    parser = ScreenParser(PipelineConfig(mode="vision", remember_previous=False))
    out = tmp_path / "res.jsonl"
    settings = {"chooser": "oracle"}
    first = bench.run(records[:2], parser.parse, _Counting(), bench.ResultsFile(out, settings))
    assert all(v.inside and v.covered and v.point is not None for v in first)
    assert first[0].cover_words == "Wallpaper"
    again = _Counting()
    verdicts = bench.run(records, parser.parse, again, bench.ResultsFile(out, settings))
    assert again.calls == 2 and len(verdicts) == 4  # only the two new instructions ran
    off = next(v for v in verdicts if v.instruction == "off screen")
    assert not off.inside and not off.covered and off.error == "not in the parse"
    rows = {f.label: f for f in table(verdicts)}
    assert (rows["all"].n, rows["all"].inside) == (4, 3)
    targets, offered = naming_counts(verdicts)
    assert targets == {"words": 0, "name": 3, "described": 0, "bare": 0}  # each row is named by its title
    assert offered["bare"] == 0 and offered["name"] >= 4  # two rows on each of the two screens
    assert (rows["half B all"].n, rows["half B text"].inside) == (2, 1)


def test_a_results_file_of_another_run_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "res.jsonl"
    bench.ResultsFile(out, {"chooser": "oracle"})
    try:
        bench.ResultsFile(out, {"chooser": "model"})
    except ValueError as exc:
        assert "other settings (chooser)" in str(exc)
    else:
        raise AssertionError("a file of another run was accepted")


def test_the_command_prints_accuracy_and_coverage_by_kind_and_half(tmp_path: Path) -> None:
    root = _dataset(tmp_path)
    result = runner.invoke(bench_app, ["grounding", str(root), "--chooser", "oracle", "--out", str(tmp_path / "r.jsonl"),
                                       "--no-second-look"])
    assert result.exit_code == 0, result.output
    assert "skipped records#4" in result.output
    assert "strict accuracy" in result.output and "half B text" in result.output
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["settings"]["chooser"] == "oracle" and len(lines) == 5
    assert all(json.loads(x)["point"] is not None for x in lines[1:4])  # the tap point is kept
    assert "elements under the targets: words 0 (0.0 %), name 3 (100.0 %)" in result.output
    assert "elements offered:" in result.output


def test_the_model_chooser_takes_the_windows_step_over_http_and_says_who_decided(tmp_path: Path) -> None:
    """The built-in path with a scripted OpenAI-compatible server: each goal goes through the
    planner with the screen's evidence; one whose words name nothing goes to the model,
    whose structured reply names the second row; who decided is kept."""
    import re

    from agent.knowledge.guided import with_maps
    from agent.llm import make_client
    from agent.planners.registry import planner_bundle
    from agent.types import Autonomy
    from evaluation.grounding.summary import deciders
    from evaluation.offline.replay import StepReplayer
    from evaluation.scripted_model import ScriptedLLMServer

    def answer(prompt: str) -> str:
        name = "Wallpaper" if "open wallpaper" in prompt else "Sound and vibration"
        row = re.search(rf"\[(\d+)\] item \({name}", prompt)  # the row as the screen's description lists it
        key = f"{name} [{row.group(1)}]" if row else ""
        return json.dumps({"action": {"element": key, "type": "tap"}, "why": "second row"})

    records, _ = load_records(_dataset(tmp_path))
    records[1] = type(records[1])(records[1].key, records[1].image, records[1].box, "the row under the first one",
                                  records[1].kind, records[1].half)
    parser = ScreenParser(PipelineConfig(mode="vision", remember_previous=False))
    with ScriptedLLMServer(responder=answer, models=("scripted",)) as server:
        client = make_client("openai", "scripted", server.url + "/v1")
        bundle = planner_bundle("zeroshot-", client, autonomy=Autonomy.AUTO, llm_grounder=False, constrained=True)
        from dataclasses import replace

        bundle = replace(bundle, planner=with_maps(bundle.planner, None))
        chooser = bench.ModelChooser(StepReplayer(bundle, None))
        verdicts = bench.run(records[:2], parser.parse, chooser, bench.ResultsFile(tmp_path / "m.jsonl", {"c": "m"}))
        asked = server.chat_requests
    by = {v.instruction: v for v in verdicts}
    assert all(v.inside for v in verdicts)
    assert by["the row under the first one"].decided_by == "zeroshot-"  # no words to point with: the model chose
    assert asked >= 1 and by["the row under the first one"].llm_calls >= 1
    counts = {who: (n, ok) for who, n, ok in deciders(verdicts)}
    assert sum(n for n, _ in counts.values()) == 2 and counts["model"][0] >= 1


def test_the_command_wraps_a_built_in_model_as_the_window_does_and_any_other_as_a_capable_one() -> None:
    """The bench's step is the window's: the built-in model is a small one (the screen's
    evidence acts alone where it is sure, the model picks from a short list); a model
    behind Ollama or another server decides every step itself."""
    from rich.console import Console

    from agent.knowledge.guided import GuidedPlanner
    from app.cli.bench_grounding import _model_chooser

    def planner_for(model: str) -> GuidedPlanner:
        chooser, server = _model_chooser(Console(quiet=True), model, "", "http://127.0.0.1:9/v1", "openai",
                                         "zeroshot-", True, True, 5.0, pending=1)
        assert server is None  # a named model is never started by the bench
        planner = chooser.replayer.bundle.planner
        assert isinstance(planner, GuidedPlanner)
        return planner

    assert planner_for("qwen2.5-coder-0.5b").small_model
    assert not planner_for("llama3.1:8b").small_model
