"""GUI-model adapters: each family's prompt layout, reply grammar and coordinate convention,
chosen from the model name (``adapter_for``) or named explicitly (a setting).

Families: Qwen3-VL, GUI-Owl (and GUI-Owl-1.5), UI-Venus, MAI-UI, UI-TARS-1.5,
AgentCPM-GUI, AutoGLM, Step-GUI/GELab-Zero.  See ``base`` for the shared types.  Nothing
here calls a model; ``agent.planners.adapter`` does.
"""

from __future__ import annotations

import dataclasses
import re

from agent.llm.adapters.base import (
    Adapter,
    AdapterError,
    AdapterReply,
    Coords,
    CoordSpace,
    ImageRule,
    Intent,
    PromptLayout,
)
from agent.llm.adapters.calls import AutoGLMAdapter, UITarsAdapter, UIVenusAdapter
from agent.llm.adapters.compact import AgentCPMAdapter, GELabAdapter
from agent.llm.adapters.mobile_use import MobileUseAdapter

__all__ = [
    "ADAPTERS", "Adapter", "AdapterError", "AdapterReply", "CoordSpace", "Coords", "ImageRule", "Intent",
    "adapter_by_name", "adapter_for",
]

#: Qwen2.5-VL's processor: 28-pixel patches (14 x 2 merge); UI-TARS-1.5 allows up to 16384 tokens.
_QWEN25_UITARS = ImageRule(factor=28, min_pixels=100 * 28 * 28, max_pixels=16384 * 28 * 28)
#: GUI-Owl's evaluation code resizes to at most 12800 tokens of 28x28 pixels.
_QWEN25_GUIOWL = ImageRule(factor=28, min_pixels=28 * 28, max_pixels=12800 * 28 * 28)

ADAPTERS: dict[str, Adapter] = {
    a.name: a
    for a in (
        MobileUseAdapter("qwen3-vl", "Qwen3-VL", Coords(CoordSpace.NORM_999)),
        MobileUseAdapter("gui-owl-1.5", "GUI-Owl-1.5", Coords(CoordSpace.NORM_1000)),
        MobileUseAdapter("gui-owl", "GUI-Owl", Coords(CoordSpace.RESIZED_PX, _QWEN25_GUIOWL)),
        MobileUseAdapter("mai-ui", "MAI-UI", Coords(CoordSpace.NORM_999)),
        UIVenusAdapter("ui-venus", "UI-Venus", Coords(CoordSpace.NORM_999)),
        UITarsAdapter("ui-tars", "UI-TARS-1.5", Coords(CoordSpace.RESIZED_PX, _QWEN25_UITARS)),
        AgentCPMAdapter("agentcpm-gui", "AgentCPM-GUI", Coords(CoordSpace.NORM_1000)),
        AutoGLMAdapter("autoglm", "AutoGLM", Coords(CoordSpace.NORM_1000), PromptLayout("before_text")),
        GELabAdapter("gelab", "Step-GUI / GELab-Zero", Coords(CoordSpace.NORM_1000)),
    )
}

# (pattern on the normalised model name, adapter); the first match wins, so the more
# specific names come first.
_NAME_RULES: tuple[tuple[str, str], ...] = (
    (r"gui-?owl-?1[.-]?5", "gui-owl-1.5"),
    (r"gui-?owl", "gui-owl"),
    (r"mai-?ui", "mai-ui"),
    (r"ui-?venus", "ui-venus"),
    (r"ui-?tars", "ui-tars"),
    (r"agentcpm", "agentcpm-gui"),
    (r"autoglm", "autoglm"),
    (r"gelab|step-?gui", "gelab"),
    (r"qwen3-?vl", "qwen3-vl"),
)


def _normalise(model: str) -> str:
    return re.sub(r"[\s_]+", "-", model.strip().lower())


def adapter_for(model: str) -> Adapter | None:
    """The adapter for a model name as servers spell it (``qwen3-vl:4b``,
    ``ByteDance-Seed/UI-TARS-1.5-7B``, ``autoglm-phone-9b`` ...), or None when the name
    belongs to no known GUI family (the generic planners serve those)."""
    name = _normalise(model)
    for pattern, key in _NAME_RULES:
        if re.search(pattern, name):
            return ADAPTERS[key]
    return None


def adapter_by_name(name: str, *, text_only: bool = False) -> Adapter:
    """The adapter called ``name`` (a key of ``ADAPTERS``; case and ``_`` ignored).
    ``text_only`` gives the same grammar for a model without vision: it gets the screen
    description, element positions written in the family's coordinates."""
    key = _normalise(name)
    adapter = ADAPTERS.get(key) or adapter_for(key)
    if adapter is None:
        raise AdapterError(f"unknown adapter {name!r}; choose one of: {', '.join(ADAPTERS)}")
    return dataclasses.replace(adapter, vision=False) if text_only else adapter
