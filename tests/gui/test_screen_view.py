"""The screen view shows frames and overlays and turns mouse input into intents."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from agent.types import Action, ActionType
from vision.geometry import Point
from widgets.overlays import Layer, LayerStyle
from widgets.screen_view import ScreenView, ViewMode, gesture_to_action

from .samples import sample_image, sample_parse


@pytest.fixture
def view(qtbot):
    v = ScreenView()
    qtbot.addWidget(v)
    v.resize(450, 1000)
    v.show()
    qtbot.waitExposed(v)
    v.set_frame(sample_image())
    v.flush()
    v.set_parse(sample_parse())
    return v


def _grab_rgb(v: ScreenView) -> np.ndarray:
    img = v.viewport().grab().toImage().convertToFormat(v.viewport().grab().toImage().Format.Format_RGB888)
    ptr = img.constBits()
    arr = np.frombuffer(ptr, np.uint8).reshape(img.height(), img.bytesPerLine())[:, : img.width() * 3]
    return arr.reshape(img.height(), img.width(), 3).copy()


def test_only_the_newest_of_several_quick_frames_is_shown(view, qtbot):
    shown_before = view.frames_shown
    frames = [sample_image(seed=i) for i in range(1, 6)]
    for f in frames:
        view.set_frame(f)
    qtbot.waitUntil(lambda: view.frames_shown == shown_before + 1)
    assert view.frame is frames[-1]
    assert view.frames_dropped >= 4


def test_rejects_a_frame_that_is_not_rgb(view):
    with pytest.raises(ValueError, match="RGB"):
        view.set_frame(np.zeros((10, 10), np.uint8))


def test_frame_pixels_reach_the_viewport(view, qtbot):
    img = np.zeros((2400, 1080, 3), np.uint8)
    img[:, :] = (200, 30, 30)
    view.set_frame(img)
    view.flush()
    for layer in Layer:
        view.set_layer_visible(layer, False)
    view.set_proposal(None)
    rgb = _grab_rgb(view)
    centre = rgb[rgb.shape[0] // 2, rgb.shape[1] // 2]
    assert abs(int(centre[0]) - 200) < 10 and centre[1] < 50


def test_hiding_a_layer_hides_its_item_and_style_sets_colour_and_opacity(view):
    view.set_layer_style(Layer.BLOCKS, LayerStyle(True, "#00ff00", 0.4))
    item = view.layer_item(Layer.BLOCKS)
    assert item.isVisible() and item.opacity() == pytest.approx(0.4)
    view.set_layer_visible(Layer.BLOCKS, False)
    assert not item.isVisible()
    assert view.layer_style(Layer.BLOCKS).color == "#00ff00"


def test_layer_style_rejects_bad_opacity():
    with pytest.raises(ValueError, match="opacity"):
        LayerStyle(True, "#fff", 1.5)


def test_every_layer_can_be_shown_together_without_error(view):
    for layer in Layer:
        view.set_layer_visible(layer, True)
    view.set_proposal(Action.swipe(540, 1800, 540, 600))
    view.viewport().grab()  # paints everything
    assert all(view.layer_item(layer).isVisible() for layer in Layer)


def test_hover_over_the_wifi_switch_shows_its_details(view, qtbot):
    pos = view.view_pos_of(Point(960, 290)).toPoint()
    with qtbot.waitSignal(view.elementHovered) as sig:
        qtbot.mouseMove(view.viewport(), pos)
    assert sig.args == ["e2"]
    assert "Wi-Fi" in view.hover_details and "switch" in view.hover_details
    assert "Network settings" in view.hover_details


def test_click_selects_the_smallest_element_under_the_pointer(view, qtbot):
    pos = view.view_pos_of(Point(960, 290)).toPoint()
    with qtbot.waitSignal(view.elementSelected) as sig:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert sig.args == ["e2"]
    assert view.selected_id == "e2"


def test_select_element_from_outside_does_not_emit(view, qtbot):
    with qtbot.assertNotEmitted(view.elementSelected):
        view.select_element("e3")
    assert view.selected_id == "e3"


def test_pick_mode_reports_the_device_point_and_element(view, qtbot):
    view.set_mode(ViewMode.PICK)
    pos = view.view_pos_of(Point(500, 700)).toPoint()
    with qtbot.waitSignal(view.pointPicked) as sig:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    point, element_id = sig.args
    assert abs(point.x - 500) <= 3 and abs(point.y - 700) <= 3
    assert element_id == "e3"


def test_demonstrate_mode_turns_a_drag_into_a_swipe(view, qtbot):
    view.set_mode(ViewMode.DEMONSTRATE)
    a = view.view_pos_of(Point(540, 1800)).toPoint()
    b = view.view_pos_of(Point(540, 600)).toPoint()
    with qtbot.waitSignal(view.actionDemonstrated) as sig:
        qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=a)
        qtbot.mouseMove(view.viewport(), QPoint((a.x() + b.x()) // 2, (a.y() + b.y()) // 2))
        qtbot.mouseMove(view.viewport(), b)
        qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=b)
    action = sig.args[0]
    assert action.type is ActionType.SWIPE
    assert action.finger_direction().value == "up"


def test_demonstrated_tap_names_the_element_it_hit(view, qtbot):
    view.set_mode(ViewMode.DEMONSTRATE)
    pos = view.view_pos_of(Point(600, 700)).toPoint()
    with qtbot.waitSignal(view.actionDemonstrated) as sig:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    action = sig.args[0]
    assert action.type is ActionType.TAP
    assert action.target.element_id == "e3" and action.target.description == "Bluetooth"


def test_a_long_hold_is_a_long_press():
    a = gesture_to_action(Point(10, 10), Point(11, 10), 900, None, None)
    assert a.type is ActionType.LONG_PRESS and a.duration_ms == 900


def test_proposal_marker_follows_the_proposed_action(view):
    tap = Action.tap(960, 290)
    view.set_proposal(tap)
    assert view.proposal == tap
    view.set_proposal(Action.type_text("hello"))
    assert view.proposal.text == "hello"
    view.set_proposal(None)
    assert view.proposal is None


def test_a_new_parse_without_the_selected_element_clears_the_selection(view):
    view.select_element("e2")
    from vision.types import ScreenParse

    view.set_parse(ScreenParse(screen_size=sample_parse().screen_size))
    assert view.selected_id == ""


def test_typing_on_the_mirror_while_demonstrating_makes_a_type_action(view, qtbot):
    view.set_mode(ViewMode.DEMONSTRATE)
    qtbot.keyClicks(view, "hello")
    assert view.typed_text == "hello" and view.proposal.text == "hello"
    qtbot.keyClick(view, Qt.Key.Key_Backspace)
    with qtbot.waitSignal(view.actionDemonstrated) as sig:
        qtbot.keyClick(view, Qt.Key.Key_Return)
    assert sig.args[0].type is ActionType.TYPE and sig.args[0].text == "hell"
    assert view.typed_text == ""


def test_typing_outside_demonstration_does_nothing(view, qtbot):
    with qtbot.assertNotEmitted(view.actionDemonstrated):
        qtbot.keyClicks(view, "abc")
        qtbot.keyClick(view, Qt.Key.Key_Return)
    assert view.typed_text == ""
