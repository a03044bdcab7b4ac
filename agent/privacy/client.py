"""``RedactingClient``: an ``LLMClient`` for a model server that is not on this machine.

Every request goes through the run's ``Redactor`` (system prompt, prompt and reply form),
and the reply has the placeholders put back before anyone reads it.  The first request
of the client's life (one client per run) waits for the user's consent, showing exactly
what would be sent; a "no" is kept for the run and every request then fails with
``ConsentRefused`` (an ``LLMError``); the run's ``CancelToken``, when the request carries
one, is cancelled, so the run stops there (without one it ends on the usual error rule).  Each ``LLMCall`` the run stores keeps the prompt as
sent (placeholders, not values) and says what was replaced (``LLMCall.redacted``).

``is_remote`` decides which servers need this: any host that is not a loopback address
or ``localhost``.  No I/O of its own: the wrapped client does the talking.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import threading
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from agent.llm.base import CancelToken, ChatRequest, LLMClient, LLMError, LLMReply
from agent.privacy.consent import Consent
from agent.privacy.redactor import Redactor
from agent.privacy.types import ConsentKind, ConsentQuestion, Replaced
from agent.types import LLMCall

log = logging.getLogger(__name__)


class ConsentRefused(LLMError):
    """The user did not allow requests to this server for this run."""


def is_remote(base_url: str) -> bool:
    """True when ``base_url``'s host is not this machine (a loopback address or ``localhost``)."""
    host = urlsplit(base_url if "://" in base_url else f"http://{base_url}").hostname or ""
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: it may resolve anywhere
        return True


def sent_text(request: ChatRequest) -> str:
    """What a request sends, as the consent dialog shows it: system prompt, prompt, reply form."""
    parts = []
    if request.system:
        parts.append(f"[system]\n{request.system}")
    parts.append(f"[user]\n{request.prompt}")
    if isinstance(request.json_schema, dict):
        parts.append("[reply form (JSON schema)]\n" + json.dumps(request.json_schema, ensure_ascii=False, indent=1))
    if request.images:
        parts.append(f"[{len(request.images)} screenshot(s) attached: pictures are not redacted]")
    return "\n\n".join(parts)


class RedactingClient:
    """See the module docstring.  ``wrapped`` is the client that talks to the server."""

    def __init__(self, wrapped: LLMClient, redactor: Redactor, consent: Consent, *, server: str, goal: str = "") -> None:
        self.wrapped = wrapped
        self.redactor = redactor
        self.consent = consent
        self.server = server
        self.goal = goal
        self._decided: bool | None = None
        self._lock = threading.Lock()
        self.replaced: dict[str, Replaced] = {}  # everything replaced in this run, by placeholder

    @property
    def model(self) -> str:  # type: ignore[override]
        return self.wrapped.model

    @model.setter
    def model(self, value: str) -> None:
        self.wrapped.model = value

    def list_models(self) -> list[str]:
        return self.wrapped.list_models()

    def close(self) -> None:
        close = getattr(self.wrapped, "close", None)
        if close is not None:
            close()

    def redact(self, request: ChatRequest) -> tuple[ChatRequest, tuple[Replaced, ...]]:
        """The request as it would be sent, and what was replaced in it."""
        prompt, a = self.redactor.redact(request.prompt)
        system, b = self.redactor.redact(request.system)
        schema: Any = request.json_schema
        c: tuple[Replaced, ...] = ()
        if isinstance(schema, dict):
            schema, c = self.redactor.redact_data(schema)
        found = {r.placeholder: r for r in (*a, *b, *c)}
        on_text = request.on_text
        if on_text is not None:
            listener = on_text
            on_text = lambda text: listener(self.redactor.restore(text))  # noqa: E731
        return replace(request, prompt=prompt, system=system, json_schema=schema, on_text=on_text), tuple(found.values())

    def _allowed(self, sent: ChatRequest, replaced: tuple[Replaced, ...]) -> bool:
        with self._lock:
            if self._decided is None:
                question = ConsentQuestion(ConsentKind.SEND, self.wrapped.model, self.server, self.goal,
                                           reason="the model server is not on this machine", sent=sent_text(sent),
                                           replaced=replaced, images=len(sent.images), remote=True)
                self._decided = self.consent.permit(question)
                log.info("requests to %s this run: %s", self.server, "allowed" if self._decided else "refused")
            return self._decided

    def chat(self, request: ChatRequest, cancel: CancelToken | None = None) -> LLMReply:
        sent, replaced = self.redact(request)
        if not self._allowed(sent, replaced):
            if cancel is not None:  # the run stops here: nothing more of it may go out
                cancel.cancel()
            raise ConsentRefused(f"you did not allow sending this run's requests to {self.server}",
                                 hint="start the run again to be asked again, or use a model on this machine")
        for r in replaced:
            self.replaced.setdefault(r.placeholder, r)
        note = tuple(f"{r.placeholder} {r.kind}" for r in replaced)
        try:
            reply = self.wrapped.chat(sent, cancel)
        except LLMError as exc:
            exc.calls = tuple(_noted(c, note) for c in exc.calls)
            raise
        text = self.redactor.restore(reply.text)
        data = self.redactor.restore_data(reply.data)
        return LLMReply(text, _noted(reply.call, note), data, tuple(_noted(c, note) for c in reply.failed_attempts))


def _noted(call: LLMCall, note: tuple[str, ...]) -> LLMCall:
    """The call as stored: the prompt as sent, and what was replaced in it."""
    return replace(call, redacted=note) if note else call
