"""`tapwise bench offline`: recorded trajectories replayed to the planners, step by step.

Every recording here is written by the test itself, one per format (DroidTask YAML,
AITZ-style JSON Lines with screenshots, a LlamaTouch trace folder).  The planners talk
over real loopback HTTP to the scripted model server: the gold oracle (the sanity
ceiling) or a scripted model that makes known mistakes, so the scores are checked
against what the model really answered.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image, ImageDraw
from typer.testing import CliRunner

from agent.planners.registry import planner_bundle
from agent.types import Action, ActionType, Target
from app.cli.bench import bench_app
from evaluation.offline import droidtask, llamatouch, summary
from evaluation.offline.bench import Cell, run_offline
from evaluation.offline.datasets import detect, load_dataset
from evaluation.offline.replay import StepReplayer
from evaluation.offline.scoring import (
    EARLY_FINISH,
    MISSED_FINISH,
    OTHER_ACTION,
    RIGHT,
    TAP_NOT_TYPE,
    WRONG_ELEMENT,
    WRONG_TEXT,
    score_element,
)
from evaluation.offline.types import DatasetError, Format, GoldKind
from evaluation.results import ResultsDB
from evaluation.scripted_model import ScriptedLLMServer

runner = CliRunner()

CONTACTS = (
    "<input id=0>Search</input>\n <button id=1 text='Sort by'></button>\n"
    " <button id=2 text='Create new contact'></button>\n <button id=3>Alice</button>\n"
    " <p id=4>Contacts</p>\n <button id=5>go back</button>"
)
EDITOR = (
    "<input id=0>First name</input>\n <input id=1>Surname</input>\n"
    " <checkbox id=2 checked=False>Favourite</checkbox>\n <button id=3 text='Save'></button>\n"
    " <button id=4>notes.txt<br>2 kB</button>\n <button id=5>go back</button>"
)
EDITOR_FILLED = EDITOR.replace("<input id=0>First name</input>", "<input id=0>Ada</input>")


def _record(state: str, choice: int, typed: str = "null") -> dict:
    return {"State": state, "Choice": choice, "Input": typed, "state_str": "a", "new_state_str": "b"}


def write_droidtask(root: Path) -> Path:
    """Two apps, three tasks, in DroidTask's own YAML form."""
    import yaml

    tasks = {
        "contacts/task1.yaml": {"task_name": "add a contact named Ada", "step_num": 4, "records": [
            _record(CONTACTS, 2), _record(EDITOR, 0, "Ada"), _record(EDITOR_FILLED, 3), _record(CONTACTS, -1)]},
        "contacts/task2.yaml": {"task_name": "open Alice", "step_num": 2, "records": [
            _record(CONTACTS, 3), _record(CONTACTS, -1)]},
        "files/task1.yaml": {"task_name": "open notes.txt", "step_num": 2, "records": [
            _record(EDITOR, 4), _record(EDITOR, -1)]},
    }
    for rel, doc in tasks.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(yaml.safe_dump(doc, allow_unicode=True))
    return root


# ---- DroidTask reading -----------------------------------------------------------------


def test_droidtask_state_becomes_a_screen_with_its_ids_kinds_words_and_states() -> None:
    parse = droidtask.screen_from_state(EDITOR)
    kinds = {e.id: e.kind.value for e in parse.elements}
    assert kinds == {"0": "edit_text", "1": "edit_text", "2": "check_box", "3": "button", "4": "button",
                     "5": "button"}
    assert parse.element("0").text == "First name"
    assert parse.element("3").label == "Save" and parse.element("3").clickable
    assert parse.element("2").checkable and parse.element("2").checked is False
    assert parse.element("4").text == "notes.txt, 2 kB"  # the recorder's <br> is a line break, not markup
    text = droidtask.screen_from_state(CONTACTS).element("4")
    assert text.kind.value == "text" and not text.clickable
    tops = [e.rect.top for e in parse.elements]
    assert tops == sorted(tops)  # listed order is kept top to bottom


def test_droidtask_folder_reads_tasks_in_app_and_number_order_with_gold_steps(tmp_path: Path) -> None:
    root = write_droidtask(tmp_path / "dt")
    assert detect(root) is Format.DROIDTASK
    fmt, tasks, problems = load_dataset(root)
    assert (fmt, problems) == (Format.DROIDTASK, [])
    assert [t.task_id for t in tasks] == ["contacts/task1", "contacts/task2", "files/task1"]
    t = tasks[0]
    assert t.goal == "add a contact named Ada" and t.app == "contacts"
    golds = [s.gold for s in t.steps]
    assert [g.kind for g in golds] == [GoldKind.ELEMENT, GoldKind.ELEMENT, GoldKind.ELEMENT, GoldKind.FINISH]
    assert (golds[1].element_id, golds[1].text) == ("0", "Ada") and golds[1].action.type is ActionType.TYPE
    assert golds[0].action.describe() == "tap Create new contact"


def test_a_broken_droidtask_file_is_reported_with_its_name_and_record(tmp_path: Path) -> None:
    root = write_droidtask(tmp_path / "dt")
    bad = root / "files" / "task2.yaml"
    bad.write_text("task_name: x\nrecords:\n- State: '<button id=0>A</button>'\n  Choice: 7\n  Input: 'null'\n")
    _fmt, tasks, problems = load_dataset(root)
    assert len(tasks) == 3
    assert problems and problems[0][0] == str(bad) and "record 0" in problems[0][1] and "Choice 7" in problems[0][1]


def test_an_unknown_folder_gets_an_error_naming_the_formats(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(DatasetError, match="DroidTask.*LlamaTouch.*AITW"):
        detect(tmp_path)


# ---- scoring -----------------------------------------------------------------------------


def test_droidtask_scoring_says_right_and_what_kind_of_wrong() -> None:
    parse = droidtask.screen_from_state(EDITOR)
    tap_save = droidtask.gold_of(3, None, parse)
    type_ada = droidtask.gold_of(0, "Ada", parse)
    finish = droidtask.gold_of(-1, None, parse)
    el = parse.element("3")

    def tap(eid: str) -> Action:
        e = parse.element(eid)
        return Action.tap(e.rect.center.x, e.rect.center.y, Target(element_id=eid))

    assert score_element(tap_save, tap("3"), parse).kind == RIGHT
    assert score_element(tap_save, Action.tap(el.rect.center.x, el.rect.center.y), parse).correct  # by its point
    assert score_element(tap_save, tap("1"), parse).kind == WRONG_ELEMENT
    assert score_element(tap_save, Action.simple(ActionType.COMPLETE), parse).kind == EARLY_FINISH
    assert score_element(tap_save, Action.scroll("down", parse.screen_size), parse).kind == OTHER_ACTION
    assert score_element(type_ada, Action.type_text(" ada ", Target(element_id="0")), parse).correct
    assert score_element(type_ada, Action.type_text("Bob", Target(element_id="0")), parse).kind == WRONG_TEXT
    assert score_element(type_ada, tap("0"), parse).kind == TAP_NOT_TYPE
    assert score_element(finish, Action.simple(ActionType.COMPLETE), parse).correct
    assert score_element(finish, tap("3"), parse).kind == MISSED_FINISH
    go_back = droidtask.gold_of(5, None, parse)
    assert score_element(go_back, Action.simple(ActionType.BACK), parse).correct  # the back key is DroidTask's "go back"


# ---- the bench with the gold oracle and with a scripted model ------------------------------


@pytest.mark.parametrize("replies", ["--constrained", "--free"])
def test_the_gold_oracle_scores_every_droidtask_step_right_and_a_rerun_continues(tmp_path: Path, replies: str) -> None:
    root = write_droidtask(tmp_path / "dt")
    db, out = tmp_path / "r.sqlite", tmp_path / "report"
    args = ["offline", str(root), "--oracle", "--planners", "visiontasker,zeroshot-", replies, "--db", str(db),
            "--run", "o", "--out", str(out)]
    res = runner.invoke(bench_app, args)
    assert res.exit_code == 0, res.output
    with ResultsDB(db) as store:
        results = store.results("o")
    assert len(results) == 6
    figs = summary.by_label(results)
    for f in figs.values():
        assert (f.steps, f.right, f.completed) == (8, 8, 3)
    md = (out / "offline.md").read_text()
    assert "| contacts |" in md and "Paired comparisons" in md
    assert (out / "offline.html").is_file() and "Wrong steps" in md
    again = runner.invoke(bench_app, args)
    assert again.exit_code == 0, again.output
    assert "6 task cells already done" in again.output and "ran 0 task cells" in again.output


def test_a_scripted_model_mistakes_are_counted_by_kind(tmp_path: Path) -> None:
    """A model that always taps [2]: right on the first contacts step only; the finish
    steps are missed; the typing step is a tap on another element."""
    root = write_droidtask(tmp_path / "dt")
    _f, tasks, _p = load_dataset(root)
    with ScriptedLLMServer(default="tap [2]", models=("m",)) as server, ResultsDB(tmp_path / "r.sqlite") as store:
        from agent.llm import make_client

        def replayer_for(cell: Cell, app: str) -> StepReplayer:
            client = make_client("openai", "m", server.url)
            return StepReplayer(planner_bundle(cell.planner, client, llm_grounder=False, constrained=cell.constrained))

        store.open_run("s", {"model": "m"})
        steps: list[dict] = []
        outcome = run_offline(store, "s", tasks, [Cell("visiontasker", False)], replayer_for,
                              on_step=lambda t, i, rec: steps.append(rec))
        results = store.results("s")
    assert (outcome.ran, outcome.errors) == (3, 0)
    assert len(steps) == 8
    f = summary.by_label(results)["visiontasker:free"]
    # right: contacts/task1 step 0 (Create new contact is [2]) and files/task1? no: [2] there is the checkbox
    assert f.right == 1 and f.completed == 0
    assert f.kinds[MISSED_FINISH] == 3
    assert f.kinds[WRONG_ELEMENT] == 4
    assert server.chat_requests >= 8
    first = next(r for r in results if r.task_id == "contacts/task1")
    assert first.step_records[0]["correct"] and first.step_records[0]["pred"] == "tap Create new contact"
    assert first.checkpoints_reached == 1 and first.partial == pytest.approx(0.25)


def test_paired_comparison_pairs_the_same_tasks() -> None:
    from evaluation.metrics import EpisodeResult

    def cell(label: str, task: str, right: int) -> EpisodeResult:
        recs = tuple({"correct": i < right, "gold_kind": "element", "kind": RIGHT if i < right else WRONG_ELEMENT}
                     for i in range(2))
        return EpisodeResult(planner=label, task_id=task, noise="offline", success=right == 2, checkpoints_total=2,
                             checkpoints_reached=right, step_records=recs, note="app")

    results = [cell("a:free", f"t{i}", 2) for i in range(6)] + [cell("b:free", f"t{i}", 0) for i in range(6)]
    c = summary.compare_labels(results, "a:free", "b:free")
    assert c is not None and c.tasks == 6
    assert c.accuracy.mean_diff == pytest.approx(1.0) and c.accuracy.p_value == pytest.approx(2 / 64)
    assert c.completion.mean_diff == pytest.approx(1.0)


# ---- screenshots: AITZ-style JSON Lines and LlamaTouch traces --------------------------------


def _screenshot(path: Path, label: str) -> None:
    img = Image.new("RGB", (540, 960), "white")
    d = ImageDraw.Draw(img)
    d.rectangle([60, 400, 480, 480], fill=(30, 110, 220))
    d.text((80, 430), label, fill="white")
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path)


def test_aitz_json_lines_with_screenshots_are_replayed_and_scored_by_the_aitw_rule(tmp_path: Path) -> None:
    data = tmp_path / "aitz"
    _screenshot(data / "general" / "ep1_0.png", "Settings")
    _screenshot(data / "general" / "ep1_1.png", "Done")
    recs = [
        {"episode_id": "ep1", "step_id": 0, "instruction": "open settings", "image_path": "general/ep1_0.png",
         "result_action_type": 4, "result_touch_yx": "[0.458, 0.5]", "result_lift_yx": "[0.458, 0.5]",
         "result_action_text": "", "ui_positions": "[[0.41, 0.11, 0.09, 0.78]]"},
        {"episode_id": "ep1", "step_id": 1, "instruction": "open settings", "image_path": "general/ep1_1.png",
         "result_action_type": 10, "result_touch_yx": "[-1.0, -1.0]", "result_lift_yx": "[-1.0, -1.0]",
         "result_action_text": ""},
    ]
    f = data / "general" / "episodes.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in recs))
    fmt, tasks, problems = load_dataset(f)
    assert (fmt, problems, len(tasks)) == (Format.AITW, [], 1)
    assert tasks[0].steps[0].screen.image == data / "general" / "ep1_0.png"
    assert tasks[0].steps[0].gold.boxes
    db = tmp_path / "r.sqlite"
    res = runner.invoke(bench_app, ["offline", str(f), "--oracle", "--planners", "visiontasker", "--free",
                                    "--db", str(db), "--run", "a"])
    assert res.exit_code == 0, res.output
    with ResultsDB(db) as store:
        (r,) = store.results("a")
    assert [x["correct"] for x in r.step_records] == [True, True], r.step_records
    assert r.success


def test_a_screenshot_the_json_names_but_that_is_missing_is_reported(tmp_path: Path) -> None:
    f = tmp_path / "e.json"
    f.write_text(json.dumps([{"episode_id": "e", "step_id": 0, "image_path": "nope.png", "result_action_type": 10}]))
    _fmt, tasks, problems = load_dataset(f, "aitw")
    assert tasks == [] and "nope.png" in problems[0][1] and "not found" in problems[0][1]


UI_XML = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" package="com.example"
 clickable="false" enabled="true" bounds="[0,0][540,960]"><node index="0" text="{label}"
 resource-id="com.example:id/go" class="android.widget.Button" package="com.example" clickable="true"
 enabled="true" bounds="[60,400][480,480]" /></node></hierarchy>"""


def write_llamatouch(trace: Path) -> Path:
    trace.mkdir(parents=True)
    for i, label in enumerate(("Settings", "Wi-Fi", "Done")):
        _screenshot(trace / f"{i}.png", label)
        (trace / f"{i}.xml").write_text(UI_XML.replace("{label}", label))
        (trace / f"{i}.activity").write_text("mObscuringWindow=Window{1 u0 com.example/com.example.Main}")
    (trace / "eventStructs.txt").write_text(
        "【点击事件】屏幕大小：（w540，h960），触摸位置：（x270，y440）\n【键盘输入】home wifi\n")
    (trace / "instruction.txt").write_text("ep-42\nturn on wifi\n")
    return trace


def test_llamatouch_event_lines_become_aitw_actions() -> None:
    tap = llamatouch.parse_event("【点击事件】屏幕大小：（w540，h960），触摸位置：（x270，y480）")
    assert tap.is_tap and tap.touch_yx == pytest.approx((0.5, 0.5))
    swipe = llamatouch.parse_event("【滑动事件】屏幕大小：（w500，h1000），起始位置：（x250，y800），结束位置：（x250，y200）")
    assert swipe.is_swipe and swipe.main_axis() == "vertical"
    assert llamatouch.parse_event("【键盘输入】hello world").typed_text == "hello world"
    assert llamatouch.parse_event("【Back键】").action_type == 5
    with pytest.raises(ValueError, match="unknown action kind"):
        llamatouch.parse_event("【摇一摇】")


def test_a_llamatouch_trace_is_replayed_on_its_screenshots_and_trees(tmp_path: Path) -> None:
    root = tmp_path / "lt" / "general"
    write_llamatouch(root / "trace_0")
    fmt, tasks, problems = load_dataset(tmp_path / "lt")
    assert (fmt, problems) == (Format.LLAMATOUCH, [])
    (t,) = tasks
    assert t.goal == "turn on wifi" and len(t.steps) == 3  # two actions, then the implicit "complete"
    assert t.steps[0].screen.tree is not None and t.steps[0].screen.foreground == "com.example"
    assert t.steps[2].gold.aitw is not None and t.steps[2].gold.aitw.action_type == 10
    db = tmp_path / "r.sqlite"
    for replies in ("--free", "--constrained"):
        res = runner.invoke(bench_app, ["offline", str(tmp_path / "lt"), "--oracle", "--planners", "visiontasker",
                                        replies, "--db", str(db), "--run", "l"])
        assert res.exit_code == 0, res.output
    with ResultsDB(db) as store:
        results = store.results("l")
    assert {r.planner for r in results} == {"visiontasker:free", "visiontasker:structured"}
    for r in results:
        assert [x["correct"] for x in r.step_records] == [True, True, True], r.step_records


def test_a_trace_missing_a_screenshot_is_reported_not_crashed(tmp_path: Path) -> None:
    trace = write_llamatouch(tmp_path / "lt" / "t0")
    write_llamatouch(tmp_path / "lt" / "t1")
    (trace / "1.png").unlink()
    _fmt, tasks, problems = load_dataset(tmp_path / "lt")
    assert [t.task_id for t in tasks] == ["t1"]  # the other trace is still read
    assert [src for src, _msg in problems] == [str(trace)] and "1.png is missing" in problems[0][1]


def test_cli_refuses_a_path_that_holds_no_recording(tmp_path: Path) -> None:
    res = runner.invoke(bench_app, ["offline", str(tmp_path), "--oracle", "--db", str(tmp_path / "r.sqlite")])
    assert res.exit_code == 2
    assert "not a recording Tapwise can read" in res.output


def test_vs_run_pairs_two_runs_on_the_same_tasks(tmp_path: Path) -> None:
    """Two models are two runs; ``--vs-run`` puts both in one report with paired tests."""
    root = write_droidtask(tmp_path / "dt")
    db, out = tmp_path / "r.sqlite", tmp_path / "rep"
    base = ["offline", str(root), "--planners", "visiontasker", "--free", "--db", str(db)]
    assert runner.invoke(bench_app, [*base, "--oracle", "--run", "oracle"]).exit_code == 0
    with ScriptedLLMServer(default="tap [2]", models=("always-2",)) as server:
        res = runner.invoke(bench_app, [*base, "--model", "always-2", "--base-url", server.url, "--backend", "openai",
                                        "--no-evidence",  # the model's own answers, nothing decided by the screen
                                        "--run", "m2", "--vs-run", "oracle", "--out", str(out)])
    assert res.exit_code == 0, res.output
    md = (out / "offline.md").read_text()
    # per-task action accuracy: 1/4, 0/2, 0/2 against 1, 1, 1 -> -91.7 points on average
    assert "| m2/visiontasker:free vs oracle/visiontasker:free | 3 | -91.7 |" in md
    assert "| oracle/visiontasker:free | 3 | 8 | 100.0" in md


def test_a_fold_is_fitted_on_every_other_app_even_when_only_some_tasks_are_replayed(tmp_path: Path) -> None:
    """``--folds app --tasks files``: only the files task is replayed, but the evidence it
    is replayed with is fitted on all the other apps' recorded steps (here contacts and
    notes, 8 steps), not on the other replayed tasks (none)."""
    import yaml

    root = write_droidtask(tmp_path / "dt")
    (root / "notes").mkdir()
    (root / "notes/task1.yaml").write_text(yaml.safe_dump({"task_name": "open notes.txt", "step_num": 2, "records": [
        _record(EDITOR, 4), _record(EDITOR, -1)]}))
    db = tmp_path / "r.sqlite"
    with ScriptedLLMServer(default="tap [4]", models=("m",)) as server:
        res = runner.invoke(bench_app, ["offline", str(root), "--planners", "zeroshot-", "--constrained", "--db", str(db),
                                        "--model", "m", "--base-url", server.url, "--backend", "openai",
                                        "--folds", "app", "--tasks", "files", "--run", "f"])
    assert res.exit_code == 0, res.output
    fold = json.loads((tmp_path / "r.folds" / "f" / "files.json").read_text())
    assert fold["meta"]["held_out_app"] == "files" and fold["meta"]["examples"] == 8
    with ResultsDB(db) as store:
        assert {(r.planner, r.task_id) for r in store.results("f")} == {
            ("zeroshot-:structured", "files/task1"), ("zeroshot-:structured@app-folds", "files/task1")}
