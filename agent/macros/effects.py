"""Did a replayed step do what it did when it was recorded, and the report of one step.

``check_effect`` compares the screens before and after a replayed step with the screen
signatures recorded with it; ``StepReport`` is what a replay says about one step (also
in words, through ``agent.macros.words``).  Pure functions over parses and signatures;
no device, no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.macros.fingerprint import compare_signatures, id_overlap
from agent.macros.recorder import Observation
from agent.macros.types import MacroStep
from agent.macros.words import BAD_EFFECTS, outcome_words
from agent.types import ActionType


@dataclass(frozen=True, slots=True)
class EffectCheck:
    ok: bool
    verdict: str  # confirmed | plausible | unchecked | wrong_app | no_change | wrong_screen
    detail: str = ""


@dataclass(frozen=True, slots=True)
class StepReport:
    index: int
    description: str
    level: str
    element_id: str | None = None
    score: float = 0.0
    effect: str = "unchecked"
    repaired: bool = False
    skipped: bool = False
    expect_checked: bool | None = None  # a toggle step: the recorded end state

    @property
    def ok(self) -> bool:
        return not self.skipped and self.effect not in BAD_EFFECTS

    @property
    def words(self) -> str:
        """How it went, for people: "found by its id; the screen matches the recording"."""
        return outcome_words(self.level, self.effect, skipped=self.skipped, repaired=self.repaired,
                             expect_checked=self.expect_checked)


def check_effect(step: MacroStep, before: Observation, after: Observation) -> EffectCheck:
    """Did the step do on this screen what it did when it was recorded?

    Lenient where layouts legitimately differ: a scroll may move nothing on a bigger
    screen, and a bigger screen shows more ids.  Strict where they do not: the wrong
    app in front, nothing happening where something did, or a step that started on
    the recorded screen and ended on a clearly different one.
    """
    if step.expected_package and after.package and after.package != step.expected_package:
        return EffectCheck(False, "wrong_app",
                           f"expected {step.expected_package} in front, found {after.package}")
    if not step.screen_after:
        return EffectCheck(True, "unchecked", "the recording has no after-screen")
    if step.action.type in (ActionType.SWIPE, ActionType.TYPE, ActionType.WAIT):
        return EffectCheck(True, "unchecked", f"a {step.action.type.value} step may legitimately change nothing")
    # "Nothing happened" is only trusted on structural evidence (resource ids, kinds of
    # elements): OCR'd text alone differs between two shots of the same screen.
    rec_cmp = compare_signatures(step.screen_before, step.screen_after)
    recorded_changed = rec_cmp.get("ids") is False or rec_cmp.get("kinds") is False
    now_cmp = compare_signatures(before.signature, after.signature)
    now_same = all(now_cmp.get(k) is not False for k in ("ids", "txt", "kinds")) and now_cmp.get("txt") is True
    if recorded_changed and now_same:
        return EffectCheck(False, "no_change", "the step changed the screen when recorded, but nothing changed now")
    start = id_overlap(step.screen_before, before.signature)
    end = id_overlap(step.screen_after, after.signature)
    if start is not None and start >= 0.8 and end is not None and end < 0.5:
        return EffectCheck(False, "wrong_screen",
                           "the step started on the recorded screen but led to a different one")
    cmp = compare_signatures(step.screen_after, after.signature)
    if cmp.get("txt") is True or (end is not None and end >= 0.999 and cmp.get("kinds") is True):
        return EffectCheck(True, "confirmed", "the screen matches the recorded after-screen")
    return EffectCheck(True, "plausible", "the screen differs from the recording, as expected on another layout")
