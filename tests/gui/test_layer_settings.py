"""The overlay layers the user turns off stay off after a restart (issue 26, item 5): the
Layers tab's check boxes are settings, saved in the user's settings file like the chosen
model, and a reopened window neither ticks nor draws a layer that was turned off."""

from __future__ import annotations

from app.gui.window import MainWindow
from app.settings import OverlaySettings, load_settings, settings_path
from widgets.overlays import DEFAULT_STYLES, Layer

from .fakes import FixedParser
from .samples import sample_parse, sample_screen


def _open(qtbot) -> MainWindow:
    settings, problem = load_settings()
    assert problem is None
    win = MainWindow(settings, discover=False, parser_factory=FixedParser, live_parse=False)
    qtbot.addWidget(win)
    win.show()
    return win


def _show_a_parsed_screen(win: MainWindow) -> None:
    win.view.set_frame(sample_screen().image)
    win.show_parse(sample_parse())


def test_every_layer_is_a_setting_whose_default_is_the_layer_panels():
    fields = OverlaySettings.model_fields
    assert set(fields) == {layer.value for layer in Layer} | {"kind_tags"}
    defaults = OverlaySettings()
    assert {layer: getattr(defaults, layer.value) for layer in Layer} == \
        {layer: style.visible for layer, style in DEFAULT_STYLES.items()}
    assert defaults.kind_tags is False is DEFAULT_STYLES[Layer.WIDGETS].tags  # kind words off by default


def test_kind_words_turned_on_stay_on_after_a_restart(qtbot):
    win = _open(qtbot)
    try:
        assert not win.layer_panel.kind_tags.isChecked()
        win.layer_panel.kind_tags.setChecked(True)
        assert win.view.layer_style(Layer.WIDGETS).tags and win.view.layer_style(Layer.BLOCKS).tags
    finally:
        win.close()
    win = _open(qtbot)
    try:
        assert win.layer_panel.kind_tags.isChecked() and win.view.layer_style(Layer.WIDGETS).tags
        _show_a_parsed_screen(win)
        assert win.view.layer_item(Layer.WIDGETS).placed, "the widgets carry their kind's word"
    finally:
        win.close()


def test_a_layer_turned_off_is_still_off_and_not_drawn_after_a_restart(qtbot):
    win = _open(qtbot)
    try:
        _show_a_parsed_screen(win)
        assert win.layer_panel.checks[Layer.BLOCKS].isChecked()
        assert win.view.layer_item(Layer.BLOCKS).isVisible()
        win.layer_panel.checks[Layer.BLOCKS].setChecked(False)  # the user unticks "Semantic blocks"
        win.layer_panel.checks[Layer.OCR_TEXT].setChecked(True)  # and ticks "OCR text"
        assert not win.view.layer_item(Layer.BLOCKS).isVisible()
    finally:
        win.close()
    assert settings_path().is_file()

    win = _open(qtbot)  # the restart, from the same config folder
    try:
        assert not win.layer_panel.checks[Layer.BLOCKS].isChecked()
        assert win.layer_panel.checks[Layer.OCR_TEXT].isChecked()
        _show_a_parsed_screen(win)
        assert not win.view.layer_style(Layer.BLOCKS).visible
        assert not win.view.layer_item(Layer.BLOCKS).isVisible()  # the overlay does not draw it
        assert win.view.layer_item(Layer.OCR_TEXT).isVisible()
        assert win.view.layer_item(Layer.WIDGETS).isVisible()  # untouched layers keep their default
    finally:
        win.close()


def test_a_colour_change_alone_writes_no_settings(qtbot):
    win = _open(qtbot)
    try:
        win.layer_panel.set_color(Layer.WIDGETS, "#00ff00")
        assert win.view.layer_style(Layer.WIDGETS).color == "#00ff00"
        assert not settings_path().exists()
    finally:
        win.close()


def test_the_settings_dialogs_overlay_boxes_drive_the_layers_tab(qtbot):
    win = _open(qtbot)
    try:
        changed = win.session.settings.model_copy(update={"overlay": OverlaySettings(widgets=False)})
        win._settings_accepted(changed)  # what OK in File > Settings does
        qtbot.waitUntil(lambda: settings_path().is_file(), timeout=5000)
        assert not win.layer_panel.checks[Layer.WIDGETS].isChecked()
        assert not win.view.layer_style(Layer.WIDGETS).visible
    finally:
        win.close()
