"""The agent says when it acts from the map: in the window, a step the app map gave (no
model call) is marked on the approval card ("from the app map") with the path in its
reason, and the Steps tab says the same; "impossible" said from the maps shows its reason
on the card.  The run uses the small built-in model's policy (the map acts alone only for
it), answered by a scripted server."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
pytest.importorskip("pytestqt", reason="the window tests need pytest-qt")

from agent.knowledge.explore import ExploreBudget
from agent.knowledge.guide import AppMaps
from agent.knowledge.map_language import LanguageMaps
from agent.knowledge.map_plan import AppToExplore
from agent.types import ActionType
from app.map_upkeep import explore_one
from phone.virtual.phone import VirtualPhone

pytestmark = [pytest.mark.gui, pytest.mark.slow]

BUILTIN = "qwen2.5-coder-0.5b"  # a small built-in model: the map's steps are taken without asking it


def _parser():
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    return ScreenParser(PipelineConfig(mode="tree", ocr="none", detector="none", icons="none"))


@pytest.fixture
def win(qtbot, tmp_path):
    from app.gui.devices import VIRTUAL_CHOICE
    from app.gui.window import MainWindow
    from app.knowledge_store import SqliteKnowledgeStore
    from app.settings import LLMSettings, Settings, VisionSettings
    from app.storage import Store
    from tests.agent.fake_ollama import FakeLLMServer

    settings_map = VirtualPhone()
    job = AppToExplore("com.android.settings", "Settings", "no map", 80)
    with Store(tmp_path / "tapwise.sqlite") as db:
        explore_one(settings_map, _parser(), job, "en", lambda: SqliteKnowledgeStore(db),
                    budget=ExploreBudget(max_steps=80))
        assert AppMaps(LanguageMaps(SqliteKnowledgeStore(db), "en")).load("com.android.settings") is not None
    server = FakeLLMServer(models=(BUILTIN,)).on("", "wait").start()
    settings = Settings(data_dir=tmp_path, llm=LLMSettings(ollama_host=server.url, model=BUILTIN, timeout_s=10,
                                                           retries=0),
                        vision=VisionSettings(use_hierarchy="only"))
    w = MainWindow(settings, "sim", discover=False, live_parse=False)
    w.ensure_model = lambda model, then=None: True  # the scripted server stands in for the built-in one
    qtbot.addWidget(w)
    w.resize(1024, 700)
    w.show()
    w.connect_device(VIRTUAL_CHOICE)
    qtbot.waitUntil(lambda: w.view.frame is not None, timeout=20000)
    w.task_panel.set_models([BUILTIN], current=BUILTIN)
    w.task_panel.planner.setCurrentIndex(w.task_panel.planner.findData("zeroshot-"))
    yield w
    w.close()
    server.stop()


def _start(w, qtbot, goal: str):
    w.task_panel.goal.setPlainText(goal)
    w.task_panel.start.click()
    qtbot.waitUntil(lambda: w.decision_bar.enabled and w.run.proposal is not None, timeout=60000)
    return w.run.proposal


def test_a_step_taken_from_the_map_is_marked_on_the_card_and_in_the_steps_tab(win, qtbot):
    first = _start(win, qtbot, "Turn on airplane mode")
    assert first.source == "map" and first.action.type is ActionType.OPEN_APP
    card = win.proposal_card
    assert "from the app map" in card.planner.text()
    assert card.rationale.text().startswith("Why: App map:") or "App map" in card.rationale.text()
    win.approve()
    qtbot.waitUntil(lambda: win.decision_bar.enabled and win.run.proposal is not None
                    and win.run.proposal is not first, timeout=60000)
    second = win.run.proposal
    assert second.source == "map" and second.action.type is ActionType.TAP
    assert "'Network & internet'" in second.rationale, "the reason names the path"
    assert "from the app map" in card.planner.text() and "Network &amp; internet" in card.evidence.text()
    win.approve()
    qtbot.waitUntil(lambda: win.timeline.step(1, win.run.section) is not None, timeout=60000)
    from widgets.timeline import step_html

    shown = step_html(win.timeline.step(1, win.run.section))
    assert "from the app map" in shown and "Network &amp; internet" in shown
    win.run.abort()
    qtbot.waitUntil(lambda: not win.run.active, timeout=20000)


def test_what_no_mapped_screen_shows_is_told_to_the_model_and_shown_on_the_card(win, qtbot):
    """The maps' "impossible" is advice (it is wrong too often on other wordings to end a run
    on): the model answers, and the card shows what the maps did not find."""
    proposal = _start(win, qtbot, "Show the weather forecast")
    card = win.proposal_card
    assert any("No screen the app maps reach (Settings)" in e for e in proposal.evidence)
    shown = card.rationale.text() + " " + card.evidence.text()
    assert "'weather'" in shown and "'forecast'" in shown
    win.run.abort()
    qtbot.waitUntil(lambda: not win.run.active, timeout=20000)
