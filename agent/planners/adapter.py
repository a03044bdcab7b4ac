"""A planner that speaks a GUI model's own language through its adapter
(``agent.llm.adapters``): the family's system prompt and reply grammar, the screenshot
resized the way its processor expects (or, for a model without vision, the screen
description with element positions in the family's coordinates), and its coordinates
turned into device pixels.

The model's "ask the user" and "take over" answers become a ``wait`` proposal whose
rationale carries the question and whose ``risk`` signal asks for the user; "done" and
"impossible" become ``complete``/``impossible``.  All of them reach the approval card
like any proposal.  The evidence lines name the adapter, its coordinate convention and
the exact action text, so the step details show how the reply was read.  No Qt, no I/O
besides the LLM call.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass

from agent.llm.adapters import Adapter, AdapterError, AdapterReply, Intent, adapter_by_name, adapter_for
from agent.llm.base import ChatRequest, LLMClient, LLMError
from agent.planners.base import PlanContext, PlanError, notes_block, plan_notes
from agent.types import LLMCall, Proposal, RiskSignal
from vision.geometry import Size

log = logging.getLogger(__name__)

_MAX_LISTED = 60


def element_lines(ctx: PlanContext, adapter: Adapter) -> str:
    """Screen elements with their centres in the adapter's coordinates (for text-only models)."""
    size = ctx.parse.screen_size
    lines = []
    for el in ctx.parse.elements:
        name = el.display_name if hasattr(el, "display_name") else (el.text or el.label)
        if not name or getattr(el, "covered", False):
            continue
        x, y = adapter.coords.from_screen(el.rect.center, size)
        state = "" if el.checked is None else (" (on)" if el.checked else " (off)")
        lines.append(f"- {name}{state}{' [tappable]' if el.clickable else ''} at [{x:g}, {y:g}]")
        if len(lines) >= _MAX_LISTED:
            break
    return "\n".join(lines) or "(no readable elements)"


def resized_png(png: bytes, size: Size) -> bytes:
    """The PNG at ``size`` (unchanged when it already is)."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as img:
        if img.size == (size.width, size.height):
            return png
        out = io.BytesIO()
        img.convert("RGB").resize((size.width, size.height)).save(out, format="PNG")
        return out.getvalue()


def proposal_of(reply: AdapterReply, adapter: Adapter, screen: Size, calls: tuple[LLMCall, ...]) -> Proposal:
    evidence = (f"adapter: {adapter.describe(screen)}", f"model action: {reply.raw_action}")
    rationale = reply.thought
    risk = None
    if reply.intent is Intent.ASK_USER:
        rationale = f"The model asks you: {reply.message or reply.thought or '(no question given)'}"
        risk = RiskSignal(True, "ask_user", reply.message or "the model asks the user")
    elif reply.intent is Intent.TAKE_OVER:
        rationale = f"The model asks you to take over: {reply.message or '(no reason given)'}"
        risk = RiskSignal(True, "take_over", reply.message or "the model asks the user to take over")
    elif reply.intent in (Intent.DONE, Intent.IMPOSSIBLE) and reply.message:
        rationale = f"{reply.thought}\n{reply.message}".strip()
    if reply.sensitive:
        risk = RiskSignal(True, "", reply.sensitive)
    return Proposal(action=reply.action, rationale=rationale, evidence=evidence, planner=f"adapter:{adapter.name}",
                    llm_calls=calls, risk=risk)


@dataclass
class AdapterPlanner:
    """Plans with ``adapter`` (default: the one the client's model name calls for)."""

    client: LLMClient
    adapter: Adapter | None = None
    reasks: int = 1

    def __post_init__(self) -> None:
        if self.adapter is None:
            model = str(getattr(self.client, "model", ""))
            self.adapter = adapter_for(model)
            if self.adapter is None:
                raise ValueError(f"no GUI-model adapter matches the model {model!r}; name one with "
                                 "'adapter:<family>' (e.g. adapter:ui-tars) or use another planner")

    @property
    def name(self) -> str:
        return f"adapter:{self._adapter.name}"

    @property
    def uses_latent(self) -> bool:
        return False

    @property
    def _adapter(self) -> Adapter:
        assert self.adapter is not None
        return self.adapter

    def request(self, ctx: PlanContext, extra: str = "") -> ChatRequest:
        a = self._adapter
        size = ctx.parse.screen_size
        vision = a.vision and bool(ctx.images)
        history = tuple(t.command for t in ctx.history)
        prompt = a.user_prompt(ctx.goal, history, size, "" if vision else element_lines(ctx, a))
        notes = notes_block(plan_notes(ctx))
        prompt = "\n".join(p for p in (prompt, notes, extra) if p)
        images = tuple(resized_png(img, a.image_size(size)) for img in ctx.images[:1]) if vision else ()
        return ChatRequest(prompt, purpose="plan.adapter", system=a.system_prompt(size), images=images,
                           max_tokens=a.layout.max_tokens)

    def propose(self, ctx: PlanContext) -> Proposal:
        a = self._adapter
        size = ctx.parse.screen_size
        calls: list[LLMCall] = []
        request = self.request(ctx)
        problem = ""
        for attempt in range(self.reasks + 1):
            try:
                reply = self.client.chat(request, ctx.cancel)
            except LLMError as exc:
                calls.extend(exc.calls)
                raise PlanError(f"{request.purpose}: {exc}", tuple(calls)) from None
            calls.extend(reply.calls)
            try:
                parsed = a.parse(reply.text, size)
            except AdapterError as exc:
                problem = str(exc)
                log.info("%s reply unreadable (%s): %r", a.name, problem, reply.text[:200])
                if attempt == self.reasks:
                    break
                extra = (f"Your previous reply could not be read ({problem}). Answer again, exactly in the "
                         "format given, with one action.")
                request = ChatRequest(self.request(ctx, extra).prompt, purpose="plan.adapter.reask",
                                      system=request.system, images=request.images, max_tokens=request.max_tokens)
                continue
            return proposal_of(parsed, a, size, tuple(calls))
        raise PlanError(f"plan.adapter: unreadable reply after {self.reasks + 1} tries: {problem}", tuple(calls))


def make_adapter_planner(name: str, client: LLMClient) -> AdapterPlanner:
    """``adapter`` (from the model name), ``adapter:<family>`` or ``adapter:<family>:text``."""
    parts = name.strip().lower().split(":")
    if parts[0] != "adapter":
        raise ValueError(f"not an adapter planner name: {name!r}")
    if len(parts) == 1 or not parts[1]:
        return AdapterPlanner(client)
    return AdapterPlanner(client, adapter_by_name(parts[1], text_only=len(parts) > 2 and parts[2] == "text"))
