"""On the virtual phone: a tap on the navigation bar's Home or Back button is recorded as
that key (and replays on another screen size), and replay with approval never asks
about a step it is about to skip."""

from __future__ import annotations

import pytest

from agent.events import AwaitingDecision
from agent.macros.recorder import Recorder, nav_key_at
from agent.macros.replay import Replayer, run_unattended
from agent.types import Action, ActionType, Decision, DecisionKind
from tests.macros.sim_support import TreeParser, drive_replay, observer, record_taps

sim = pytest.importorskip("phone.virtual.phone")


def test_home_and_back_on_the_navigation_bar_are_recorded_as_keys():
    phone = sim.VirtualPhone()
    observe = observer(phone)
    phone.open_app("Settings")
    size = phone.screen_size()
    bottom = size.height - 20
    before = observe()
    assert nav_key_at(before.parse, size.width // 6, bottom) is ActionType.BACK
    assert nav_key_at(before.parse, size.width // 2, bottom) is ActionType.HOME
    assert nav_key_at(before.parse, size.width * 5 // 6, bottom) is None  # Recents stays a tap
    assert nav_key_at(before.parse, size.width // 2, size.height // 2) is None  # the app's own rows
    rec = Recorder()
    step = rec.record(Action.tap(size.width // 2, bottom), before)
    assert step.action.type is ActionType.HOME and step.action.touch is None
    assert step.description == "press Home"
    phone.tap(size.width // 2, bottom)
    rec.observe_after(observe())
    assert rec.steps[-1].action.type is ActionType.HOME

    # the recorded key replays on the tablet, whose navigation bar is elsewhere
    macro = rec.build("go home", app="com.android.settings")
    tablet = sim.VirtualPhone(profile="tablet")
    result = run_unattended(Replayer(tablet, TreeParser()), macro)
    assert result.succeeded, result
    assert "launcher" in tablet.screenshot().foreground_package


def test_replay_with_approval_does_not_ask_about_a_step_it_skips():
    phone = sim.VirtualPhone()
    rec = record_taps(phone, ("Settings", "Network & internet", "Airplane mode"))
    macro = rec.build("airplane on", app="com.android.settings")
    assert phone.state["settings"]["airplane_mode"] is True  # already on: the last step must be skipped

    phone.reset({"settings": {"airplane_mode": True}})  # a fresh phone whose airplane mode is on
    asked = []

    def approve(index: int, _event: AwaitingDecision) -> Decision:
        asked.append(index)
        return Decision(DecisionKind.APPROVE)

    result, _ = drive_replay(Replayer(phone, TreeParser(), approve_each=True).start(macro), approve)
    assert result.succeeded
    assert result.steps[-1].effect == "already_set"
    assert result.steps[-1].words == "already on — nothing to do"
    assert len(macro.steps) - 1 not in asked  # never asked about the skipped step
