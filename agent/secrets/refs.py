"""Secret references: ``{{secret:NAME}}`` in a goal, a macro step or a typed text.

A reference is all the model, the store and the exports ever see of a secret; its value
is looked up only by the device layer when it types (``agent.secrets.device``).  This
module parses and checks references and defines what a value source is; it holds no
values and does no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable

#: A secret's name: a letter, then letters, digits, ``_``, ``.`` or ``-`` (64 characters at most).
NAME_PATTERN = r"[A-Za-z][A-Za-z0-9_.-]{0,63}"
_NAME = re.compile(rf"^{NAME_PATTERN}$")
#: ``{{secret:NAME}}``, spaces inside the braces tolerated (small models add them).
REFERENCE = re.compile(r"\{\{\s*secret\s*:\s*(" + NAME_PATTERN + r")\s*\}\}")


class SecretMissing(LookupError):
    """No secret of that name is kept; the message says how to add one."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no secret named {name!r} is kept: add it with `tapwise secrets set {name}` "
                         "or the window's Secrets… dialog")
        self.name = name


@runtime_checkable
class SecretSource(Protocol):
    """Where values come from (the vault): ``value`` raises ``SecretMissing`` for an unknown name."""

    def value(self, name: str) -> str: ...


class MappingSource:
    """Values from a mapping (a virtual-phone task's own ``secrets``, tests): a ``SecretSource``."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)

    def value(self, name: str) -> str:
        if name not in self._values:
            raise SecretMissing(name)
        return self._values[name]


def check_name(name: str) -> str:
    """``name`` stripped, or ``ValueError`` saying what a secret's name may hold."""
    name = name.strip()
    if not _NAME.match(name):
        raise ValueError(f"{name!r} is not a secret name: start with a letter, then letters, digits, "
                         "'_', '.' or '-' (64 characters at most)")
    return name


def reference(name: str) -> str:
    """The reference to the secret ``name`` (``{{secret:NAME}}``)."""
    return "{{secret:" + check_name(name) + "}}"


def names_in(text: str | None) -> tuple[str, ...]:
    """The names of the secrets ``text`` refers to, in order, each once."""
    if not text or "{{" not in text:
        return ()
    return tuple(dict.fromkeys(m.group(1) for m in REFERENCE.finditer(text)))


def resolve(text: str, lookup: Callable[[str], str]) -> str:
    """``text`` with every reference replaced by ``lookup(name)`` (``SecretMissing`` propagates)."""
    return REFERENCE.sub(lambda m: lookup(m.group(1)), text)


def normalise(text: str) -> str:
    """``text`` with each reference written the canonical way (``{{secret:NAME}}``)."""
    return REFERENCE.sub(lambda m: "{{secret:" + m.group(1) + "}}", text)
