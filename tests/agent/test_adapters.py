"""GUI-model adapters read replies written the way each family documents them, and put
the corners and the centre of the screen on the right device pixels.

The screen is 1080x2400.  For every family the expected pixel is worked out here from
the family's own convention (0-1000, 0-999, or pixels of the Qwen2.5-VL-resized
1092x2408 screenshot), not from the adapter's code.
"""

from __future__ import annotations

import pytest

from agent.llm.adapters import ADAPTERS, AdapterError, Intent, adapter_by_name, adapter_for
from agent.types import ActionType, Direction, Point
from vision.geometry import Size

SCREEN = Size(1080, 2400)
RESIZED = (1092, 2408)  # Qwen2.5-VL smart resize of 1080x2400: multiples of 28, nearest

# model coordinates of (top-left, centre, bottom-right) for each convention
CORNERS = {
    "0-1000": [(0, 0), (500, 500), (1000, 1000)],
    "0-999": [(0, 0), (499.5, 499.5), (999, 999)],
    "resized": [(0, 0), (RESIZED[0] / 2, RESIZED[1] / 2), RESIZED],
}
EXPECTED = [Point(0, 0), Point(540, 1200), Point(1079, 2399)]  # bottom-right clamps onto the last pixel

CONVENTION = {
    "qwen3-vl": "0-999", "mai-ui": "0-999", "ui-venus": "0-999", "gui-owl": "resized", "gui-owl-1.5": "0-1000",
    "ui-tars": "resized", "agentcpm-gui": "0-1000", "autoglm": "0-1000", "gelab": "0-1000",
}


def tap_reply(family: str, x: float, y: float) -> str:
    """A tap written in the family's documented reply format."""
    xi, yi = (round(x), round(y)) if family not in ("qwen3-vl", "mai-ui") else (x, y)
    if family in ("qwen3-vl", "gui-owl", "gui-owl-1.5"):
        return ("Thought: the target is visible.\n"
                f'<tool_call>\n{{"name": "mobile_use", "arguments": {{"action": "click", "coordinate": [{xi}, {yi}]}}}}\n</tool_call>')
    if family == "mai-ui":
        return (f"<thinking>\nTap it.\n</thinking>\n<tool_call>\n"
                f'{{"name": "mobile_use", "arguments": {{"action": "click", "coordinate": [{xi}, {yi}]}}}}\n</tool_call>')
    if family == "ui-venus":
        return f"<think>Open it.</think>\n<action>Click(box=({xi},{yi}))</action>\n<conclusion>Tapped.</conclusion>"
    if family == "ui-tars":
        return f"Thought: I should tap it.\nAction: click(point='<point>{xi} {yi}</point>')"
    if family == "agentcpm-gui":
        return f'{{"thought":"tap the entry","POINT":[{xi},{yi}]}}'
    if family == "autoglm":
        return f'<think>Tap the entry.</think><answer>do(action="Tap", element=[{xi},{yi}])</answer>'
    if family == "gelab":
        return f"<THINK> tap the entry </THINK>\nexplain:tap it\taction:CLICK\tpoint:{xi},{yi}\tsummary:tapped"
    raise AssertionError(family)


def test_every_listed_family_has_an_adapter() -> None:
    assert set(ADAPTERS) == set(CONVENTION)


@pytest.mark.parametrize("family", sorted(CONVENTION))
@pytest.mark.parametrize("corner", range(3))
def test_a_tap_at_the_corners_and_centre_lands_on_the_right_pixel(family: str, corner: int) -> None:
    x, y = CORNERS[CONVENTION[family]][corner]
    reply = ADAPTERS[family].parse(tap_reply(family, x, y), SCREEN)
    assert reply.intent is Intent.ACT
    assert reply.action.type is ActionType.TAP
    # integer grammars cannot write the exact centre: allow one model unit (2.4 px at most here)
    unit = {"0-1000": (1.08, 2.4), "0-999": (1.09, 2.41), "resized": (1.0, 1.0)}[CONVENTION[family]]
    got, want = reply.action.touch, EXPECTED[corner]
    assert got is not None
    assert abs(got.x - want.x) <= unit[0] and abs(got.y - want.y) <= unit[1], (got, want)
    if corner != 1:
        assert got == want  # the corners are exact
    assert reply.raw_action  # the exact action text is kept for the step details


@pytest.mark.parametrize(("model", "family"), [
    ("qwen3-vl:4b", "qwen3-vl"), ("qwen3-vl:8b-instruct", "qwen3-vl"), ("ByteDance-Seed/UI-TARS-1.5-7B", "ui-tars"),
    ("ui-tars-1.5:7b-q4", "ui-tars"), ("mPLUG/GUI-Owl-7B", "gui-owl"), ("gui-owl-1.5-8b", "gui-owl-1.5"),
    ("Tongyi-MAI/MAI-UI-8B", "mai-ui"), ("inclusionAI/UI-Venus-Navi-7B", "ui-venus"),
    ("openbmb/AgentCPM-GUI", "agentcpm-gui"), ("zai-org/AutoGLM-Phone-9B", "autoglm"),
    ("stepfun-ai/GELab-Zero-4B-preview", "gelab"), ("step-gui-8b", "gelab"),
])
def test_the_adapter_is_chosen_from_the_model_name(model: str, family: str) -> None:
    adapter = adapter_for(model)
    assert adapter is not None and adapter.name == family


def test_a_model_of_no_known_family_gets_no_adapter_and_a_bad_override_is_refused() -> None:
    assert adapter_for("llama3.2:3b") is None
    with pytest.raises(AdapterError, match="choose one of"):
        adapter_by_name("no-such-family")
    text = adapter_by_name("AutoGLM", text_only=True)
    assert text.name == "autoglm" and not text.vision and "text only" in text.describe(SCREEN)


# ---- other actions, per family ------------------------------------------------------------

def test_qwen3vl_swipe_type_buttons_and_terminate() -> None:
    a = ADAPTERS["qwen3-vl"]
    call = '<tool_call>{{"name": "mobile_use", "arguments": {}}}</tool_call>'
    r = a.parse(call.format('{"action": "swipe", "coordinate": [500, 800], "coordinate2": [500, 200]}'), SCREEN)
    assert r.action.type is ActionType.SWIPE and r.action.finger_direction() is Direction.UP
    assert r.action.touch == Point(541, 1922)
    assert a.parse(call.format('{"action": "type", "text": "latte2026"}'), SCREEN).action.text == "latte2026"
    assert a.parse(call.format('{"action": "system_button", "button": "Back"}'), SCREEN).action.type is ActionType.BACK
    assert a.parse(call.format('{"action": "open", "text": "Settings"}'), SCREEN).action.app == "Settings"
    done = a.parse(call.format('{"action": "terminate", "status": "success"}'), SCREEN)
    assert done.intent is Intent.DONE and done.action.type is ActionType.COMPLETE
    failed = a.parse(call.format('{"action": "terminate", "status": "failure"}'), SCREEN)
    assert failed.intent is Intent.IMPOSSIBLE and failed.action.type is ActionType.IMPOSSIBLE


def test_mai_ui_asks_the_user_and_swipes_by_direction() -> None:
    a = ADAPTERS["mai-ui"]
    ask = a.parse('<thinking>Which one?</thinking><tool_call>{"name": "mobile_use", "arguments": '
                  '{"action": "ask_user", "text": "Which alarm?"}}</tool_call>', SCREEN)
    assert ask.intent is Intent.ASK_USER and ask.message == "Which alarm?" and ask.action.type is ActionType.WAIT
    assert ask.thought == "Which one?"
    swipe = a.parse('<thinking>down</thinking><tool_call>{"name": "mobile_use", "arguments": '
                    '{"action": "swipe", "direction": "up"}}</tool_call>', SCREEN)
    assert swipe.action.finger_direction() is Direction.UP


def test_ui_tars_scroll_direction_is_where_the_content_comes_from_and_finished_stops() -> None:
    a = ADAPTERS["ui-tars"]
    r = a.parse("Thought: more below.\nAction: scroll(point='<point>546 1204</point>', direction='down')", SCREEN)
    assert r.action.type is ActionType.SWIPE and r.action.finger_direction() is Direction.UP
    assert r.action.touch == Point(540, 1200)
    old = a.parse("Thought: tap.\nAction: click(start_box='<|box_start|>(546,1204)<|box_end|>')", SCREEN)
    assert old.action.touch == Point(540, 1200)
    typed = a.parse("Thought: type.\nAction: type(content='Hello\\n')", SCREEN)
    assert typed.action.text == "Hello"
    assert a.parse("Thought: ok\nAction: press_back()", SCREEN).action.type is ActionType.BACK
    done = a.parse("Thought: done\nAction: finished(content='Wi-Fi is off')", SCREEN)
    assert done.intent is Intent.DONE and done.message == "Wi-Fi is off"
    assert a.parse("Thought: need login\nAction: call_user()", SCREEN).intent is Intent.ASK_USER


def test_ui_venus_long_press_scroll_and_call_user() -> None:
    a = ADAPTERS["ui-venus"]
    lp = a.parse("<think>x</think><action>LongPress(box=(499,499))</action>", SCREEN)
    assert lp.action.type is ActionType.LONG_PRESS and lp.action.touch == Point(539, 1199)  # 499/999 of 1080 and 2400
    sc = a.parse("<think>x</think><action>Scroll(start=(500,800), end=(500,300))</action>", SCREEN)
    assert sc.action.finger_direction() is Direction.UP
    call = a.parse("<think>x</think><action>CallUser(content='Log in first')</action>", SCREEN)
    assert call.intent is Intent.ASK_USER and call.message == "Log in first"
    assert a.parse("<think>x</think><action>PressHome()</action>", SCREEN).action.type is ActionType.HOME


def test_autoglm_take_over_finish_and_a_confirmation_note() -> None:
    a = ADAPTERS["autoglm"]
    tap = a.parse('<think>pay</think><answer>do(action="Tap", element=[500,900], message="Pay 20 EUR")</answer>', SCREEN)
    assert tap.action.touch == Point(540, 2160) and tap.sensitive == "Pay 20 EUR"
    take = a.parse('<think>captcha</think><answer>do(action="Take_over", message="Solve the captcha")</answer>', SCREEN)
    assert take.intent is Intent.TAKE_OVER and take.message == "Solve the captcha"
    fin = a.parse('<think>ok</think><answer>finish(message="Done.")</answer>', SCREEN)
    assert fin.intent is Intent.DONE and fin.message == "Done."
    sw = a.parse('<answer>do(action="Swipe", start=[500,800], end=[500,200])</answer>', SCREEN)
    assert sw.action.finger_direction() is Direction.UP
    typed = a.parse('<answer>do(action="Type", text="Lunch with Ana")</answer>', SCREEN)
    assert typed.action.text == "Lunch with Ana"
    assert a.parse('<answer>do(action="Launch", app="Clock")</answer>', SCREEN).action.app == "Clock"


def test_agentcpm_swipe_press_type_and_status() -> None:
    a = ADAPTERS["agentcpm-gui"]
    sw = a.parse('{"thought":"scroll","POINT":[500,500],"to":"up"}', SCREEN)
    assert sw.action.touch == Point(540, 1200) and sw.action.finger_direction() is Direction.UP
    assert a.parse('{"PRESS":"BACK"}', SCREEN).action.type is ActionType.BACK
    assert a.parse('{"TYPE":"bottle"}', SCREEN).action.text == "bottle"
    assert a.parse('{"STATUS":"finish"}', SCREEN).intent is Intent.DONE
    assert a.parse('{"STATUS":"impossible"}', SCREEN).intent is Intent.IMPOSSIBLE
    assert a.parse('{"thought":"which?","STATUS":"need_feedback"}', SCREEN).intent is Intent.ASK_USER
    lp = a.parse('{"POINT":[0,0],"duration":1000}', SCREEN)
    assert lp.action.type is ActionType.LONG_PRESS


def test_gelab_slide_info_complete_and_abort() -> None:
    a = ADAPTERS["gelab"]
    sl = a.parse("<THINK> x </THINK>\nexplain:scroll\taction:SLIDE\tpoint1:500,800\tpoint2:500,200\tsummary:s", SCREEN)
    assert sl.action.touch == Point(540, 1920) and sl.action.lift == Point(540, 480)
    info = a.parse("<THINK> x </THINK>\nexplain:ask\taction:INFO\tvalue:Which network?\tsummary:s", SCREEN)
    assert info.intent is Intent.ASK_USER and info.message == "Which network?"
    done = a.parse("<THINK> x </THINK>\nexplain:e\taction:COMPLETE\treturn:All set\tsummary:s", SCREEN)
    assert done.intent is Intent.DONE and done.message == "All set"
    abort = a.parse("<THINK> x </THINK>\nexplain:e\taction:ABORT\tvalue:No such app\tsummary:s", SCREEN)
    assert abort.intent is Intent.IMPOSSIBLE
    awake = a.parse("<THINK> x </THINK>\nexplain:e\taction:AWAKE\tvalue:Settings\tsummary:s", SCREEN)
    assert awake.action.app == "Settings"


@pytest.mark.parametrize(("family", "reply"), [
    ("qwen3-vl", "I will click the button."),
    ("ui-tars", "Thought: no action here"),
    ("ui-venus", "<think>x</think><action>Fly(box=(1,2))</action>"),
    ("autoglm", "<answer>do(action=\"Tap\")</answer>"),
    ("agentcpm-gui", '{"thought": "nothing"}'),
    ("gelab", "<THINK> x </THINK>\nexplain:e\tsummary:s"),
    ("mai-ui", '<tool_call>{"name": "mobile_use", "arguments": {"action": "click"}}</tool_call>'),
])
def test_a_reply_outside_the_grammar_is_refused_with_a_reason(family: str, reply: str) -> None:
    with pytest.raises(AdapterError):
        ADAPTERS[family].parse(reply, SCREEN)


def test_every_adapter_describes_its_prompt_and_states_its_coordinates() -> None:
    for a in ADAPTERS.values():
        system = a.system_prompt(SCREEN)
        assert system and len(system) > 200
        assert a.describe(SCREEN).startswith(a.title)
        assert "Task: Turn off Wi-Fi" in a.user_prompt("Turn off Wi-Fi", ("open Settings",), SCREEN)
