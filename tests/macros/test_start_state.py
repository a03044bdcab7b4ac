"""A recording that depends on where an app was left is recognised, and a macro that
begins with a known start (the app opened fresh, or Home) reaches it on any phone."""

from __future__ import annotations

import pytest

from agent.macros.recorder import Recorder
from agent.macros.replay import Replayer, run_unattended
from agent.macros.start import (
    fresh_launch_step,
    home_step,
    inner_screen,
    is_fresh_launch,
    start_problem,
    unwind_to_first_screen,
)
from agent.types import Action
from tests.macros.sim_support import TreeParser, observe

sim = pytest.importorskip("phone.virtual.phone")
SETTINGS = "com.android.settings"


def _tap(phone, rec, words):
    before = observe(phone)
    el = next(e for e in before.parse.elements if e.text == words or e.label == words)
    c = el.rect.center
    rec.record(Action.tap(c.x, c.y), before)
    phone.tap(c.x, c.y)
    after = observe(phone)
    rec.observe_after(after)
    return before, after


def _left_inside_settings(phone, row="Network & internet"):
    """Settings left on one of its inner screens, the home screen in front."""
    from agent.device import Key

    phone.open_app("Settings")
    obs = observe(phone)
    c = next(e for e in obs.parse.elements if e.text == row).rect.center
    phone.tap(c.x, c.y)
    phone.key(Key.HOME)


def test_an_app_that_comes_back_on_an_inner_screen_is_named_when_saving():
    phone = sim.VirtualPhone()
    _left_inside_settings(phone)
    rec = Recorder()
    first, after1 = _tap(phone, rec, "Settings")  # Settings comes back on Network & internet
    _, after2 = _tap(phone, rec, "Internet")
    assert inner_screen(after1.parse) and rec.steps[0].action.type.value == "open_app"
    problem = start_problem(first, rec.steps, [after1, after2])
    assert problem is not None and problem.app == SETTINGS and "inner screens" in problem.message
    # a recording that starts inside an app is named too
    inside = start_problem(after1, rec.steps[1:], [after2])
    assert inside is not None and "starts inside" in inside.message
    # one that begins from a known start is not
    assert start_problem(first, (fresh_launch_step(SETTINGS, "Settings"), *rec.steps), [None, after1]) is None
    assert start_problem(first, (home_step(), *rec.steps), [None, after1]) is None


def test_a_recording_from_the_home_screen_into_a_fresh_app_is_fine():
    phone = sim.VirtualPhone()
    rec = Recorder()
    first, after1 = _tap(phone, rec, "Settings")
    assert not inner_screen(after1.parse)
    assert start_problem(first, rec.steps, [after1]) is None


def test_unwinding_opens_the_app_on_its_first_screen():
    phone = sim.VirtualPhone()
    _left_inside_settings(phone)
    assert unwind_to_first_screen(phone, SETTINGS, lambda: phone.foreground()[0])
    obs = observe(phone)
    assert obs.package == SETTINGS and not inner_screen(obs.parse)


def test_a_macro_that_begins_with_a_fresh_launch_reaches_its_start_wherever_the_app_was_left():
    recording_phone = sim.VirtualPhone()
    assert unwind_to_first_screen(recording_phone, SETTINGS, lambda: recording_phone.foreground()[0])
    rec = Recorder()
    rec.begin_with(fresh_launch_step(SETTINGS, "Settings"), SETTINGS)
    _tap(recording_phone, rec, "Network & internet")
    _tap(recording_phone, rec, "Airplane mode")
    macro = rec.build("airplane on")
    assert is_fresh_launch(macro.steps[0]) and macro.steps[0].description == "open Settings from its first screen"
    assert recording_phone.state["settings"]["airplane_mode"] is True

    phone = sim.VirtualPhone(profile="tablet", lang="de")
    _left_inside_settings(phone, "Verbundene Geräte")  # left elsewhere on this phone
    result = run_unattended(Replayer(phone, TreeParser()), macro)
    assert result.succeeded, result
    assert phone.state["settings"]["airplane_mode"] is True
    assert result.steps[0].words.startswith("no element needed")

    # the same steps without the known start fail there: Settings opens on the wrong screen
    plain = rec.build("airplane on, as left")
    from dataclasses import replace

    plain = replace(plain, steps=(replace(plain.steps[0], description="open Settings"), *plain.steps[1:]))
    phone2 = sim.VirtualPhone(profile="tablet", lang="de")
    _left_inside_settings(phone2, "Verbundene Geräte")
    asked = []
    failed = run_unattended(Replayer(phone2, TreeParser()), plain, demonstrate=lambda q: asked.append(q))
    assert failed.status == "failed" and asked and asked[0].index == 1


def test_a_macro_that_begins_at_home_replays_from_wherever_the_phone_is():
    recording_phone = sim.VirtualPhone()
    rec = Recorder()
    rec.begin_with(home_step())
    _tap(recording_phone, rec, "Clock")
    macro = rec.build("open the clock", app="com.google.android.deskclock")
    phone = sim.VirtualPhone()
    phone.open_app("Settings")  # not at home
    result = run_unattended(Replayer(phone, TreeParser(), start_in_app=False), macro)
    assert result.succeeded, result
    assert "clock" in phone.foreground()[0]


def test_the_start_warning_names_the_app_as_the_phone_does():
    from agent.device import app_label

    phone = sim.VirtualPhone()
    _left_inside_settings(phone)
    rec = Recorder()
    first, after1 = _tap(phone, rec, "Settings")
    inside = start_problem(after1, rec.steps[1:] or rec.steps, [None], label_of=lambda p: app_label(phone, p))
    assert inside is not None and "starts inside Settings" in inside.message
    assert SETTINGS not in inside.message


def test_a_phone_that_names_only_some_apps_names_those_and_leaves_the_rest_as_packages():
    from agent.device import app_label

    class Named:
        def label_of(self, package: str) -> str | None:
            return {"com.android.settings": "Settings"}.get(package)

    assert app_label(Named(), "com.android.settings") == "Settings"
    assert app_label(Named(), "org.example.notes") == "org.example.notes"
    assert app_label(object(), "com.android.settings") == "com.android.settings"
