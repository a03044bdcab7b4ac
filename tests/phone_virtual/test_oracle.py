"""The virtual phone judges the goals that are its own tasks: the window's run then ends on
the phone's verdict ("done — checked on the phone") instead of asking the user; any other
goal, and any other phone, has no judge (the user is asked)."""

from __future__ import annotations

from agent.types import Action, ActionType
from phone.virtual.oracle import judge_for, task_for_goal
from phone.virtual.phone import VirtualPhone


def test_a_task_goal_is_recognised_whatever_its_case_spacing_or_full_stop():
    assert task_for_goal("Turn off Wi-Fi").id == "settings.wifi_off"
    assert task_for_goal("  turn off   WI-FI. ").id == "settings.wifi_off"
    assert task_for_goal("Turn off Wi-Fi and Bluetooth and then call mum") is None


def test_the_judge_reads_the_phone_state_and_never_changes_it():
    phone = VirtualPhone()
    try:
        task = task_for_goal("Turn off Wi-Fi")
        task.setup(phone)
        judge = judge_for("Turn off Wi-Fi", phone)
        assert judge is not None
        before = repr(phone.state)
        assert judge(None) is False
        assert repr(phone.state) == before
        phone.state["settings"]["wifi"] = False  # as the switch does
        assert judge(None) is True
        assert judge(Action.simple(ActionType.COMPLETE)) is True
        assert judge(Action.simple(ActionType.IMPOSSIBLE)) is False
    finally:
        phone.close()


def test_no_judge_for_other_goals_or_other_phones():
    phone = VirtualPhone()
    try:
        assert judge_for("Order a pizza to the office", phone) is None
        assert judge_for("Turn off Wi-Fi", object()) is None  # a real phone: the user is asked
    finally:
        phone.close()
