"""Secrets the model never sees: ``{{secret:NAME}}`` references (``refs``) and the device
wrapper that types their values (``device``).  The vault that keeps the values is the
application's (``app.vault``); this package holds no values."""

from __future__ import annotations

from agent.secrets.device import SecretTypingDevice, with_secrets
from agent.secrets.refs import (
    REFERENCE,
    MappingSource,
    SecretMissing,
    SecretSource,
    check_name,
    names_in,
    normalise,
    reference,
    resolve,
)

__all__ = ["REFERENCE", "MappingSource", "SecretMissing", "SecretSource", "SecretTypingDevice", "check_name", "names_in",
           "normalise", "reference", "resolve", "with_secrets"]
