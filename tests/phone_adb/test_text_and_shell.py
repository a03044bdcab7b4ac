"""Text input quoting and the served phone's shell, without adb: what `input text` commands
we build, and how the phone's sh-like interpreter reads them back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.device import Key
from phone.adb import text_input
from phone.adb.discovery import explain_state, parse_wm_density, parse_wm_size
from phone.virtual.wire.served_phone import ServedPhone
from phone.virtual.wire.shell_commands import DeviceState, Output, Shell
from phone.virtual.wire.shell_parse import ShellSyntaxError, parse
from tests.phone_adb.fake_phone import FakePhone


def make_shell() -> tuple[Shell, FakePhone]:
    phone = FakePhone()
    phone.open_app("com.android.settings")
    served = ServedPhone(phone)
    return Shell(served, DeviceState(props={"ro.product.model": "FakePhone"})), phone


def run(shell: Shell, line: str) -> tuple[int, str, str]:
    out = Output()
    status = shell.run(line, out)
    return status, out.stdout.decode("utf-8", "replace"), out.stderr.decode("utf-8", "replace")


def type_through_shell(shell: Shell, text: str) -> None:
    for step in text_input.plan_input(text):
        if isinstance(step, text_input.TypeText):
            status, _, err = run(shell, f"input text {step.quoted}")
        else:
            status, _, err = run(shell, f"input keyevent {step.keycode}")
        assert status == 0, err


@pytest.mark.parametrize(
    "text",
    [
        "hello world",
        "it's",
        'say "hi"',
        "a; rm -rf / && echo $HOME | cat `id` $(id) > /x < /y &",
        "50% off",
        "literal %s stays",
        "%%s%",
        "back\\slash and \\' mix",
        "  leading and trailing  ",
    ],
)
def test_input_text_commands_type_exactly_the_text(text):
    shell, phone = make_shell()
    type_through_shell(shell, text)
    assert phone.text == text


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60))
def test_any_printable_ascii_survives_quoting_and_the_percent_s_rule(text):
    shell, phone = make_shell()
    type_through_shell(shell, text)
    assert phone.text == text


def test_newline_and_tab_become_enter_and_tab_keys():
    steps = text_input.plan_input("a\nb\tc")
    assert [type(s).__name__ for s in steps] == ["TypeText", "PressKey", "TypeText", "PressKey", "TypeText"]
    assert steps[1] == text_input.PressKey(text_input.KEY_ENTER)
    shell, phone = make_shell()
    type_through_shell(shell, "a\nb")
    assert phone.text == "ab" and phone.keys == [Key.ENTER]


def test_non_ascii_is_not_typable_and_goes_to_the_ime_broadcast():
    assert not text_input.is_typable("café")
    with pytest.raises(ValueError):
        text_input.plan_input("café")
    shell, phone = make_shell()
    status, out, _ = run(shell, text_input.ime_broadcast("café ✓"))
    assert status == 0 and "result=0" in out
    assert phone.text == "café ✓"


def test_shell_runs_and_or_chains_with_exit_status():
    shell, _ = make_shell()
    assert run(shell, "false && echo no; echo yes")[1] == "yes\n"
    assert run(shell, "false || echo rescued")[1] == "rescued\n"
    assert run(shell, "true; echo X4EXIT:$?")[1] == "X4EXIT:0\n"
    status, out, err = run(shell, "nosuchcmd; echo code:$?")
    assert out == "code:127\n" and "not found" in err


def test_shell_quoting_keeps_metacharacters_literal():
    shell, _ = make_shell()
    assert run(shell, "echo 'a; b && c' \"d | e\" f\\;g")[1] == "a; b && c d | e f;g\n"
    with pytest.raises(ShellSyntaxError):
        parse("echo 'unterminated")


def test_shell_redirects_and_pipes_into_grep():
    shell, _ = make_shell()
    assert run(shell, "echo hello > /sdcard/a.txt; cat /sdcard/a.txt")[1] == "hello\n"
    assert run(shell, "dumpsys power | grep Wakefulness")[1].strip() == "mWakefulness=Awake"
    assert run(shell, "cat /nope 2>/dev/null; echo $?")[1] == "1\n"


def test_uiautomator_dump_writes_the_file_and_says_where():
    shell, phone = make_shell()
    status, out, _ = run(shell, "uiautomator dump /sdcard/d.xml && cat /sdcard/d.xml")
    assert status == 0
    assert out.startswith("UI hierchary dumped to: /sdcard/d.xml\n")
    assert out.endswith(phone.dump_hierarchy())


def test_wm_size_and_density_output_parses_like_a_phone():
    shell, phone = make_shell()
    assert parse_wm_size(run(shell, "wm size")[1]) == phone.size
    assert parse_wm_density(run(shell, "wm density")[1]) == 320
    assert parse_wm_size("Physical size: 1080x2400\nOverride size: 720x1600\n").width == 720


def test_input_tap_swipe_and_keyevents_reach_the_phone():
    shell, phone = make_shell()
    run(shell, "input tap 10 20; input swipe 1 2 300 400 250; input keyevent KEYCODE_BACK 3")
    assert phone.taps[-1] == (10, 20)
    assert phone.swipes[-1] == (1, 2, 300, 400, 250)
    assert phone.keys == [Key.BACK, Key.HOME]


def test_monkey_and_am_start_open_only_installed_apps():
    shell, phone = make_shell()
    phone.key(Key.HOME)
    assert run(shell, "monkey -p com.example.notes -c android.intent.category.LAUNCHER 1")[0] == 0
    assert phone.app == "com.example.notes"
    status, _, err = run(shell, "am start -n com.nope/.Main")
    assert status == 1 and "does not exist" in err


@pytest.mark.parametrize("state", ["unauthorized", "offline", "no permissions (user in plugdev group)"])
def test_unusable_states_come_with_what_to_do(state):
    hint = explain_state(state)
    assert hint and ("replug" in hint or "Allow" in hint or "udev" in hint)
    assert explain_state("device") == ""
