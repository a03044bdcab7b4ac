"""Replay results in words a user reads: how a step's element was found again and what
the step did, instead of the cascade's internal codes ("exact_id", "already_set").

Pure functions over strings; no Qt, no device.
"""

from __future__ import annotations

#: How the element of a step was found again, per ``MatchLevel`` value.
LEVEL_WORDS: dict[str, str] = {
    "exact_id": "found by its id",
    "resource_id": "found by its resource id",
    "text": "found by its text",
    "icon_label": "found by its icon",
    "fingerprint": "found by its look and place",
    "llm_grounder": "found by the model from the step's words",
    "coordinates": "at the recorded point (no element was recorded)",
    "not_needed": "no element needed",
    "none": "not found",
    "healed": "found by the model and approved by you (healed)",
    "demonstrated": "shown by you",
    "skipped": "skipped",
}

#: What a step did, per ``EffectCheck.verdict`` (plus ``already_set``).
EFFECT_WORDS: dict[str, str] = {
    "confirmed": "the screen matches the recording",
    "plausible": "the screen differs from the recording, as expected on another layout",
    "unchecked": "",
    "wrong_app": "the wrong app came up",
    "no_change": "nothing changed on the screen",
    "wrong_screen": "it led to a different screen than recorded",
}

#: Effects that mean the step went wrong.
BAD_EFFECTS = frozenset({"wrong_app", "no_change", "wrong_screen"})


def level_words(level: str) -> str:
    return LEVEL_WORDS.get(level, level.replace("_", " "))


def effect_words(effect: str, expect_checked: bool | None = None) -> str:
    if effect == "already_set":
        state = "on" if expect_checked is not False else "off"
        return f"already {state} — nothing to do"
    return EFFECT_WORDS.get(effect, effect.replace("_", " "))


def outcome_words(level: str, effect: str, *, skipped: bool = False, repaired: bool = False,
                  expect_checked: bool | None = None) -> str:
    """One step's result: "found by its id; the screen matches the recording"."""
    if skipped:
        return "skipped"
    if effect == "already_set":
        return effect_words(effect, expect_checked)
    parts = [level_words(level)]
    said = effect_words(effect, expect_checked)
    if said:
        parts.append(said)
    if repaired and level != "demonstrated":
        parts.append("repaired")
    return "; ".join(parts)
