"""``SecretTypingDevice``: the one place a secret's value meets the phone.

It wraps any ``agent.device.Device``; typing a text that holds ``{{secret:NAME}}`` types
the value the ``SecretSource`` (the vault) keeps for NAME instead.  Every other call goes
to the wrapped device unchanged.  The value is never logged, never kept after the call,
and never leaves in an error: an error raised while typing it has the value replaced by
its reference (a device error message may quote the typed text), and its cause chain is
dropped.  A missing secret is a ``DeviceError`` naming the secret and how to add it.
"""

from __future__ import annotations

import logging
from typing import Any

from agent.device import Device, DeviceError, DeviceGone
from agent.secrets.refs import SecretMissing, SecretSource, names_in, reference, resolve

log = logging.getLogger(__name__)


class SecretTypingDevice:
    """A ``Device`` that types secrets by reference (see the module docstring)."""

    def __init__(self, device: Device, source: SecretSource) -> None:
        self._device = device
        self._source = source

    @property
    def wrapped(self) -> Device:
        return self._device

    def __getattr__(self, name: str) -> Any:  # everything but typing goes through unchanged
        return getattr(self._device, name)

    def input_text(self, text: str) -> None:
        names = names_in(text)
        if not names:
            self._device.input_text(text)
            return
        values: list[str] = []

        def lookup(name: str) -> str:
            try:
                value = self._source.value(name)
            except SecretMissing:
                raise
            except Exception as exc:  # the vault's own trouble (locked, damaged): its words hold no value
                raise DeviceError(f"the vault could not give {reference(name)}: {exc}") from None
            values.append(value)
            return value

        try:
            typed = resolve(text, lookup)
        except SecretMissing as exc:
            raise DeviceError(str(exc)) from None
        log.info("typing %s (value from the vault)", ", ".join(reference(n) for n in names))
        try:
            self._device.input_text(typed)
        except DeviceGone as exc:
            raise DeviceGone(_scrub(exc.message, values), _scrub(exc.hint, values)) from None
        except DeviceError as exc:
            raise DeviceError(_scrub(exc.message, values), _scrub(exc.hint, values)) from None
        except Exception as exc:  # anything else: its words may quote the value, so none are kept
            raise DeviceError(f"typing {text} failed ({type(exc).__name__})") from None
        finally:
            values.clear()


def _scrub(message: str, values: list[str]) -> str:
    """``message`` with each secret's value replaced by ``{{secret}}``."""
    for value in sorted(values, key=len, reverse=True):
        if value and message:
            message = message.replace(value, "{{secret}}")
    return message


def with_secrets(device: Device, source: SecretSource | None) -> Device:
    """``device`` typing secrets from ``source`` (unchanged without a source, or when it already does)."""
    if source is None or isinstance(device, SecretTypingDevice):
        return device
    return SecretTypingDevice(device, source)  # type: ignore[return-value]
