"""Hand-derived cases for the Android-in-the-Wild action-matching rule (Auto-UI §4.3).

Every expected value below was worked out by hand from the rule, not by running the code.
"""

from __future__ import annotations

import pytest

from agent.types import Action, Direction
from evaluation.aitw import (
    AitwAction,
    AitwStep,
    Category,
    Trajectory,
    enlarge_box,
    match,
    score,
    text_matches,
)
from vision.geometry import Size


def tap(y: float, x: float) -> AitwAction:
    return AitwAction(4, (y, x), (y, x))


def swipe(y1: float, x1: float, y2: float, x2: float) -> AitwAction:
    return AitwAction(4, (y1, x1), (y2, x2))


BACK, HOME, ENTER = AitwAction(5), AitwAction(6), AitwAction(7)
COMPLETE, IMPOSSIBLE = AitwAction(10), AitwAction(11)


# ---- non-gesture actions ---------------------------------------------------------------


@pytest.mark.parametrize("a", [BACK, HOME, ENTER, COMPLETE, IMPOSSIBLE])
def test_non_gesture_actions_match_their_own_type(a: AitwAction) -> None:
    assert match(a, a).matched


@pytest.mark.parametrize(("gold", "pred"), [(BACK, HOME), (HOME, ENTER), (COMPLETE, IMPOSSIBLE), (ENTER, COMPLETE)])
def test_non_gesture_actions_of_different_types_do_not_match(gold: AitwAction, pred: AitwAction) -> None:
    assert not match(gold, pred).matched


def test_type_actions_match_on_type_even_when_the_text_differs() -> None:
    assert match(AitwAction(3, typed_text="hello"), AitwAction(3, typed_text="goodbye")).matched


def test_type_actions_need_the_same_text_when_text_is_required() -> None:
    gold, pred = AitwAction(3, typed_text="hello"), AitwAction(3, typed_text="goodbye")
    assert not match(gold, pred, require_text=True).matched
    assert match(gold, AitwAction(3, typed_text="Hello"), require_text=True).matched


def test_a_gesture_never_matches_a_non_gesture() -> None:
    assert not match(tap(0.5, 0.5), BACK).matched
    assert not match(AitwAction(3, typed_text="x"), tap(0.5, 0.5)).matched


# ---- taps and swipes never match -------------------------------------------------------


def test_a_tap_never_matches_a_swipe_that_starts_on_the_same_point() -> None:
    result = match(tap(0.5, 0.5), swipe(0.5, 0.5, 0.2, 0.5))
    assert not result.matched
    assert "never" in result.rule
    assert not match(swipe(0.5, 0.5, 0.2, 0.5), tap(0.5, 0.5)).matched


def test_a_tap_never_matches_a_swipe_even_inside_a_shared_box() -> None:
    box = (0.0, 0.0, 1.0, 1.0)  # the whole screen
    assert not match(tap(0.5, 0.5), swipe(0.5, 0.5, 0.8, 0.5), [box]).matched


def test_points_at_most_0_04_apart_are_a_tap_and_further_apart_a_swipe() -> None:
    assert AitwAction(4, (0.5, 0.5), (0.5, 0.54)).is_tap  # 0.04 apart
    assert AitwAction(4, (0.5, 0.5), (0.5, 0.55)).is_swipe  # 0.05 apart
    assert AitwAction(4, (0.5, 0.5), (0.5, 0.55)).category is Category.SCROLL


# ---- tap distance ----------------------------------------------------------------------


def test_taps_0_13_apart_match_without_any_annotation() -> None:
    assert match(tap(0.5, 0.5), tap(0.5, 0.63)).matched


def test_taps_0_15_apart_do_not_match_without_annotation() -> None:
    assert not match(tap(0.5, 0.5), tap(0.5, 0.65)).matched


def test_tap_distance_is_euclidean_in_normalised_yx() -> None:
    # 0.1 down and 0.1 right is sqrt(0.02) = 0.1414 apart: just beyond 0.14.
    assert not match(tap(0.5, 0.5), tap(0.6, 0.6)).matched
    # 0.09 and 0.1 is sqrt(0.0181) = 0.1345 apart: within.
    assert match(tap(0.5, 0.5), tap(0.59, 0.6)).matched


def test_tap_distance_uses_the_touch_point_of_each_tap() -> None:
    gold = AitwAction(4, (0.5, 0.5), (0.5, 0.52))  # a slightly dragged tap
    pred = AitwAction(4, (0.5, 0.63), (0.5, 0.66))
    assert match(gold, pred).matched  # touch points 0.13 apart


# ---- annotation boxes ------------------------------------------------------------------

#: A wide list row: y 0.40..0.45, x 0.10..0.90.
ROW = (0.40, 0.10, 0.05, 0.80)


def test_far_apart_taps_in_the_same_row_box_match() -> None:
    # 0.7 apart, far beyond 0.14, but both inside the row.
    result = match(tap(0.42, 0.15), tap(0.42, 0.85), [ROW])
    assert result.matched
    assert "box 0" in result.rule


def test_same_far_apart_taps_do_not_match_with_an_empty_annotation_list() -> None:
    result = match(tap(0.42, 0.15), tap(0.42, 0.85), [])
    assert not result.matched
    assert "no annotation boxes" in result.rule


def test_taps_in_different_boxes_do_not_match() -> None:
    other = (0.60, 0.10, 0.05, 0.80)
    assert not match(tap(0.42, 0.5), tap(0.62, 0.5), [ROW, other]).matched


def test_box_grows_by_0_7_of_its_size_on_every_side() -> None:
    # y 0.2..0.3, x 0.2..0.3 grows by 0.07 each way: 0.13..0.37.
    top, left, bottom, right = enlarge_box((0.2, 0.2, 0.1, 0.1))
    assert (top, left, bottom, right) == pytest.approx((0.13, 0.13, 0.37, 0.37))


def test_taps_in_the_enlarged_margin_of_a_box_match() -> None:
    box = (0.2, 0.2, 0.1, 0.1)
    # Neither point lies in the original box; both lie in 0.13..0.37; they are 0.311 apart.
    assert match(tap(0.14, 0.14), tap(0.36, 0.36), [box]).matched
    # 0.12 is above the enlarged top edge (0.13).
    assert not match(tap(0.12, 0.14), tap(0.36, 0.36), [box]).matched


def test_enlarged_box_is_clamped_at_the_top_left_screen_edge() -> None:
    # y 0..0.1 would grow to -0.07..0.17; the top edge stops at 0.
    assert enlarge_box((0.0, 0.0, 0.1, 0.1)) == pytest.approx((0.0, 0.0, 0.17, 0.17))


def test_enlarged_box_is_clamped_at_the_bottom_right_screen_edge() -> None:
    # y 0.9..1.0 would grow to 0.83..1.07; the bottom edge stops at 1.
    assert enlarge_box((0.9, 0.9, 0.1, 0.1)) == pytest.approx((0.83, 0.83, 1.0, 1.0))
    corner = (0.9, 0.9, 0.1, 0.1)
    assert match(tap(1.0, 1.0), tap(0.84, 0.84), [corner]).matched  # 0.226 apart
    assert not match(tap(1.0, 1.0), tap(0.82, 0.84), [corner]).matched


def test_reference_clamping_keeps_the_grown_size_at_the_top_edge() -> None:
    # The AITW reference clips the top at 0 but keeps the grown height 0.24, so the
    # box reaches 0.24 instead of 0.17.
    box = (0.0, 0.0, 0.1, 0.1)
    assert enlarge_box(box, clamp="reference") == pytest.approx((0.0, 0.0, 0.24, 0.24))
    gold, pred = tap(0.02, 0.02), tap(0.2, 0.2)  # 0.255 apart
    assert match(gold, pred, [box], clamp="reference").matched
    assert not match(gold, pred, [box], clamp="edges").matched


def test_box_edges_are_inclusive() -> None:
    box = (0.2, 0.2, 0.1, 0.1)  # enlarged: 0.13..0.37
    assert match(tap(0.13, 0.13), tap(0.37, 0.37), [box]).matched


# ---- swipes ----------------------------------------------------------------------------


def test_swipes_along_the_same_axis_match_whatever_their_sense() -> None:
    up, down = swipe(0.8, 0.5, 0.2, 0.5), swipe(0.2, 0.5, 0.8, 0.5)
    left, right = swipe(0.5, 0.8, 0.5, 0.2), swipe(0.5, 0.2, 0.5, 0.8)
    assert match(up, down).matched
    assert match(left, right).matched
    assert match(up, up).matched


def test_swipes_along_different_axes_do_not_match() -> None:
    up, left = swipe(0.8, 0.5, 0.2, 0.5), swipe(0.5, 0.8, 0.5, 0.2)
    assert not match(up, left).matched
    assert not match(left, up).matched


def test_swipe_main_axis_is_the_larger_displacement_and_position_does_not_matter() -> None:
    # Gold: mostly vertical (dy 0.3, dx 0.2) at the top left; prediction vertical at bottom right.
    gold = swipe(0.1, 0.1, 0.4, 0.3)
    pred = swipe(0.9, 0.9, 0.6, 0.85)
    assert gold.main_axis() == "vertical"
    assert match(gold, pred).matched
    # A mostly horizontal diagonal (dy 0.2, dx 0.3) is on the other axis.
    assert not match(gold, swipe(0.1, 0.1, 0.3, 0.4)).matched


# ---- conversion from project actions ----------------------------------------------------

SCREEN = Size(1000, 2000)


def test_project_scroll_actions_convert_to_swipes_with_the_right_axis() -> None:
    down = AitwAction.from_action(Action.scroll("down", SCREEN), SCREEN)
    up_dir_only = AitwAction.from_action(Action.scroll(Direction.UP), SCREEN)
    assert down.is_swipe and down.main_axis() == "vertical"
    assert match(down, up_dir_only).matched  # direction ignored


def test_project_long_press_converts_to_a_tap() -> None:
    lp = AitwAction.from_action(Action.long_press(500, 1000), SCREEN)
    assert lp.is_tap and lp.touch_yx == pytest.approx((0.5, 0.5))
    assert match(lp, AitwAction.from_action(Action.tap(520, 1010), SCREEN)).matched


def test_open_app_matches_only_the_same_app() -> None:
    a = AitwAction.from_action(Action.open_app("Clock"), SCREEN)
    assert match(a, AitwAction.from_action(Action.open_app("clock"), SCREEN)).matched
    assert not match(a, AitwAction.from_action(Action.open_app("Contacts"), SCREEN)).matched


def test_from_dict_reads_aitz_keys_with_string_points() -> None:
    a = AitwAction.from_dict(
        {"result_action_type": 4, "result_touch_yx": "[0.25, 0.5]", "result_lift_yx": "[0.25, 0.5]"}
    )
    assert a.is_tap and a.touch_yx == (0.25, 0.5)


def test_from_dict_rejects_pixel_points_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="not normalised"):
        AitwAction.from_dict({"action_type": 4, "touch_point": [540, 1200], "lift_point": [540, 1200]})


def test_from_dict_rejects_unknown_action_types() -> None:
    with pytest.raises(ValueError, match="unknown AITW action_type"):
        AitwAction.from_dict({"action_type": 42})


# ---- typed text --------------------------------------------------------------------------


def test_typed_text_agreement_ignores_case_and_spacing_and_accepts_containment() -> None:
    assert text_matches("Hello world", "hello  WORLD ")
    assert text_matches("coffee shops near me", "coffee shops")
    assert not text_matches("coffee", "tea")
    assert not text_matches("coffee", "")


# ---- scores over trajectories ------------------------------------------------------------


def traj(eid: str, *actions: AitwAction, boxes: tuple = ()) -> Trajectory:
    return Trajectory(eid, "goal", tuple(AitwStep(a, boxes) for a in actions))


def test_scores_count_each_category_as_auto_ui_reports_them() -> None:
    gold = traj("e1", tap(0.5, 0.5), swipe(0.8, 0.5, 0.2, 0.5), AitwAction(3, typed_text="hello"), BACK, COMPLETE)
    pred = traj("e1", tap(0.55, 0.5), swipe(0.2, 0.5, 0.8, 0.5), AitwAction(3, typed_text="Hello "), HOME, COMPLETE)
    s = score([gold], [pred])
    assert [st.matched for st in s.steps] == [True, True, True, False, True]
    assert s.step_accuracy == pytest.approx(0.8)
    assert s.episode_mean == pytest.approx(0.8)
    assert s.click_accuracy == 1.0
    assert s.scroll_accuracy == 1.0
    assert s.type_accuracy == pytest.approx(0.8)  # back vs home is the only wrong type
    assert s.text_accuracy == 1.0
    assert s.per_category["back"].accuracy == 0.0
    assert s.episodes_all_correct == 0.0


def test_text_accuracy_only_judges_steps_where_both_typed() -> None:
    gold = traj("e", AitwAction(3, typed_text="a"), AitwAction(3, typed_text="b"))
    pred = traj("e", AitwAction(3, typed_text="a"), BACK)
    s = score([gold], [pred])
    assert s.text_accuracy == 1.0  # one judged, correct
    assert s.type_accuracy == 0.5


def test_missing_predicted_steps_count_as_wrong_and_extra_steps_are_reported() -> None:
    gold = traj("e", BACK, HOME, COMPLETE)
    short = traj("e", BACK)
    s = score([gold], [short])
    assert s.step_accuracy == pytest.approx(1 / 3)
    long = traj("e", BACK, HOME, COMPLETE, BACK, BACK)
    assert score([gold], [long]).extra_pred_steps == 2


def test_episode_mean_averages_per_episode_scores_while_step_accuracy_pools_steps() -> None:
    g1, p1 = traj("a", BACK), traj("a", BACK)  # 1/1
    g2, p2 = traj("b", BACK, BACK, BACK), traj("b", HOME, HOME, HOME)  # 0/3
    s = score([g1, g2], [p1, p2])
    assert s.episode_mean == pytest.approx(0.5)
    assert s.step_accuracy == pytest.approx(0.25)


def test_gold_episodes_without_a_prediction_score_zero_and_are_listed() -> None:
    s = score([traj("a", BACK), traj("b", BACK)], [traj("a", BACK)])
    assert s.unmatched_gold == ("b",)
    assert s.episode_scores == {"a": 1.0, "b": 0.0}


def test_gold_boxes_are_used_for_the_predicted_step() -> None:
    gold = traj("e", tap(0.42, 0.15), boxes=(ROW,))
    pred = traj("e", tap(0.42, 0.85))
    assert score([gold], [pred]).step_accuracy == 1.0
