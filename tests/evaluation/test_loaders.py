"""Reading gold and predicted trajectories: AITZ-style records, the nested export form,
and the project's own episodes and macros."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent import codec
from agent.macros.types import Macro, MacroStep
from agent.types import (
    Action,
    Decision,
    DecisionKind,
    Episode,
    ImageRef,
    Proposal,
    Step,
    StepOutcome,
)
from evaluation.aitw import Category, score
from evaluation.loaders import (
    LoadError,
    dump_trajectories,
    load_trajectories,
    parse_boxes,
    trajectory_from_episode,
)
from vision.geometry import Rect, Size
from vision.types import Element, ElementKind, ScreenParse

AITZ_STEPS = [
    {
        "episode_id": "123",
        "step_id": 1,
        "instruction": "turn on wifi",
        "result_action_type": 4,
        "result_touch_yx": "[0.8, 0.5]",
        "result_lift_yx": "[0.2, 0.5]",
        "result_action_text": "",
        "ui_positions": "[]",
    },
    {
        "episode_id": "123",
        "step_id": 0,
        "instruction": "turn on wifi",
        "result_action_type": 4,
        "result_touch_yx": "[0.42, 0.15]",
        "result_lift_yx": "[0.42, 0.15]",
        "result_action_text": "",
        "ui_positions": "[[0.40, 0.10, 0.05, 0.80]]",
    },
    {
        "episode_id": "123",
        "step_id": 2,
        "instruction": "turn on wifi",
        "result_action_type": 10,
        "result_touch_yx": "[-1.0, -1.0]",
        "result_lift_yx": "[-1.0, -1.0]",
        "result_action_text": "",
        "ui_positions": "[]",
    },
]


def test_aitz_records_are_grouped_by_episode_and_ordered_by_step_id(tmp_path: Path) -> None:
    f = tmp_path / "gold.json"
    f.write_text(json.dumps(AITZ_STEPS))
    [t] = load_trajectories(f)
    assert t.episode_id == "123" and t.goal == "turn on wifi"
    assert [s.action.category for s in t.steps] == [Category.CLICK, Category.SCROLL, Category.COMPLETE]
    assert t.steps[0].boxes == ((0.40, 0.10, 0.05, 0.80),)


def test_pixel_ui_positions_are_normalised_with_the_image_size() -> None:
    step = {"image_height": 2000, "image_width": 1000}
    assert parse_boxes([[800, 100, 100, 800]], step) == ((0.4, 0.1, 0.05, 0.8),)


def test_pixel_ui_positions_without_an_image_size_are_refused() -> None:
    with pytest.raises(ValueError, match="image_height"):
        parse_boxes([[800, 100, 100, 800]], {})


def test_a_bad_step_is_reported_with_its_file_episode_and_step(tmp_path: Path) -> None:
    bad = [dict(AITZ_STEPS[1], result_touch_yx="[540, 1200]")]
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    with pytest.raises(LoadError, match=r"bad\.json: episode '123' step 0: .*not normalised"):
        load_trajectories(f)


def test_invalid_json_is_reported_with_the_line(tmp_path: Path) -> None:
    f = tmp_path / "broken.json"
    f.write_text('[{"a": 1},\n oops]')
    with pytest.raises(LoadError, match="line 2"):
        load_trajectories(f)


def test_exported_trajectories_read_back_identically(tmp_path: Path) -> None:
    f = tmp_path / "gold.json"
    f.write_text(json.dumps(AITZ_STEPS))
    original = load_trajectories(f)
    out = tmp_path / "export.json"
    out.write_text(dump_trajectories(original))
    again = load_trajectories(out)
    assert [s.action for s in again[0].steps] == [s.action for s in original[0].steps]
    assert again[0].steps[0].boxes == original[0].steps[0].boxes
    assert score(original, again).step_accuracy == 1.0


def test_a_folder_of_files_is_read_recursively_and_duplicate_ids_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.json").write_text(json.dumps(AITZ_STEPS))
    other = [dict(s, episode_id="456") for s in AITZ_STEPS]
    (tmp_path / "two.jsonl").write_text("\n".join(json.dumps(s) for s in other))
    assert sorted(t.episode_id for t in load_trajectories(tmp_path)) == ["123", "456"]
    (tmp_path / "three.json").write_text(json.dumps(AITZ_STEPS))
    with pytest.raises(LoadError, match="more than one place"):
        load_trajectories(tmp_path)


SCREEN = Size(1000, 2000)


def _episode() -> Episode:
    parse = ScreenParse(
        screen_size=SCREEN,
        elements=(
            Element("e1", ElementKind.BUTTON, Rect(100, 800, 900, 900), text="Wi-Fi"),
            Element("c", ElementKind.CONTAINER, Rect(0, 0, 1000, 2000)),
        ),
    )
    shot = ImageRef("s.png", "0" * 64, 1000, 2000)
    tap = Action.tap(150, 840)
    steps = (
        Step(0, screenshot=shot, parse=parse, proposal=Proposal(tap), executed=tap),
        Step(
            1,
            screenshot=shot,
            proposal=Proposal(Action.simple("back")),
            decision=Decision(DecisionKind.REJECT, feedback="no"),
            outcome=StepOutcome.REJECTED,
        ),
        Step(2, screenshot=shot, proposal=Proposal(Action.type_text("home")), executed=Action.type_text("home")),
        Step(3, proposal=Proposal(Action.simple("complete")), outcome=StepOutcome.FINISHED),
    )
    return Episode(goal="turn on wifi", id="ep1", steps=steps)


def test_project_episode_keeps_executed_actions_and_the_final_stop() -> None:
    t = trajectory_from_episode(_episode())
    assert [s.action.category for s in t.steps] == [Category.CLICK, Category.TYPE, Category.COMPLETE]
    assert t.steps[0].action.touch_yx == pytest.approx((0.42, 0.15))
    # Boxes from the parse, without the container: y 800/2000, x 100/1000, h 100/2000, w 800/1000.
    assert len(t.steps[0].boxes) == 1
    assert t.steps[0].boxes[0] == pytest.approx((0.4, 0.1, 0.05, 0.8))


def test_a_recorded_episode_file_scores_against_aitz_gold(tmp_path: Path) -> None:
    ep = tmp_path / "ep.json"
    ep.write_text(codec.dumps(_episode()))
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(AITZ_STEPS))
    s = score(load_trajectories(gold), load_trajectories(ep))
    # tap matches (same point); type vs scroll does not; complete matches.
    assert [st.matched for st in s.steps] == [True, False, True]


def test_a_macro_needs_the_screen_size_for_its_gestures(tmp_path: Path) -> None:
    macro = Macro("wifi", steps=(MacroStep(Action.tap(150, 840), "tap Wi-Fi"), MacroStep(Action.simple("back"))))
    f = tmp_path / "macro.json"
    f.write_text(codec.dumps(macro))
    with pytest.raises(LoadError, match="screen size"):
        load_trajectories(f)
    [t] = load_trajectories(f, screen=SCREEN)
    assert t.steps[0].action.touch_yx == pytest.approx((0.42, 0.15))
    assert t.steps[1].action.category is Category.BACK


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="no such file"):
        load_trajectories(tmp_path / "nope.json")
