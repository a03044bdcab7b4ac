"""The bundle's self-test, run in-process: it passes on a healthy install, names the stage
that broke otherwise, and its scripted LLM server speaks both Ollama's and OpenAI's API."""

from __future__ import annotations

import io
import os
from pathlib import Path

import httpx
import pytest

from app import selftest
from app.selftest import ScriptedLLMServer, StageFailed, run_self_test


@pytest.fixture
def offscreen(monkeypatch):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")


@pytest.mark.slow
@pytest.mark.gui
def test_self_test_passes_every_stage_on_this_install(offscreen):
    out = io.StringIO()
    assert run_self_test(out) == 0, out.getvalue()
    report = out.getvalue()
    for stage in ("window", "virtual phone", "screen parse", "agent step"):
        assert f"] {stage}" in report
    assert "FAIL" not in report and "Self-test passed" in report
    assert "com.android.settings" in report  # the scripted step really moved the phone
    data_dir = Path(os.environ["TAPWISE_DATA_DIR"])  # isolated per test by tests/conftest.py
    assert not data_dir.exists() or not any(data_dir.rglob("*.sqlite")), "the self-test touched the user's database"


def test_a_failing_stage_is_named_and_gives_a_non_zero_status(offscreen, monkeypatch):
    def broken_parse(screen):
        raise StageFailed("OCR models missing from the bundle")

    monkeypatch.setattr(selftest, "stage_parse", broken_parse)
    out = io.StringIO()
    assert run_self_test(out, gui=False) == 1
    report = out.getvalue()
    assert "Self-test FAILED at stage 'screen parse': OCR models missing from the bundle" in report
    assert "not run: needs the virtual phone and the screen parser" in report


def test_an_unexpected_exception_becomes_a_report_line_not_a_traceback(offscreen, monkeypatch):
    def crash():
        raise OSError("disk on fire")

    monkeypatch.setattr(selftest, "stage_phone", crash)
    out = io.StringIO()
    assert run_self_test(out, gui=False) == 1
    assert "FAILED at stage 'virtual phone': OSError: disk on fire" in out.getvalue()
    assert "Traceback" not in out.getvalue()


def test_self_test_defaults_to_offscreen_but_keeps_a_chosen_platform(monkeypatch):
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    assert selftest._ensure_offscreen() == "offscreen"
    assert os.environ["QT_QPA_PLATFORM"] == "offscreen"
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    assert selftest._ensure_offscreen() == "xcb"


def test_scripted_server_answers_ollama_chat_and_tags():
    with ScriptedLLMServer(default="open Clock", models=("m:1",)) as server:
        tags = httpx.get(server.url + "/api/tags").json()
        chat = httpx.post(server.url + "/api/chat", json={"model": "m:1", "messages": []}).json()
        assert server.chat_requests == 1
    assert tags["models"][0]["name"] == "m:1"
    assert chat["message"] == {"role": "assistant", "content": "open Clock"} and chat["done"] is True


def test_scripted_server_answers_openai_chat_completions_and_models():
    with ScriptedLLMServer(default="go back", models=("m",)) as server:
        models = httpx.get(server.url + "/v1/models").json()
        chat = httpx.post(server.url + "/v1/chat/completions", json={"model": "m", "messages": []}).json()
        missing = httpx.post(server.url + "/v2/nothing", json={})
    assert models["data"] == [{"id": "m"}]
    assert chat["choices"][0]["message"]["content"] == "go back"
    assert missing.status_code == 404


def test_scripted_server_listens_on_loopback_only():
    with ScriptedLLMServer() as server:
        assert server.url.startswith("http://127.0.0.1:")


def test_missing_phone_fonts_fail_the_virtual_phone_stage(offscreen, monkeypatch):
    import phone.virtual.assets

    monkeypatch.setattr(phone.virtual.assets, "roboto_dir", lambda: None)
    out = io.StringIO()
    assert run_self_test(out, gui=False) == 1
    assert "FAILED at stage 'virtual phone': the Roboto fonts (font-roboto) are missing" in out.getvalue()


def test_a_shipped_model_that_does_not_load_fails_the_parse_stage(offscreen, monkeypatch, tmp_path):
    # resources with a detector model file that is not a real ONNX network: the bundle
    # must not pass its self-test with a broken shipped model
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "ui_detector.onnx").write_bytes(b"not a network")
    monkeypatch.setenv("TAPWISE_RESOURCES", str(tmp_path))
    out = io.StringIO()
    assert run_self_test(out, gui=False) == 1
    failure = out.getvalue().splitlines()[-1]
    assert failure.startswith("Self-test FAILED at stage 'screen parse'") and "ui_detector.onnx" in failure


def test_a_shipped_icon_model_that_is_silently_skipped_fails_the_parse_stage(offscreen, monkeypatch, tmp_path):
    from vision.pipeline import ScreenParser

    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "icon_classifier.onnx").write_bytes(b"x")
    monkeypatch.setenv("TAPWISE_RESOURCES", str(tmp_path))
    monkeypatch.setattr(ScreenParser, "icon_classifier", lambda self: None)
    out = io.StringIO()
    assert run_self_test(out, gui=False) == 1
    assert ("FAILED at stage 'screen parse': icon_classifier.onnx ships but no icon classifier was loaded"
            in out.getvalue())


def test_a_parse_with_a_failed_backend_fails_the_parse_stage(offscreen, monkeypatch):
    from dataclasses import replace

    from vision.pipeline import ScreenParser

    real_parse = ScreenParser.parse

    def parse_with_failed_ocr(self, screen, previous=None):
        return replace(real_parse(self, screen, previous), warnings=("OCR failed on this frame: engine crashed",))

    monkeypatch.setattr(ScreenParser, "parse", parse_with_failed_ocr)
    out = io.StringIO()
    assert run_self_test(out, gui=False) == 1
    assert ("FAILED at stage 'screen parse': the parse reported problems: OCR failed on this frame: engine crashed"
            in out.getvalue())
