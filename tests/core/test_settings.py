"""Settings come from a JSON file in the config folder, overridden by TAPWISE_* variables;
secrets never reach the disk and an unreadable file loses nothing."""

import json

from pydantic import SecretStr

from app.settings import Settings, load_settings, save_settings, settings_path


def test_defaults_without_a_file():
    s, problem = load_settings()
    assert problem is None
    assert s.llm.backend == "ollama"
    assert s.vision.ocr_min_confidence == 0.95


def test_saved_settings_load_back(tmp_path):
    s, _ = load_settings()
    s.llm.model = "qwen2.5:7b"
    s.agent.step_budget = 12
    save_settings(s)
    again, problem = load_settings()
    assert problem is None
    assert again.llm.model == "qwen2.5:7b" and again.agent.step_budget == 12


def test_environment_overrides_the_file(monkeypatch):
    s, _ = load_settings()
    s.llm.model = "from-file"
    save_settings(s)
    monkeypatch.setenv("TAPWISE_LLM__MODEL", "from-env")
    again, _ = load_settings()
    assert again.llm.model == "from-env"


def test_api_key_is_never_written_to_disk(monkeypatch):
    monkeypatch.setenv("TAPWISE_LLM__API_KEY", "sk-very-secret")
    s, _ = load_settings()
    assert isinstance(s.llm.api_key, SecretStr)
    assert s.llm.api_key.get_secret_value() == "sk-very-secret"
    path = save_settings(s)
    assert "sk-very-secret" not in path.read_text()
    assert "api_key" not in json.loads(path.read_text())["llm"]


def test_unreadable_settings_give_a_clear_message_and_are_kept():
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text("{ this is not json")
    s, problem = load_settings()
    assert "could not be read" in problem and str(path) in problem
    assert s == Settings(data_dir=s.data_dir)
    save_settings(s)
    backups = list(path.parent.glob("settings.json.unreadable-*"))
    assert len(backups) == 1 and backups[0].read_text() == "{ this is not json"


def test_invalid_value_names_the_field():
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"vision": {"ocr_min_confidence": 7}}))
    _, problem = load_settings()
    assert "vision.ocr_min_confidence" in problem


def test_an_old_settings_file_saying_approve_all_reads_as_the_approve_autonomy():
    from agent.types import Autonomy

    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"agent": {"autonomy": "approve_all", "step_budget": 9}}))
    s, problem = load_settings()
    assert problem is None and s.agent.autonomy is Autonomy.APPROVE and s.agent.step_budget == 9
    save_settings(s)
    assert json.loads(path.read_text())["agent"]["autonomy"] == "approve"


def test_the_environment_overrides_one_field_and_keeps_the_files_others(monkeypatch):
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"llm": {"backend": "openai", "model": "from-file", "timeout_s": 30}}))
    monkeypatch.setenv("TAPWISE_LLM__MODEL", "from-env")
    s, _ = load_settings()
    assert (s.llm.backend, s.llm.model, s.llm.timeout_s) == ("openai", "from-env", 30)


def test_vision_settings_become_the_parsers_configuration_in_its_own_words():
    s = Settings(vision={"detector": "classic", "ocr": "paddleocr", "icons": "openclip", "use_hierarchy": "only",
                         "ocr_min_confidence": 0.8})
    config = s.to_pipeline_config()
    assert (config.mode, config.detector, config.ocr, config.icons) == ("tree", "cv", "paddle", "clip")
    assert config.ocr_min_confidence == 0.8
    assert Settings().to_pipeline_config().mode == "auto" and Settings().to_pipeline_config().icons == "auto"
    assert Settings(vision={"use_hierarchy": "never"}).to_pipeline_config(mode="fusion").mode == "fusion"
