"""A scripted "model" for benchmark tests: it reads the screen in each prompt and answers
like an agent that knows how to open the network settings.  Served over real loopback
HTTP by the agent tests' ``FakeLLMServer`` (Ollama and OpenAI-compatible endpoints)."""

from __future__ import annotations

import re

from tests.agent.fake_ollama import FakeLLMServer, Reply

GOOD_TASK = """
- id: t.network_page
  goals: ["Open the network settings"]
  app: com.android.settings
  step_budget: 6
  success: {visited: com.android.settings/network}
  checkpoints:
    - {path: ui.foreground, eq: com.android.settings}
    - {visited: com.android.settings/network}
  solution:
    - open_app: Settings
    - tap: Network & internet
"""
# The same task twice over, so a benchmark has more than one cell per planner.
SECOND_TASK = GOOD_TASK.replace("t.network_page", "t.network_page_again")
BAD_TASK = """
- id: t.broken
  goals: ["Do something"]
  app: com.android.settings
  success: {path: settings.wifi, equals: false}
  solution: [back]
"""


def _app(prompt: str) -> str:
    screens = re.findall(r"Screen \d+x\d+, app ([\w.]+):", prompt)
    return screens[-1] if screens else ""


def _is_next(p: str) -> bool:
    return "Decide the single next action" in p


def _on_network_page(p: str) -> bool:
    tail = p.split("currently shows")[-1]
    return _app(p) == "com.android.settings" and "Navigate up" in tail and "SIMs" in tail


def scripted_server() -> FakeLLMServer:
    fake = FakeLLMServer(default=Reply("No mistakes."))
    fake.on(lambda p: _is_next(p) and _app(p).endswith("launcher"), "open Settings")
    fake.on(lambda p: _is_next(p) and _on_network_page(p), "done")
    fake.on(lambda p: _is_next(p) and _app(p) == "com.android.settings", "tap Network & internet")
    fake.on(_is_next, "go back")
    fake.on(lambda p: "fully achieved" in p and "I tapped Network & internet" in p, "Yes, the network page is open.")
    fake.on("fully achieved", "No, not yet.")
    fake.on(lambda p: "really happened" in p and "action: tap Network" in p, "I tapped Network & internet.")
    fake.on("really happened", "I opened the Settings app.")
    fake.on("Screen summary:", "A settings screen.")
    fake.on("starts with \"You have\"", "You have opened the Settings app.")
    return fake
