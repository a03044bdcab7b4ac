"""User settings: a pydantic-settings model stored as JSON in the platform config
directory and overridable by ``TAPWISE_*`` environment variables (nested fields use
``__``, e.g. ``TAPWISE_LLM__MODEL``).

Secrets (API keys) are never written to disk: they come from the environment only.
An unreadable settings file is reported, kept untouched (a copy is set aside before the
next save) and defaults are used.  No Qt here; the settings dialog is generated from
this model by the GUI.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

log = logging.getLogger(__name__)

APP_NAME = "tapwise"


def config_dir() -> Path:
    return Path(os.environ.get("TAPWISE_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME))


def data_dir_default() -> Path:
    return Path(os.environ.get("TAPWISE_DATA_DIR") or platformdirs.user_data_dir(APP_NAME))


class LLMSettings(BaseModel):
    backend: Literal["ollama", "openai"] = Field("ollama", description="Ollama, or any OpenAI-compatible server")
    ollama_host: str = Field("http://127.0.0.1:11434", description="Ollama server address")
    openai_base_url: str = Field("http://127.0.0.1:8080/v1", description="OpenAI-compatible server base URL")
    api_key: SecretStr | None = Field(None, description="API key (environment only, never saved)", exclude=True)
    model: str = Field("llama3.2", description="Model name on the server")
    timeout_s: float = Field(120.0, gt=0, description="Per-request timeout")
    retries: int = Field(2, ge=0, le=10, description="Retries on malformed or failed replies")
    temperature: float = Field(0.0, ge=0, le=2)


class VisionSettings(BaseModel):
    detector: Literal["auto", "yolo", "classic"] = Field("auto", description="Widget detector backend")
    ocr: Literal["rapidocr", "paddleocr", "none"] = Field("rapidocr", description="OCR backend")
    ocr_min_confidence: float = Field(0.95, ge=0, le=1, description="Drop OCR text below this confidence")
    icons: Literal["onnx", "openclip", "none"] = Field("onnx", description="Icon labelling backend")
    use_hierarchy: Literal["fuse", "only", "never"] = Field(
        "fuse", description="How the accessibility tree is used when available"
    )


class AgentSettings(BaseModel):
    planner: str = Field("zeroshot+", description="Default planner")
    autonomy: Literal["approve_all", "confident", "auto"] = Field("approve_all", description="When to ask")
    step_budget: int = Field(20, ge=1, le=200)
    sensitive_needs_approval: bool = Field(True, description="Always ask before sending, paying, deleting…")


class DeviceSettings(BaseModel):
    default: str = Field("auto", description="'auto' (a phone if connected, else the virtual phone), 'sim' or a serial")
    adb_path: str = Field("", description="adb binary (empty: adbutils' choice)")
    mirror_max_fps: int = Field(30, ge=1, le=120)
    command_timeout_s: float = Field(15.0, gt=0)


class Settings(BaseSettings):
    """All user-visible settings."""

    model_config = SettingsConfigDict(
        env_prefix="TAPWISE_", env_nested_delimiter="__", extra="ignore", validate_default=True
    )

    data_dir: Path = Field(default_factory=data_dir_default, description="Where the database and media live")
    llm: LLMSettings = Field(default_factory=LLMSettings)
    vision: VisionSettings = Field(default_factory=VisionSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    device: DeviceSettings = Field(default_factory=DeviceSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Environment wins over the file; explicit arguments win over both.
        return (init_settings, env_settings)

    @property
    def database_path(self) -> Path:
        return self.data_dir / "tapwise.sqlite"


class SettingsProblem(RuntimeError):
    pass


def settings_path() -> Path:
    return config_dir() / "settings.json"


def load_settings(path: Path | None = None) -> tuple[Settings, str | None]:
    """Settings from the file (if readable) with environment overrides.

    Returns ``(settings, problem)``; ``problem`` is a message when the file could not be
    used (defaults were used instead and the file was left as it was).
    """
    path = path or settings_path()
    file_values: dict[str, Any] = {}
    problem = None
    if path.exists():
        try:
            file_values = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(file_values, dict):
                raise ValueError("the top level is not a JSON object")
            file_values.pop("api_key", None)
            Settings.model_validate(file_values)  # validate the file alone for a clear message
        except (OSError, UnicodeDecodeError, ValueError, ValidationError) as exc:
            detail = exc.errors()[0] if isinstance(exc, ValidationError) else None
            where = ".".join(str(p) for p in detail["loc"]) + ": " + detail["msg"] if detail else str(exc)
            problem = (
                f"settings file {path} could not be read ({where}); using defaults. "
                "The file was not changed; fix it or delete it."
            )
            log.warning(problem)
            file_values = {}
    env_only = Settings()
    merged = _deep_merge(file_values, _explicit_env(env_only))
    return Settings(**merged), problem


def _explicit_env(env_settings: Settings) -> dict[str, Any]:
    """Only the values that the environment actually set."""
    prefix = "TAPWISE_"
    out: dict[str, Any] = {}
    for key in os.environ:
        if not key.startswith(prefix) or key in ("TAPWISE_CONFIG_DIR",):
            continue
        path = key[len(prefix):].lower().split("__")
        value: Any = env_settings
        try:
            for part in path:
                value = getattr(value, part)
        except AttributeError:
            continue
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        elif isinstance(value, BaseModel):
            value = value.model_dump()
        cursor = out
        for part in path[:-1]:
            cursor = cursor.setdefault(part, {})
        cursor[path[-1]] = value
    return out


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    result = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(result.get(k), dict):
            result[k] = _deep_merge(result[k], v)
        else:
            result[k] = v
    return result


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write settings atomically, without secrets; an unreadable old file is kept as a backup."""
    path = path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            backup = path.with_name(f"{path.name}.unreadable-{int(time.time())}")
            shutil.copy2(path, backup)
            log.warning("kept the unreadable settings file as %s", backup)
    data = settings.model_dump(mode="json", exclude={"llm": {"api_key"}})
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    tmp.replace(path)
    return path
