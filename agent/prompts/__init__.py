"""The agent's prompt templates, shipped as package data (``*.txt`` beside this file).

Templates use ``$name`` placeholders (``string.Template``) so that JSON braces in them
need no escaping.  ``render`` fails loudly on a missing value; every rendered prompt is
kept in the step's ``LLMCall`` records, which is how the user sees it.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template


@cache
def template(name: str) -> Template:
    try:
        text = resources.files(__package__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KeyError(f"no prompt template {name!r} in {__package__}") from None
    return Template(text)


def render(name: str, **values: object) -> str:
    try:
        return template(name).substitute({k: "" if v is None else str(v) for k, v in values.items()})
    except KeyError as exc:
        raise KeyError(f"prompt {name!r} needs a value for {exc.args[0]!r}") from None


def names() -> list[str]:
    return sorted(p.name[:-4] for p in resources.files(__package__).iterdir() if p.name.endswith(".txt"))
