"""Specification of the virtual phone's device behaviour: the Device protocol, screens
at real resolutions, the accessibility XML, ground truth, navigation and input."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from agent.device import Device, DeviceError, DeviceGone, Key
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import Step
from vision.geometry import Rect
from vision.types import ElementKind


def tap(phone: VirtualPhone, **target) -> None:
    Step("tap", target=target).execute(phone)


def opened_at(app: str, *texts: str) -> VirtualPhone:
    """A fresh phone with ``app`` open and the elements reading each of ``texts`` tapped in turn."""
    phone = VirtualPhone()
    phone.open_app(app)
    for text in texts:
        tap(phone, text=text)
    return phone


def test_virtual_phone_implements_the_device_protocol():
    phone = VirtualPhone()
    assert isinstance(phone, Device)
    assert phone.info.is_virtual and phone.info.density_dpi == 420


@pytest.mark.parametrize(("profile", "size"), [("phone", (1080, 2400)), ("small", (720, 1600)),
                                               ("tablet", (1600, 2560))])
def test_screenshot_has_the_profile_resolution(profile: str, size: tuple[int, int]):
    phone = VirtualPhone(profile=profile)
    shot = phone.screenshot()
    assert (shot.size.width, shot.size.height) == size
    assert shot.image.dtype == np.uint8 and shot.image.shape == (size[1], size[0], 3)
    assert phone.screenshot_png().startswith(b"\x89PNG")


def test_unknown_profile_theme_or_language_is_a_clear_error():
    with pytest.raises(ValueError, match="profile"):
        VirtualPhone(profile="watch")
    with pytest.raises(ValueError, match="theme"):
        VirtualPhone(theme="blue")
    with pytest.raises(ValueError, match="language"):
        VirtualPhone(lang="xx")


def test_dark_theme_renders_a_dark_screen():
    light = VirtualPhone(theme="light")
    dark = VirtualPhone(theme="dark")
    light.open_app("Settings")
    dark.open_app("Settings")
    assert light.screenshot().image.mean() > 180
    assert dark.screenshot().image.mean() < 80


def test_german_phone_shows_german_labels_and_keeps_resource_ids():
    phone = VirtualPhone(lang="de")
    phone.open_app("Einstellungen")
    truth = phone.ground_truth()
    assert "Netzwerk & Internet" in truth.texts()
    assert phone.foreground()[0] == "com.android.settings"


def test_hierarchy_is_uiautomator_xml_with_bounds_and_classes():
    phone = VirtualPhone()
    phone.open_app("com.android.settings")
    root = ET.fromstring(phone.dump_hierarchy())
    assert root.tag == "hierarchy" and root.get("rotation") == "0"
    nodes = list(root.iter("node"))
    assert nodes
    attrs = {"index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked", "clickable",
             "enabled", "focusable", "focused", "scrollable", "long-clickable", "password", "selected", "bounds"}
    assert all(attrs <= set(n.attrib) for n in nodes)
    for n in nodes:
        r = Rect.from_bounds_string(n.get("bounds"))
        assert 0 <= r.left <= r.right <= 1080 and 0 <= r.top <= r.bottom <= 2400
    assert any(n.get("class") == "androidx.recyclerview.widget.RecyclerView" and n.get("scrollable") == "true"
               for n in nodes)
    assert any(n.get("text") == "Network & internet" for n in nodes)


def test_screenshot_with_hierarchy_carries_the_xml_and_foreground():
    phone = VirtualPhone()
    phone.open_app("Clock")
    shot = phone.screenshot(with_hierarchy=True)
    assert shot.hierarchy_xml and "com.google.android.deskclock" in shot.hierarchy_xml
    assert shot.foreground_package == "com.google.android.deskclock"


def test_ground_truth_has_system_bars_classes_icons_blocks_and_active_tab():
    phone = VirtualPhone()
    phone.open_app("Clock")
    truth = phone.ground_truth()
    kinds = {e.kind for e in truth.elements}
    assert {ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR, ElementKind.SWITCH, ElementKind.BUTTON,
            ElementKind.TEXT} <= kinds
    assert truth.active_tab == "Alarm"
    fab = truth.find(label="Add alarm")[0]
    assert fab.icon == "plus" and fab.text == ""
    roles = {b.role for b in truth.blocks}
    assert {"bottom_navigation", "list", "app_bar", "status_bar"} <= roles
    nav = next(b for b in truth.blocks if b.role == "bottom_navigation")
    assert nav.active_child is not None
    assert truth.frame_id == phone.frame_id


def test_tab_tap_moves_the_highlighted_active_tab():
    phone = opened_at("Clock", "Timer")
    assert phone.ground_truth().active_tab == "Timer"
    assert phone.state["clock"]["tab"] == "timer"


def test_tap_on_wifi_switch_turns_wifi_off_and_status_bar_icon_goes():
    phone = opened_at("Settings", "Network & internet", "Internet")
    before = phone.screen_hash()
    tap(phone, id="switch_widget", near="Wi-Fi")
    assert phone.state["settings"]["wifi"] is False
    assert phone.screen_hash() != before


def test_frame_id_moves_only_when_the_screen_changes():
    phone = VirtualPhone()
    f0 = phone.frame_id
    phone.screenshot()
    phone.tap(5, 1200)  # empty wallpaper
    assert phone.frame_id == f0
    phone.open_app("Settings")
    assert phone.frame_id == f0 + 1


def test_back_walks_the_back_stack_then_goes_home():
    phone = opened_at("Settings", "Network & internet")
    assert phone.state["ui"]["page"] == "network"
    phone.key(Key.BACK)
    assert phone.state["ui"]["page"] == "main"
    phone.key(Key.BACK)
    assert phone.foreground()[0] == "com.google.android.apps.nexuslauncher"


def test_home_and_app_switch_show_launcher_and_recents():
    phone = VirtualPhone()
    phone.open_app("Notes")
    phone.key(Key.HOME)
    assert phone.foreground()[0].endswith("nexuslauncher")
    phone.key(Key.APP_SWITCH)
    assert phone.foreground()[1] == "com.android.quickstep.RecentsActivity"
    tap(phone, desc="Notes")
    assert phone.foreground()[0] == "com.google.android.keep"


def test_apps_keep_their_place_when_switching():
    phone = opened_at("Settings", "Display")
    phone.open_app("Clock")
    phone.open_app("Settings")
    assert phone.state["ui"]["page"] == "display"


def test_swipe_up_on_home_opens_the_drawer_and_its_search_filters_apps():
    phone = VirtualPhone()
    phone.swipe(540, 1800, 540, 600)
    assert phone.state["ui"]["page"] == "drawer"
    assert len(phone.ground_truth().find(kind=ElementKind.BUTTON)) >= 8
    tap(phone, text="Search apps")
    phone.input_text("mes")
    labels = [e.text for e in phone.ground_truth().elements if e.resource_id.endswith("/icon")]
    assert labels == ["Messages"]


def test_scrolling_reveals_items_below_the_fold():
    phone = VirtualPhone()
    phone.open_app("Settings")
    assert not phone.ground_truth().find(text="About phone")
    phone.swipe(540, 1900, 540, 500)
    assert phone.ground_truth().find(text="About phone")


def test_typing_goes_into_the_focused_field_and_the_keyboard_types_too():
    phone = opened_at("Messages", "Ben Carter")
    phone.input_text("dropped")  # nothing focused yet
    tap(phone, text="Text message")
    assert phone.ground_truth().keyboard
    phone.input_text("Hi")
    tap(phone, text="b")  # a key on the on-screen keyboard
    assert phone.state["ui"]["text"] == "Hib"
    phone.key(Key.DEL)
    tap(phone, desc="Send SMS")
    assert phone.state["messages"]["sent"] == [{"to": "Ben Carter", "text": "Hi"}]


def test_back_first_hides_the_keyboard():
    phone = VirtualPhone()
    phone.open_app("Notes")
    tap(phone, desc="New text note")
    assert phone.state["ui"]["keyboard"]
    phone.key(Key.BACK)
    assert not phone.state["ui"]["keyboard"] and phone.state["ui"]["page"] == "edit"


def test_dialog_is_modal_and_the_xml_shows_only_the_dialog():
    phone = opened_at("Settings", "Display", "Screen timeout")
    xml = phone.dump_hierarchy()
    assert "5 minutes" in xml and "Dark theme" not in xml
    assert phone.ground_truth().dialog == "Screen timeout"
    phone.tap(540, 150)  # outside the dialog: cancels it
    assert phone.state["ui"]["dialog"] is None


def test_toast_shows_then_disappears():
    phone = opened_at("Shop", "Wireless Earbuds Pro", "Add to cart")
    assert "Added to cart" in phone.ground_truth().texts()
    phone.tap(5, 1200)
    phone.tap(5, 1200)
    assert "Added to cart" not in phone.ground_truth().texts()


def test_open_app_by_unknown_name_raises_device_error_with_hint():
    phone = VirtualPhone()
    with pytest.raises(DeviceError) as err:
        phone.open_app("Camera")
    assert "Settings" in err.value.hint


def test_closed_phone_raises_device_gone():
    phone = VirtualPhone()
    phone.close()
    with pytest.raises(DeviceGone):
        phone.screenshot()


def test_installed_apps_lists_eight_apps_with_packages():
    apps = dict(VirtualPhone().installed_apps())
    assert len(apps) >= 8
    assert apps["Settings"] == "com.android.settings"


def test_settings_dark_theme_switch_changes_the_phone_theme():
    phone = opened_at("Settings", "Display", "Dark theme")
    assert phone.screenshot().image.mean() < 90


def test_gallery_writes_pngs(tmp_path):
    from phone.virtual.gallery import write_gallery

    paths = write_gallery(tmp_path, profiles=["small"], themes=["dark"], langs=["de"], only="clock")
    assert len(paths) >= 3 and all(p.stat().st_size > 10_000 for p in paths)
