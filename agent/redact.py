"""Credentials never leave in text: ``redact_url`` hides the user/password part of URLs
(``https://user:KEY@host``) and secret query parameters (``?api_key=KEY``).

Used wherever a server address or an error mentioning one is printed or stored;
``RedactingFilter`` does the same for log records.  Pure string work; no I/O.
"""

from __future__ import annotations

import logging
import re

_CREDENTIALS = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<cred>[^/\s@]*)@")
_SECRET_QUERY = re.compile(
    r"(?P<key>[?&](?:api[_-]?key|key|token|access[_-]?token|secret|password|auth)=)[^&\s#\"']+", re.I)


def redact_url(text: str) -> str:
    """``text`` with credentials in URLs replaced by ``***`` (everything else unchanged)."""
    if "://" not in text and "=" not in text:
        return text
    text = _CREDENTIALS.sub(lambda m: f"{m.group('scheme')}***@", text)
    return _SECRET_QUERY.sub(lambda m: f"{m.group('key')}***", text)


class RedactingFilter(logging.Filter):
    """A logging filter that removes credentials in URLs from every record it passes
    (attach it to a handler: ``handler.addFilter(RedactingFilter())``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact_url(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_text:
            record.exc_text = redact_url(record.exc_text)
        return True
