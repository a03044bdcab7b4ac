"""The adapter planner end to end: the agent loop on the virtual phone, a real HTTP
client, and a scripted server answering in a GUI family's own format.

The scripted replies hold coordinates computed here from the phone's ground truth in
the family's convention, so the test fails if the prompt, the parsing or the
coordinate conversion is wrong."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from agent.events import AwaitingDecision, Proposed
from agent.llm import RetryPolicy
from agent.llm.openai_client import OpenAIClient
from agent.planners import make_planner
from agent.planners.adapter import AdapterPlanner
from agent.types import ActionType, Decision, DecisionKind
from evaluation import online_bench as bench_online
from phone.virtual.phone import VirtualPhone
from tests.agent.fake_ollama import FakeLLMServer
from tests.agent.helpers import run

FAST = RetryPolicy(attempts=1, backoff_s=0.01, timeout_s=5.0)


def centre_of(phone: VirtualPhone, text: str) -> tuple[int, int]:
    [el] = [e for e in phone.ground_truth().elements if (e.text or e.label) == text and e.clickable] or \
        [e for e in phone.ground_truth().elements if (e.text or e.label) == text][:1]
    c = el.rect.center
    return c.x, c.y


def _first_card(goal: str, phone: VirtualPhone, model: str, reply: str, **run_options):  # type: ignore[no-untyped-def]
    """One step of the adapter planner in approve mode, ``model`` (served by a scripted server)
    answering ``reply``; the run aborted at the first approval card.  The run's events, the
    cards asked, and the body of the last request the server got."""
    cards: list[AwaitingDecision] = []

    def decide(ev: AwaitingDecision) -> Decision:
        cards.append(ev)
        return Decision(DecisionKind.ABORT)

    with FakeLLMServer(models=(model,)) as server:
        server.on("Task:", reply)
        client = OpenAIClient(model=model, base_url=server.url + "/v1", policy=FAST)
        try:
            events = run(goal, phone, client, planner="adapter", max_steps=1, mode="approve", decide=decide,
                         **run_options)
        finally:
            client.close()
        return events, cards, server.requests[-1].body


def test_a_text_only_model_in_autoglm_format_opens_settings_from_the_home_screen() -> None:
    task = bench_online.find_task("yardstick", "launcher.open_settings_icon")
    phone = VirtualPhone(seed=0)
    task.setup(phone)
    x, y = centre_of(phone, "Settings")
    size = phone.screen_size()
    tap = f'<think>The Settings icon.</think><answer>do(action="Tap", element=[{round(x * 1000 / size.width)},' \
          f'{round(y * 1000 / size.height)}])</answer>'
    with FakeLLMServer(models=("autoglm-phone-9b",)) as server:
        server.on("Actions so far: none.", tap)
        server.on("Actions so far:\n1.", '<think>Settings is open.</think><answer>finish(message="Opened")</answer>')
        client = OpenAIClient(model="autoglm-phone-9b", base_url=server.url + "/v1", policy=FAST)
        try:
            events = run(task.goal, phone, client, planner="adapter:autoglm:text", max_steps=4)
        finally:
            client.close()
        first = server.prompts()[0]
    proposals = [e.proposal for e in events if isinstance(e, Proposed)]
    assert [p.action.type for p in proposals] == [ActionType.TAP, ActionType.COMPLETE]
    assert proposals[0].planner == "adapter:autoglm"
    assert any("AutoGLM adapter" in ev for ev in proposals[0].evidence)  # shown in the step details
    assert "Settings" in first and "at [" in first  # a text model gets the description with positions
    assert task.is_success(phone)
    phone.close()


def test_a_vision_model_gets_the_screenshot_at_its_processors_size_and_its_tap_lands() -> None:
    phone = VirtualPhone(seed=0)
    bench_online.find_task("yardstick", "launcher.open_settings_icon").setup(phone)
    x, y = centre_of(phone, "Settings")
    # UI-TARS-1.5 counts pixels of the Qwen2.5-VL-resized screenshot: 1080x2400 -> 1092x2408
    tap = f"Thought: open Settings.\nAction: click(point='<point>{round(x * 1092 / 1080)} {round(y * 2408 / 2400)}</point>')"
    events, _, body = _first_card("Open Settings", phone, "ui-tars-1.5-7b", tap, send_screenshot=True)
    proposal = next(e.proposal for e in events if isinstance(e, Proposed))
    assert proposal.planner == "adapter:ui-tars"
    touch = proposal.action.touch
    assert touch is not None and abs(touch.x - x) <= 1 and abs(touch.y - y) <= 1
    parts = body["messages"][-1]["content"]
    [image] = [p for p in parts if p.get("type") == "image_url"]
    png = base64.b64decode(image["image_url"]["url"].split(",", 1)[1])
    assert Image.open(io.BytesIO(png)).size == (1092, 2408)
    assert "1092x2408" in body["messages"][0]["content"]  # the system prompt states the grid it counts on
    phone.close()


def test_ask_user_reaches_the_approval_card_as_a_question() -> None:
    phone = VirtualPhone(seed=0)
    _, cards, _ = _first_card("Turn on my alarm", phone, "mai-ui-8b",
                              '<thinking>Two alarms match.</thinking><tool_call>{"name": "mobile_use", "arguments": '
                              '{"action": "ask_user", "text": "Which alarm, 7:00 or 8:30?"}}</tool_call>')
    assert cards, "the question must reach the approval card"
    proposal = cards[0].proposal
    assert proposal.action.type is ActionType.WAIT
    assert "Which alarm, 7:00 or 8:30?" in proposal.rationale
    assert proposal.risk is not None and proposal.risk.category == "ask_user"
    phone.close()


def test_an_unreadable_reply_is_asked_again_once_then_fails_the_step_clearly() -> None:
    phone = VirtualPhone(seed=0)
    with FakeLLMServer(models=("gelab-zero-4b",)) as server:
        server.on("Task:", "I would tap the settings icon.")
        client = OpenAIClient(model="gelab-zero-4b", base_url=server.url + "/v1", policy=FAST)
        try:
            planner = make_planner("adapter", client)
            assert isinstance(planner, AdapterPlanner)
            events = run("Open Settings", phone, client, planner="adapter", max_steps=1)
        finally:
            client.close()
        asked = server.chat_requests
    errors = [e for e in events if type(e).__name__ == "ErrorEvent"]
    assert errors and "unreadable reply" in errors[0].message and "no action: field" in errors[0].message
    assert asked == 2  # the first ask and one re-ask naming the problem
    assert "could not be read" in server.requests[-1].prompt
    phone.close()


def test_an_unknown_model_with_the_adapter_planner_is_refused_with_a_hint() -> None:
    client = OpenAIClient(model="llama3.2", base_url="http://127.0.0.1:9/v1", policy=FAST)
    with pytest.raises(ValueError, match="adapter:<family>"):
        make_planner("adapter", client)
    client.close()
