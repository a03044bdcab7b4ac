"""In the window, the screen summary the user reads matches the screen (issue 26, item 4).

The built-in model said "home screen" on the Settings, Internet and Clock screens.  Here a
scripted model does the same on the virtual phone's Settings screen: the latent-state
panel shows what the parse says instead (the Settings app, its page), marked as coming from
the parse, and the proposal card says which screen the proposal is for."""

from __future__ import annotations

import pytest

pytest.importorskip("phone.virtual.phone", reason="needs the virtual phone")

from agent.latent import FROM_THE_PARSE
from tests.agent.fake_ollama import FakeLLMServer

from .e2e_support import make_settings, open_window

FUSED = ('{"performed_action": "Nothing yet.", "screen_summary": "home screen", "progression": "Nothing yet.",'
         ' "mistakes": "No mistakes.", "completed": false, "completion_reason": "Wi-Fi is on", "confidence": 0.5}')


def _scripted() -> FakeLLMServer:
    server = FakeLLMServer()
    server.on(lambda p: "followed by the last action taken on it" in p, "home screen")  # the summary
    server.on("Estimate the hidden state", FUSED)  # the fused estimator, if the window picks it
    server.on('starts with "You have"', "You have not done anything yet.")
    server.on('answer exactly "No mistakes."', "No mistakes.")
    server.on("Start your answer with Yes or No", "No, Wi-Fi is still on.")
    server.on("", "tap Network & internet")  # the planner
    return server


@pytest.mark.slow
def test_a_home_screen_summary_on_the_settings_screen_shows_the_settings_page_instead(qtbot, tmp_path):
    with _scripted() as server:
        win = open_window(make_settings(tmp_path, server.url, virtual_phone="window"), qtbot)
        try:
            win.session.device.open_app("Settings")
            win.task_panel.set_models(["fake-model:latest"], current="fake-model:latest")
            win.task_panel.goal.setPlainText("Turn off Wi-Fi")
            win.task_panel.planner.setCurrentIndex(win.task_panel.planner.findData("zeroshot+"))
            win.task_panel.start.click()
            qtbot.waitUntil(lambda: win.decision_bar.enabled or not win.run.active, timeout=60000)
            assert win.run.active, [(n.message, n.detail[-300:]) for n in win.notifications.history]
            summary = win.latent_panel.text_of("screen_summary")
            assert "Settings app" in summary and FROM_THE_PARSE in summary, summary
            assert not summary.lower().startswith("home screen")
            assert win.proposal_card.on_screen.isVisible()
            assert win.proposal_card.on_screen.text() == "On screen: the Settings app, page “Settings”"
            assert "Network & internet" in win.proposal_card.on_screen.toolTip()  # its entries
            win.run.abort()
            qtbot.waitUntil(lambda: win.run.driver is None, timeout=30000)
        finally:
            win.close()
