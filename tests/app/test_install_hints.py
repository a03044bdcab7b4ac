"""Every install hint the app gives names an extra that exists and that the README lists,
and the built-in model's hints name the README's ``builtin`` extra (``llamacpp`` is the
SmolLM2 test model's, and a hint that names it says so)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from app import doctor

ROOT = Path(__file__).resolve().parents[2]
HINT = re.compile(r"tapwise\[([a-z0-9_-]+)\]")


def _readme_extras() -> set[str]:
    rows = re.findall(r"^\| `([a-z0-9_-]+)` \|", (ROOT / "README.md").read_text(encoding="utf-8"), re.M)
    return set(rows)


def _declared_extras() -> set[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(data["project"]["optional-dependencies"])


def _hints_in_the_app() -> list[tuple[str, str]]:
    found = []
    for folder in ("app", "widgets"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for extra in HINT.findall(path.read_text(encoding="utf-8")):
                found.append((str(path.relative_to(ROOT)), extra))
    return found


def test_every_extra_a_hint_names_is_declared_and_in_the_readme():
    readme, declared = _readme_extras(), _declared_extras()
    hints = _hints_in_the_app()
    assert hints, "no install hints found: the pattern is out of date"
    assert [(where, extra) for where, extra in hints if extra not in declared or extra not in readme] == []


def test_the_built_in_model_is_installed_with_the_readmes_builtin_extra():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(r"^\| `builtin` \| the built-in default model", readme, re.M)
    extra, fix = doctor.EXTRAS["llama_cpp"]
    assert extra == "builtin" and HINT.findall(fix)[0] == "builtin"


def test_a_hint_naming_llamacpp_says_it_is_the_smollm2_model():
    for _module, (_extra, fix) in doctor.EXTRAS.items():
        if "tapwise[llamacpp]" in fix:
            assert "SmolLM2" in fix, fix


def test_the_servers_missing_extra_message_names_builtin(monkeypatch: pytest.MonkeyPatch):
    import importlib.util

    from app.builtin_model import server

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: None)
    message = server.missing_server_extra()
    assert message and HINT.findall(message) == ["builtin"]
