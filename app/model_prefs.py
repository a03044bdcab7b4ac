"""The model manager's Qt-free side: which models exist (Ollama's and the built-in ones),
pulling an Ollama model with progress, and per-model preferences.

``ModelManager.list_models()`` asks Ollama (through the ``ollama`` library) and the
bundled catalog, and says which GUI-model adapter each name would get; an unreachable
Ollama is a problem line, not an exception.  ``pull`` streams Ollama's progress to a
callback and can be cancelled between progress reports.  ``PrefsStore`` keeps context
length, temperature, image size and an adapter override per model in one JSON file
(a broken file is set aside, never lost).  No Qt, no threads: callers run these on a
worker.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelInfo:
    name: str
    source: str  # "ollama" | "builtin"
    adapter: str = ""  # the GUI-model adapter the name selects ("" = generic planners)
    size_bytes: int = 0
    note: str = ""


@dataclass(frozen=True)
class ModelListing:
    models: tuple[ModelInfo, ...] = ()
    problems: tuple[str, ...] = ()
    ollama_reachable: bool = False


@dataclass(frozen=True)
class PullProgress:
    """One report from a pull: Ollama's status line and, while downloading, bytes."""

    status: str
    completed: int = 0
    total: int = 0

    @property
    def fraction(self) -> float | None:
        return self.completed / self.total if self.total else None


class PullError(RuntimeError):
    """A pull failed or was cancelled; the message says which and what to do."""


def _adapter_name(model: str) -> str:
    from agent.llm.adapters import adapter_for

    a = adapter_for(model)
    return a.name if a else ""


@dataclass
class ModelManager:
    ollama_host: str = "http://127.0.0.1:11434"
    timeout_s: float = 3.0

    @classmethod
    def from_settings(cls, ollama_host: str | None = None) -> ModelManager:
        from app.settings import load_settings

        settings, _ = load_settings()
        return cls(ollama_host or settings.llm.ollama_host)

    def _client(self, timeout_s: float | None = None):  # type: ignore[no-untyped-def]
        import ollama

        return ollama.Client(host=self.ollama_host, timeout=timeout_s or self.timeout_s)

    def ollama_models(self) -> tuple[list[ModelInfo], str]:
        """Ollama's models, or [] and why not."""
        try:
            listing = self._client().list()
        except Exception as exc:  # the ollama library raises httpx/ConnectionError/ResponseError
            return [], f"Ollama is not reachable at {self.ollama_host} ({type(exc).__name__}: {exc})"
        out = []
        for m in listing.models:
            name = str(m.model or "")
            details = getattr(m, "details", None)
            note = " ".join(str(x) for x in (getattr(details, "parameter_size", ""), getattr(details, "quantization_level", "")) if x)
            out.append(ModelInfo(name, "ollama", _adapter_name(name), int(m.size or 0), note))
        return out, ""

    def builtin_models(self) -> list[ModelInfo]:
        from app.builtin_model.catalog import DEFAULT_ALIAS, MODELS, is_installed

        out = []
        for m in MODELS:
            if is_installed(m):
                note = "built-in, small demo-grade model" + (" (default)" if m.alias == DEFAULT_ALIAS else "")
                out.append(ModelInfo(m.alias, "builtin", "", m.size, note))
        return out

    def list_models(self) -> ModelListing:
        ollama, problem = self.ollama_models()
        return ModelListing(tuple(ollama + self.builtin_models()), (problem,) if problem else (), not problem)

    def pull(self, name: str, progress: Callable[[PullProgress], None] | None = None,
             cancel: threading.Event | None = None) -> None:
        """Pull ``name`` into Ollama, reporting progress; raises ``PullError``."""
        if not name.strip():
            raise PullError("name a model to pull, e.g. qwen3-vl:4b")
        try:
            stream = self._client(timeout_s=None).pull(name.strip(), stream=True)
            for part in stream:
                if cancel is not None and cancel.is_set():
                    raise PullError(f"pull of {name} cancelled; run it again to resume")
                report = PullProgress(str(part.status or ""), int(part.completed or 0), int(part.total or 0))
                if progress:
                    progress(report)
        except PullError:
            raise
        except Exception as exc:
            raise PullError(f"could not pull {name} from Ollama at {self.ollama_host}: {exc}") from exc


# ---- per-model preferences ---------------------------------------------------------------


@dataclass(frozen=True)
class ModelPrefs:
    """Settings that belong to one model; zero/empty means "the model's default"."""

    context_length: int = 0
    temperature: float = 0.0
    image_max_side: int = 0  # longest side of the screenshot sent to a vision model; 0: as the adapter says
    adapter: str = ""  # "" = chosen from the name; a family name, or "none" for the generic planners
    #: Measured seconds per model call on this machine (``tapwise model check``, or the
    #: window's runs); 0: not measured yet.  Chooses the ``auto`` planner.
    seconds_per_call: float = 0.0
    #: Latent-state estimates under the ``auto`` planner: "" as the model's speed says,
    #: "on" (estimated, in one fused call when the model is slow) or "off".
    latent: str = ""

    def __post_init__(self) -> None:
        if self.context_length < 0 or self.image_max_side < 0 or self.seconds_per_call < 0:
            raise ValueError("context length and image size must be positive (or 0 for the default)")
        if self.latent not in LATENT_CHOICES:
            raise ValueError(f"latent must be one of {LATENT_CHOICES}, got {self.latent!r}")
        if not 0.0 <= self.temperature <= 2.0:
            raise ValueError("temperature must be between 0 and 2")
        if self.adapter and self.adapter != "none":
            from agent.llm.adapters import adapter_by_name

            adapter_by_name(self.adapter.removesuffix(":text"))  # raises with the list of families


@dataclass
class PrefsStore:
    """``{model name: ModelPrefs}`` in one JSON file."""

    path: Path
    _prefs: dict[str, ModelPrefs] = field(default_factory=dict)
    problem: str = ""

    @classmethod
    def default(cls) -> PrefsStore:
        from app.settings import config_dir

        return cls.load(config_dir() / "models.json")

    @classmethod
    def load(cls, path: Path) -> PrefsStore:
        store = cls(path)
        if not path.exists():
            return store
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            store._prefs = {str(k): ModelPrefs(**v) for k, v in dict(raw).items()}
        except (ValueError, TypeError, OSError) as exc:
            kept = path.with_name(f"{path.name}.broken-{int(time.time())}")
            try:
                path.replace(kept)
            except OSError:
                kept = path
            store.problem = f"{path} could not be read ({exc}); it was kept as {kept.name} and defaults are used"
            log.warning("%s", store.problem)
        return store

    def get(self, model: str) -> ModelPrefs:
        return self._prefs.get(model, ModelPrefs())

    def set(self, model: str, **changes: object) -> ModelPrefs:
        prefs = replace(self.get(model), **changes)  # type: ignore[arg-type]
        self._prefs[model] = prefs
        self.save()
        return prefs

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps({k: asdict(v) for k, v in sorted(self._prefs.items())}, indent=1), encoding="utf-8")
        tmp.replace(self.path)

    def planner_for(self, model: str, default: str) -> str:
        """The planner name a run should use for ``model``: the adapter override if set;
        ``auto`` becomes the planner that fits the model's measured speed, or the one the
        user chose for it (``latent``: with or without latent-state estimates)."""
        prefs = self.get(model)
        a = prefs.adapter
        if a and a != "none":
            return f"adapter:{a}"
        if default == "auto":
            from agent.planners.registry import auto_planner

            if prefs.latent:  # the user's choice for this model beats its speed
                return auto_planner(0.0 if prefs.latent == "on" else float("inf"))
            return auto_planner(self.speed(model))
        return default

    def speed(self, model: str) -> float | None:
        """Seconds per call for ``model``: measured, else the built-in models' known speed
        on a small CPU, else None (unknown)."""
        measured = self.get(model).seconds_per_call
        if measured > 0:
            return measured
        return BUILTIN_SECONDS_PER_CALL if is_builtin(model) else None

    def record_speed(self, model: str, seconds_per_call: float) -> None:
        """Keep a new measure (a running mean with the last one, so one odd run does not rule)."""
        if not model or seconds_per_call <= 0:
            return
        old = self.get(model).seconds_per_call
        self.set(model, seconds_per_call=round(seconds_per_call if old <= 0 else (old + seconds_per_call) / 2, 2))


#: What ``ModelPrefs.latent`` may say.
LATENT_CHOICES = ("", "on", "off")

#: Seconds per call of a built-in model before it was measured here (Qwen2.5-Coder-0.5B on
#: two CPU cores: 11-25 s per call with zero-shot+'s prompts).
BUILTIN_SECONDS_PER_CALL = 15.0


def is_builtin(model: str) -> bool:
    """True when ``model`` names one of the built-in (bundled) models."""
    try:
        from app.builtin_model.catalog import MODELS
    except ImportError:  # the catalog is part of the app; a trimmed install lacks nothing else
        return False
    return model.strip().lower() in {m.alias for m in MODELS}
