"""The LLM client contract: requests, replies, errors, cancellation and retries.

``LLMClient`` is the protocol every backend implements (``OllamaClient``,
``OpenAIClient``, test doubles).  ``RetryingClient`` holds the behaviour the backends
share: a timeout per attempt that bounds the whole reply (a reply trickled in pieces
cannot outlast it), streaming of the reply so far to whoever listens on the request's
``CancelToken``, retries with exponential backoff on transport errors,
timeouts, empty replies and unparseable JSON, cancellation through a ``CancelToken``,
and one ``LLMCall`` record per attempt.  Backends only implement ``_send``.
This module does no prompting and knows nothing about phones.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from agent.types import LLMCall
from vision.errors import HintedError

log = logging.getLogger(__name__)


class LLMError(HintedError):
    """An LLM request failed for good; ``calls`` records every attempt that was made."""

    def __init__(self, message: str, calls: tuple[LLMCall, ...] = (), hint: str = "") -> None:
        super().__init__(message, hint)
        self.calls = calls


class Cancelled(LLMError):
    """The request was cancelled through its ``CancelToken``."""


class Interrupted(Cancelled):
    """The call was abandoned through ``CancelToken.interrupt`` (a pause); the run goes on."""


class TransientError(RuntimeError):
    """Raised by a backend's ``_send`` for failures worth retrying."""


class CancelToken:
    """A run's line into its model calls: set it to abandon in-flight and future requests;
    ``listen`` to hear each reply's text as it streams in (the text so far, on the
    request's thread: a listener must be quick and thread-safe)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._interrupt = threading.Event()
        self._listeners: list[Callable[[str], None]] = []

    def interrupt(self) -> None:
        """Abandon the call in progress (and any started before ``resume``) without ending
        the run: the run pauses and starts the step again (``Interrupted``)."""
        self._interrupt.set()

    def resume(self) -> None:
        self._interrupt.clear()

    @property
    def interrupted(self) -> bool:
        return self._interrupt.is_set()

    def listen(self, listener: Callable[[str], None]) -> None:
        self._listeners.append(listener)

    @property
    def listened(self) -> bool:
        return bool(self._listeners)

    def heard(self, text: str) -> None:
        """A streaming backend reports the reply so far."""
        for listener in list(self._listeners):
            try:
                listener(text)
            except Exception:  # a listener's trouble never fails the request
                log.debug("stream listener failed", exc_info=True)

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True if cancelled meanwhile."""
        return self._event.wait(seconds)


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One prompt to a model.  ``json_schema`` asks for JSON: ``True`` for any JSON object,
    a JSON schema (dict) for a reply the server must keep to, when it can (see
    ``accepts_schema``); the reply is checked for JSON either way."""

    prompt: str
    purpose: str = "chat"
    system: str = ""
    temperature: float = 0.0
    json_schema: bool | dict[str, Any] = False
    images: tuple[bytes, ...] = ()
    max_tokens: int | None = 512
    stop: tuple[str, ...] = ()
    seed: int | None = None
    #: Stream the reply: called with the text so far as it arrives (set by the client from
    #: the request's ``CancelToken`` when someone listens there).
    on_text: Callable[[str], None] | None = field(default=None, compare=False, repr=False)

    def messages(self, user: dict[str, Any]) -> list[dict[str, Any]]:
        """The chat's messages for a server: the system prompt (when there is one), then ``user``."""
        return ([{"role": "system", "content": self.system}] if self.system else []) + [user]

    def sampling(self, max_tokens_key: str) -> dict[str, Any]:
        """The sampling settings that are set, by the names both server APIs use (only the
        token limit's name differs between them: ``max_tokens_key``)."""
        out: dict[str, Any] = {"temperature": self.temperature}
        if self.max_tokens:
            out[max_tokens_key] = self.max_tokens
        if self.stop:
            out["stop"] = list(self.stop)
        if self.seed is not None:
            out["seed"] = self.seed
        return out


@dataclass(frozen=True, slots=True)
class LLMReply:
    """The text of a successful reply, its parsed JSON (if asked) and the accounting."""

    text: str
    call: LLMCall
    data: Any = None
    failed_attempts: tuple[LLMCall, ...] = ()

    @property
    def calls(self) -> tuple[LLMCall, ...]:
        return (*self.failed_attempts, self.call)


@runtime_checkable
class LLMClient(Protocol):
    """What planners and estimators need from a model server."""

    model: str

    def chat(self, request: ChatRequest, cancel: CancelToken | None = None) -> LLMReply: ...

    def list_models(self) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard to try: attempts in total, first backoff and its growth, per-attempt timeout."""

    attempts: int = 3
    backoff_s: float = 0.5
    backoff_factor: float = 2.0
    max_backoff_s: float = 8.0
    timeout_s: float = 120.0

    def delay(self, attempt: int) -> float:
        return min(self.max_backoff_s, self.backoff_s * self.backoff_factor ** max(0, attempt - 1))


@dataclass(frozen=True, slots=True)
class RawReply:
    """What a backend got back: text and token counts (None when the server does not say)."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def accepts_schema(client: object) -> bool:
    """True when ``client`` passes a request's JSON schema to a server that enforces it.

    Only the project's own backends say so; other clients and adapters get free-text
    prompts and the free-text parsers.  A client that wraps another (``wrapped``: the
    redacting client for remote servers) passes the schema on, so it answers for that one.
    """
    if isinstance(client, RetryingClient):
        return client.schemas
    inner = getattr(client, "wrapped", None)
    return inner is not None and inner is not client and accepts_schema(inner)


def parse_json_reply(text: str) -> Any:
    """The JSON object in a reply, tolerating code fences and chatter around it.

    Raises ``ValueError`` when no JSON object can be found.
    """
    s = text.strip()
    if s.startswith("```"):
        s = s.strip("`")
        if s[:4].lower() == "json":
            s = s[4:]
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                obj, _ = decoder.raw_decode(text[i:])
                return obj
            except json.JSONDecodeError:
                continue
    raise ValueError(f"no JSON object in reply: {text[:80]!r}")


class ReplyCache:
    """Replies by the request that got them, for deterministic requests only (temperature 0,
    no images): the model, system text, prompt, schema, token limit, stops and seed make the
    key; what the request is for does not.  Thread-safe; kept in memory."""

    def __init__(self) -> None:
        self._replies: dict[str, LLMReply] = {}
        self._lock = threading.Lock()
        self.hits = 0

    @staticmethod
    def _key(model: str, r: ChatRequest) -> str | None:
        if r.temperature != 0.0 or r.images:
            return None
        body = json.dumps([model, r.system, r.prompt, r.json_schema, r.max_tokens, list(r.stop), r.seed],
                          sort_keys=True, default=str)
        return hashlib.sha256(body.encode("utf-8")).hexdigest()

    def get(self, model: str, request: ChatRequest) -> LLMReply | None:
        key = self._key(model, request)
        with self._lock:
            reply = self._replies.get(key) if key is not None else None
            self.hits += reply is not None
        return reply

    def put(self, model: str, request: ChatRequest, reply: LLMReply) -> None:
        key = self._key(model, request)
        if key is not None:
            with self._lock:
                self._replies[key] = reply


@dataclass
class RetryingClient:
    """Shared retry/timeout/cancel/accounting logic; subclasses implement ``_send``."""

    model: str
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Callable[[float], None] | None = None  # injectable for tests
    #: The server constrains decoding to a request's JSON schema (llama.cpp, Ollama).
    #: Set False for a server that ignores schemas: planners then ask in free text.
    schemas: bool = True
    #: Replies already received, by request (``ReplyCache``): a benchmark that asks the same
    #: deterministic question twice (temperature 0) gets the first reply again.  None: none kept.
    replies: ReplyCache | None = field(default=None, repr=False)

    # -- to implement ----------------------------------------------------------------
    def _send(self, request: ChatRequest, timeout_s: float) -> RawReply:  # pragma: no cover
        raise NotImplementedError

    def list_models(self) -> list[str]:  # pragma: no cover
        raise NotImplementedError

    def describe_backend(self) -> str:
        return type(self).__name__

    # -- shared ----------------------------------------------------------------------
    def chat(self, request: ChatRequest, cancel: CancelToken | None = None) -> LLMReply:
        failed: list[LLMCall] = []
        last_error = ""
        for attempt in range(1, self.policy.attempts + 1):
            if cancel is not None and cancel.cancelled:
                raise Cancelled("LLM request cancelled", tuple(failed))
            if cancel is not None and cancel.interrupted:
                raise Interrupted("LLM request interrupted (paused)", tuple(failed))
            t0 = time.perf_counter()
            kept = self.replies.get(self.model, request) if self.replies is not None else None
            if kept is not None:
                return LLMReply(kept.text, replace(kept.call, latency_ms=0.0), kept.data, ())
            try:
                raw = self._send_cancellable(request, cancel)
            except Cancelled as exc:
                raise type(exc)(exc.message, tuple(failed)) from None
            except TransientError as exc:
                last_error = str(exc)
                failed.append(self._record(request, "", t0, attempt, error=last_error))
            else:
                call = self._record(request, raw.text, t0, attempt, raw=raw)
                problem, data = self._check(request, raw.text)
                if problem is None:
                    reply = LLMReply(raw.text, call, data, tuple(failed))
                    if self.replies is not None:
                        self.replies.put(self.model, request, reply)
                    return reply
                last_error = problem
                failed.append(replace(call, error=problem))
            log.warning("LLM %s attempt %d/%d failed: %s", request.purpose, attempt, self.policy.attempts, last_error)
            if attempt < self.policy.attempts:
                delay = self.policy.delay(attempt)
                if cancel is not None:
                    if cancel.wait(delay):
                        raise Cancelled("LLM request cancelled", tuple(failed))
                else:
                    (self.sleep or time.sleep)(delay)
        raise LLMError(
            f"{self.describe_backend()} ({self.model}) gave no usable reply for {request.purpose!r} "
            f"after {self.policy.attempts} attempts: {last_error}",
            tuple(failed),
            hint="check that the server is running and the model is loaded, or raise the timeout",
        )

    def _check(self, request: ChatRequest, text: str) -> tuple[str | None, Any]:
        if not text.strip():
            return "empty reply", None
        if request.json_schema:
            try:
                return None, parse_json_reply(text)
            except ValueError as exc:
                if isinstance(request.json_schema, dict):
                    # a server that ignored the schema: the caller falls back to reading the text
                    log.info("reply to %s is not the JSON asked for: %s", request.purpose, exc)
                    return None, None
                return f"malformed JSON reply: {exc}", None
        return None, None

    def _record(self, request: ChatRequest, text: str, t0: float, attempt: int, *, raw: RawReply | None = None,
                error: str | None = None) -> LLMCall:
        return LLMCall(
            purpose=request.purpose,
            model=self.model,
            prompt=request.prompt if not request.system else f"[system]\n{request.system}\n[user]\n{request.prompt}",
            reply=text,
            latency_ms=round((time.perf_counter() - t0) * 1000, 2),
            prompt_tokens=raw.prompt_tokens if raw else None,
            completion_tokens=raw.completion_tokens if raw else None,
            error=error,
            attempt=attempt,
        )

    def _send_cancellable(self, request: ChatRequest, cancel: CancelToken | None) -> RawReply:
        """Run ``_send`` on a helper thread, so that a cancel takes effect at once and the
        timeout bounds the whole reply (a server that trickles its reply in pieces passes
        each read's timeout, never this one).  A request is streamed when someone listens
        on ``cancel``."""
        timeout_s = self.policy.timeout_s
        if cancel is not None and cancel.listened and request.on_text is None:
            request = replace(request, on_text=cancel.heard)
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                box["reply"] = self._send(request, timeout_s)
            except BaseException as exc:  # handed back to the caller's thread
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=work, name="llm-request", daemon=True).start()
        deadline = time.monotonic() + timeout_s
        while not done.wait(0.05):
            if cancel is not None and cancel.cancelled:
                raise Cancelled("LLM request cancelled")
            if cancel is not None and cancel.interrupted:
                raise Interrupted("LLM request interrupted (paused)")
            if time.monotonic() > deadline:  # the helper's late reply is dropped
                raise TransientError(f"timed out after {timeout_s:g} s (the whole reply)")
        if "error" in box:
            raise box["error"]
        return box["reply"]

