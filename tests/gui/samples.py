"""Synthetic screens, parses and proposals built from the core types, for widget tests."""

from __future__ import annotations

import numpy as np

from agent.types import Action, LatentState, LLMCall, Proposal, Target
from vision.geometry import Rect, Size
from vision.types import (
    Block,
    Disagreement,
    Element,
    ElementKind,
    ElementSource,
    Screen,
    ScreenParse,
    StageTiming,
    TextSpan,
)

W, H = 1080, 2400


def sample_image(w: int = W, h: int = H, seed: int = 0) -> np.ndarray:
    """A phone-like frame: grey status bar, white body, two coloured rows."""
    img = np.full((h, w, 3), 250, np.uint8)
    img[: h // 40] = (60, 60, 60)
    img[h // 10 : h // 10 + h // 12, :] = (225, 235, 250)
    img[h // 4 : h // 4 + h // 12, :] = (235, 250, 230)
    img[-h // 20 :] = (30, 30, 30)
    if seed:
        img[(seed * 37) % h, :] = (seed % 255, 0, 0)
    return img


def sample_screen() -> Screen:
    return Screen(image=sample_image(), foreground_package="com.android.settings", device="sim")


def sample_parse() -> ScreenParse:
    els = (
        Element("e0", ElementKind.STATUS_BAR, Rect(0, 0, W, 60), source=ElementSource.DETECTOR),
        Element("e1", ElementKind.TEXT, Rect(40, 240, 500, 320), text="Network & internet", source=ElementSource.OCR),
        Element("e2", ElementKind.SWITCH, Rect(880, 250, 1040, 330), label="Wi-Fi", clickable=True,
                checkable=True, checked=True, source=ElementSource.FUSED, resource_id="android:id/switch_widget"),
        Element("e3", ElementKind.BUTTON, Rect(40, 600, 1040, 800), text="Bluetooth", clickable=True,
                source=ElementSource.HIERARCHY),
        Element("e4", ElementKind.BUTTON, Rect(900, 80, 1040, 200), label="search", clickable=True,
                source=ElementSource.DETECTOR, confidence=0.81),
        Element("e5", ElementKind.BUTTON, Rect(0, 2100, 360, 2280), text="Wi-Fi", source=ElementSource.FUSED,
                selected=True),
        Element("e6", ElementKind.BUTTON, Rect(360, 2100, 720, 2280), text="Calls", source=ElementSource.FUSED),
    )
    blocks = (
        Block("b0", "list", Rect(20, 220, 1060, 820), caption="Network settings", element_ids=("e1", "e2", "e3")),
        Block("b1", "tab_bar", Rect(0, 2090, 1080, 2290), caption="Tabs", element_ids=("e5", "e6"),
              active_child="e5"),
    )
    return ScreenParse(
        screen_size=Size(W, H),
        elements=els,
        blocks=blocks,
        text_spans=(TextSpan("Network & internet", Rect(40, 240, 500, 320), 0.99),
                    TextSpan("Bluetooth", Rect(60, 660, 300, 740), 0.98)),
        timings=(StageTiming("detect", 41.5), StageTiming("ocr", 310.2), StageTiming("blocks", 3.1)),
        description="[e1] text 'Network & internet'\n[e2] switch 'Wi-Fi' (on)\n[e3] button 'Bluetooth'",
        disagreements=(Disagreement("missing_in_tree", Rect(900, 80, 1040, 200), "search icon has no node", "e4"),),
    )


def sample_latent(**changes: object) -> LatentState:
    base = dict(
        performed_action="opened Settings",
        screen_summary="Settings home with Network & internet",
        progression="1 of 3 subgoals done",
        mistakes="none",
        completion=False,
        completion_reason="Wi-Fi still on",
        confidence=0.8,
    )
    base.update(changes)
    return LatentState(**base)  # type: ignore[arg-type]


def sample_proposal(action: Action | None = None) -> Proposal:
    action = action or Action.tap(960, 290, target=Target(element_id="e2", description="Wi-Fi switch"))
    return Proposal(
        action=action,
        rationale="The Wi-Fi switch is on; tapping it turns Wi-Fi off.",
        latent=sample_latent(),
        evidence=("element e2 'Wi-Fi' is a switch in block 'Network settings'",),
        confidence=0.72,
        plan=("tap Wi-Fi switch", "check it is off", "complete"),
        planner="zeroshot+",
        llm_calls=(LLMCall("plan", "fake:1b", "PROMPT TEXT: turn wifi off", reply='{"action": "tap"}', latency_ms=120),),
    )
