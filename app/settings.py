"""User settings: a pydantic-settings model stored as JSON in the platform config
directory and overridable by ``TAPWISE_*`` environment variables (nested fields use
``__``, e.g. ``TAPWISE_LLM__MODEL``).  pydantic-settings' own sources do the layering:
explicit arguments, then the environment, then the settings file.

Secrets (API keys) are never written to disk: they come from the environment only.
An unreadable settings file is reported, kept untouched (a copy is set aside before the
next save) and defaults are used.  The settings' words are translated into the vision
pipeline's (``Settings.to_pipeline_config``) here and nowhere else.  No Qt here; the
settings dialog is generated from this model by the GUI.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import platformdirs
from pydantic import BaseModel, Field, SecretStr, TypeAdapter, ValidationError
from pydantic_settings import (
    BaseSettings,
    JsonConfigSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from agent.types import Autonomy

if TYPE_CHECKING:
    from vision.config import PipelineConfig

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


#: The settings' vision words -> ``vision.config.PipelineConfig``'s (the one translation).
_PARSE_MODE = {"fuse": "auto", "only": "tree", "never": "vision"}
_DETECTOR = {"classic": "cv"}
_OCR = {"paddleocr": "paddle"}
#: "onnx" means the shipped classifier: "auto" uses it when present and says so in the
#: parse's warnings when it is missing, instead of failing every parse.
_ICONS = {"openclip": "clip", "onnx": "auto"}


class AgentSettings(BaseModel):
    planner: str = Field("auto", description="Default planner ('auto': the one that fits the model's speed)")
    autonomy: Autonomy = Field(Autonomy.APPROVE, description="When to ask")
    step_budget: int = Field(20, ge=1, le=200)
    sensitive_needs_approval: bool = Field(True, description="Always ask before sending, paying, deleting…")
    constrained_replies: bool = Field(
        True, description="Structured replies (a JSON schema built per screen) when the model server enforces them")
    screen_evidence: bool = Field(
        True, title="Use the screen's evidence",
        description="Act on clear screen evidence without asking the model (the element the goal names, the text "
        "it gives for a field, a switch or setting already showing the asked state, a dialog's OK just pressed); "
        "off: the model decides every step")
    explore_automatically: bool = Field(
        True, title="Explore apps automatically",
        description="Map every app that has no map in the phone's language (or an outdated one) while no task "
        "runs: on the virtual phone on a second, hidden one; on a real phone only after you agree, once per phone")


class DeviceSettings(BaseModel):
    default: str = Field("auto", description="'auto' (a phone if connected, else the virtual phone), 'sim' or a serial")
    adb_path: str = Field("", description="adb binary (empty: adbutils' choice)")
    mirror_max_fps: int = Field(30, ge=1, le=120)
    command_timeout_s: float = Field(15.0, gt=0)
    virtual_phone: Literal["process", "window"] = Field(
        "process", description="Serve the virtual phone in its own process, reached through adb like a real "
        "phone ('window': inside the window's process, also used when adb is missing)")


class RecordSettings(BaseModel):
    """The record of a run, taken from the mirror's stream (``phone.record``)."""

    flashes: bool = Field(True, title="Catch what flashes on the screen",
                          description="After each action, look at the mirror's frames for toasts, snackbars and "
                          "short dialogs; keep them in the step and tell the model")
    video: bool = Field(True, title="Record a video of every run",
                        description="Write the mirror's stream to an MP4 beside the database, with the steps "
                        "marked (phones streamed over scrcpy only)")
    max_video_mb: int = Field(500, ge=1, le=100_000, title="Longest video (MB)",
                              description="A recording stops at this size; the run goes on without video")


class PrivacySettings(BaseModel):
    """What may leave the machine when the model server is elsewhere (``agent.privacy``)."""

    redact_remote: bool = Field(
        True, title="Redact requests to remote servers",
        description="Replace phone numbers, e-mail addresses and long digit runs with placeholders in every "
        "request to a model server that is not on this machine, and ask before a run's first request")
    redact_contact_names: bool = Field(
        False, title="Redact contact names too", description="Also replace the names the phone's contacts hold")
    min_digits: int = Field(6, ge=3, le=20, title="Digit runs from (digits)",
                            description="A run of this many digits or more is replaced (account numbers, codes)")
    treat_as_remote: bool = Field(
        False, title="Treat the model server as remote",
        description="Redact and ask even when the server runs on this machine (to see what would be sent)")


class EscalationSettings(BaseModel):
    """The bigger model one step can go to (``agent.planners.escalate``)."""

    model: str = Field("", title="Bigger model", description="Its name on its server (empty: no escalation)")
    backend: Literal["ollama", "openai"] = Field("openai", description="Ollama, or any OpenAI-compatible server")
    base_url: str = Field("", title="Server URL", description="Its server (empty: the same server as the run's model)")
    below_confidence: float = Field(
        0.6, ge=0, le=1, title="Escalate below confidence",
        description="A step whose named confidence is below this goes to the bigger model")
    after_rejections: int = Field(2, ge=1, le=10, title="Escalate after rejections",
                                  description="Rejections on one screen after which the step goes to the bigger model")


class OverlaySettings(BaseModel):
    """Which overlay layers the mirror draws (the Layers tab's check boxes, kept across
    restarts).  One field per layer, named as ``widgets.overlays.Layer`` names it."""

    blocks: bool = Field(True, title="Semantic blocks", description="Draw the semantic blocks")
    widgets: bool = Field(True, title="Widgets by class", description="Draw the widgets, coloured by class")
    accessibility: bool = Field(False, title="Accessibility tree", description="Draw the accessibility tree's nodes")
    ocr_text: bool = Field(False, title="OCR text", description="Draw the text OCR found")
    icon_labels: bool = Field(True, title="Icon labels", description="Draw the icons' labels")
    marks: bool = Field(False, title="Set-of-marks ids", description="Draw the element ids the model sees")
    disagreements: bool = Field(True, title="Vision vs tree disagreements", description="Draw where the tree and the pixels disagree")
    kind_tags: bool = Field(False, title="Kind words on the boxes",
                            description="Write each box's kind (button, image, list …) on the mirror")


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
    overlay: OverlaySettings = Field(default_factory=OverlaySettings)
    record: RecordSettings = Field(default_factory=RecordSettings)
    privacy: PrivacySettings = Field(default_factory=PrivacySettings)
    escalation: EscalationSettings = Field(default_factory=EscalationSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Explicit arguments win over the environment, which wins over the file.
        return (init_settings, env_settings, _SettingsFile(settings_cls))

    @property
    def database_path(self) -> Path:
        return self.data_dir / "tapwise.sqlite"

    def to_pipeline_config(self, *, mode: str | None = None) -> PipelineConfig:
        """The screen parser's configuration for these settings (``mode`` overrides the
        hierarchy setting with one of the pipeline's modes: auto, tree, vision, fusion)."""
        from vision.config import PipelineConfig

        v = self.vision
        return PipelineConfig(
            mode=mode or _PARSE_MODE[v.use_hierarchy],  # type: ignore[arg-type]
            detector=_DETECTOR.get(v.detector, v.detector),  # type: ignore[arg-type]
            ocr=_OCR.get(v.ocr, v.ocr),  # type: ignore[arg-type]
            icons=_ICONS.get(v.icons, v.icons),  # type: ignore[arg-type]
            ocr_min_confidence=v.ocr_min_confidence,
        )


class _SettingsFile(JsonConfigSettingsSource):
    """The settings file as a pydantic-settings source.  A file that cannot be used
    contributes nothing (``load_settings`` says why); a missing file is no problem."""

    def __init__(self, settings_cls: type[BaseSettings]) -> None:
        path = settings_path()
        usable = path.is_file() and file_problem(path) is None
        super().__init__(settings_cls, json_file=path if usable else None, json_file_encoding="utf-8")


class SettingsProblem(RuntimeError):
    pass


def settings_path() -> Path:
    return config_dir() / "settings.json"


def file_problem(path: Path) -> str | None:
    """Why the settings file at ``path`` cannot be used (None: it can, or it is absent)."""
    if not path.exists():
        return None
    where = ""
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(values, dict):
            raise ValueError("the top level is not a JSON object")
        for name, value in values.items():  # the file alone, for a message naming the field
            section = Settings.model_fields.get(name)
            if section is not None and section.annotation is not None:
                where = name
                TypeAdapter(section.annotation).validate_python(value)
    except (OSError, UnicodeDecodeError, ValueError, ValidationError) as exc:
        detail = exc.errors()[0] if isinstance(exc, ValidationError) else None
        where = (".".join((where, *(str(p) for p in detail["loc"]))) + ": " + detail["msg"]) if detail else str(exc)
        return (
            f"settings file {path} could not be read ({where}); using defaults. "
            "The file was not changed; fix it or delete it."
        )
    return None


def load_settings() -> tuple[Settings, str | None]:
    """Settings from the file (if usable) with environment overrides.

    Returns ``(settings, problem)``; ``problem`` is a message when the file could not be
    used (defaults were used instead and the file was left as it was).
    """
    problem = file_problem(settings_path())
    if problem:
        log.warning(problem)
    return Settings(), problem


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


def resolve_llm(*, model: str = "", base_url: str = "", backend: str = "") -> dict[str, str]:
    """Model, server and backend from command-line options, falling back to the user's
    settings (``llamacpp`` is the OpenAI-compatible backend; a bare URL's backend is guessed)."""
    from agent.llm import guess_backend

    settings, problem = load_settings()
    if problem:
        log.warning("%s", problem)
    llm = settings.llm
    if backend and backend not in ("ollama", "openai", "llamacpp"):
        raise ValueError(f"unknown backend {backend!r}: use 'ollama' or 'openai'")
    if backend == "llamacpp":
        backend = "openai"
    if not backend:
        backend = guess_backend(base_url) if base_url else llm.backend
    if not base_url:
        base_url = llm.ollama_host if backend == "ollama" else llm.openai_base_url
    return {"model": model or llm.model, "base_url": base_url, "backend": backend}
