"""Specification of the noise knobs: each one has its effect, all are off by default,
and a seed fixes the whole run."""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET

import pytest

from agent.device import Key
from phone.virtual.noise import NoiseConfig
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import Step
from vision.geometry import Rect


def tap(phone: VirtualPhone, **target) -> None:
    Step("tap", target=target).execute(phone)


def nodes(xml: str) -> list[ET.Element]:
    return list(ET.fromstring(xml).iter("node"))


def test_noise_is_off_by_default_and_validated():
    assert not NoiseConfig().any
    with pytest.raises(ValueError, match="drop_taps"):
        NoiseConfig(drop_taps=1.5)
    with pytest.raises(ValueError, match="update_delay"):
        NoiseConfig(update_delay=-1)


def test_missing_desc_strips_content_desc_from_icon_buttons_but_not_ground_truth():
    clean = VirtualPhone()
    noisy = VirtualPhone(noise=NoiseConfig(missing_desc=1.0))
    for p in (clean, noisy):
        p.open_app("Clock")
    assert 'content-desc="Add alarm"' in clean.dump_hierarchy()
    assert 'content-desc="Add alarm"' not in noisy.dump_hierarchy()
    assert noisy.ground_truth().find(label="Add alarm")


def test_invisible_nodes_add_nodes_that_are_not_on_screen():
    clean = VirtualPhone()
    noisy = VirtualPhone(noise=NoiseConfig(invisible_nodes=4))
    for p in (clean, noisy):
        p.open_app("Settings")
    extra = len(nodes(noisy.dump_hierarchy())) - len(nodes(clean.dump_hierarchy()))
    assert extra == 4
    gt_texts = set(noisy.ground_truth().texts())
    decoys = ET.fromstring(noisy.dump_hierarchy()).findall("node")[1:]
    assert len(decoys) == 4
    assert any(Rect.from_bounds_string(n.get("bounds")).is_empty() for n in decoys)
    assert not {n.get("text") for n in decoys} & gt_texts


def test_stale_nodes_leave_the_previous_screen_in_the_first_dump_after_a_change():
    phone = VirtualPhone(noise=NoiseConfig(stale_nodes=1.0))
    phone.open_app("Settings")
    phone.dump_hierarchy()
    tap(phone, text="Network & internet")
    first = phone.dump_hierarchy()
    second = phone.dump_hierarchy()
    assert "Connected devices" in first and "Airplane mode" in first
    assert "Connected devices" not in second


def test_opaque_package_dumps_one_childless_view():
    phone = VirtualPhone(noise=NoiseConfig(opaque_packages=("com.tapwise.shop",)))
    phone.open_app("Shop")
    xml = phone.dump_hierarchy()
    assert "Wireless Earbuds Pro" not in xml
    assert any(n.get("class") == "android.view.View" and len(n) == 0 for n in nodes(xml))
    assert phone.ground_truth().find(text="Wireless Earbuds Pro")
    phone.open_app("Settings")
    assert "Network &amp; internet" in phone.dump_hierarchy()


def test_dropped_taps_do_nothing():
    phone = VirtualPhone(noise=NoiseConfig(drop_taps=1.0))
    tap(phone, text="Settings")
    assert phone.foreground()[0].endswith("nexuslauncher")


def test_tap_offsets_make_small_targets_miss_sometimes():
    def hits(noise: NoiseConfig) -> int:
        n = 0
        for seed in range(12):
            phone = VirtualPhone(noise=noise, seed=seed)
            phone.open_app("Clock")
            tap(phone, desc="Add alarm")
            n += phone.state["ui"]["dialog"] == "Select time"
        return n

    assert hits(NoiseConfig()) == 12
    assert hits(NoiseConfig(tap_offset_px=250)) < 12


def test_update_delay_shows_the_old_frame_for_a_few_screenshots():
    phone = VirtualPhone(noise=NoiseConfig(update_delay=2))
    home = phone.screenshot().image.copy()
    phone.open_app("Settings")
    assert (phone.screenshot().image == home).all()
    assert (phone.screenshot().image == home).all()
    assert not (phone.screenshot().image == home).all()


def test_ads_pop_up_over_apps_and_close_with_their_icon_button():
    phone = VirtualPhone(noise=NoiseConfig(ads=1.0))
    phone.open_app("Clock")
    assert 'content-desc="Close ad"' in phone.dump_hierarchy()
    assert phone.state["ui"]["dialog"] == ""
    tap(phone, desc="Close ad")
    # the next input may bring another ad at probability 1, but the first one is gone
    phone2 = VirtualPhone(noise=NoiseConfig(ads=1.0))
    phone2.open_app("Clock")
    phone2.key(Key.BACK)
    assert phone2.foreground()[0] == "com.google.android.deskclock"


def test_dynamic_content_changes_frames_without_input():
    still = VirtualPhone()
    moving = VirtualPhone(noise=NoiseConfig(dynamic_content=True))
    a = [still.screenshot().image.tobytes() for _ in range(4)]
    b = [moving.screenshot().image.tobytes() for _ in range(4)]
    assert len(set(a)) == 1
    assert len(set(b)) > 1


ALL_NOISE = NoiseConfig(missing_desc=0.5, invisible_nodes=2, stale_nodes=0.5, tap_offset_px=20, drop_taps=0.2,
                        update_delay=1, ads=0.2, dynamic_content=True)


def _run(seed: int) -> list[str]:
    phone = VirtualPhone(seed=seed, noise=ALL_NOISE)
    trace = []
    phone.open_app("Settings")
    for y in (700, 900, 1100, 1300):
        phone.tap(540, y)
        trace.append(hashlib.sha1(phone.screenshot().image.tobytes()).hexdigest())
        trace.append(hashlib.sha1(phone.dump_hierarchy().encode()).hexdigest())
        phone.key(Key.BACK)
    phone.swipe(540, 1800, 540, 600)
    trace.append(hashlib.sha1(phone.dump_hierarchy().encode()).hexdigest())
    return trace


def test_same_seed_gives_the_same_run_and_another_seed_differs():
    assert _run(7) == _run(7)
    assert _run(7) != _run(8)
