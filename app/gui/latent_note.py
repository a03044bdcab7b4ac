"""What the latent-state panel says when it has no estimates to show, and the one click
that turns them on for a model.

Estimating the five latent aspects costs model calls; the ``auto`` planner leaves them
out for a slow model (one call per step is faster), and some planners never make them.
The panel must then say so instead of showing dashes: ``note_for`` words it from the
planner the user picked, the planner that runs and the model, and says what the one
click does (``Offer``).  ``turn_on`` / ``turn_off`` keep the choice per model in the
model preferences (``ModelPrefs.latent``), so ``auto`` gives that model the estimates
(in one fused call when it is slow) from the next run on.

Plain functions over names and the preferences store: no Qt, no model calls; the run
controller shows the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from agent.planners.registry import AUTO, PLANNERS, PROMPT2TASK
from app.model_prefs import PrefsStore


class Offer(StrEnum):
    """What the panel's link does."""

    NONE = ""
    TURN_ON = "turn on"  # this model gets estimates under the automatic planner
    TURN_OFF = "turn off"  # back to one call per step


@dataclass(frozen=True, slots=True)
class LatentNote:
    """The panel's line: ``text`` ("" when estimates are shown without comment), and the link."""

    text: str
    offer: Offer = Offer.NONE
    estimates: bool = True  # the run makes estimates (the rows fill in)


def makes_estimates(planner: str) -> bool:
    """Whether the catalogue planner ``planner`` (after ``auto`` is resolved) estimates latent state."""
    return planner.endswith("+") or planner == PROMPT2TASK


def _title(planner: str) -> str:
    label = next((p.label for p in PLANNERS if p.name == planner.split(":")[0]), planner)
    return label.split(":")[0].split(" +")[0]


def note_for(chosen: str, used: str, model: str, prefs: PrefsStore | None, *, estimator: bool | None = None
             ) -> LatentNote:
    """The note for a run with the planner the user ``chosen``, the planner ``used`` (``auto``
    resolved) and ``model``; ``estimator`` says whether the built run has one (None: judge
    from the planner's name, before a run)."""
    on = makes_estimates(used) if estimator is None else estimator
    pref = prefs.get(model).latent if prefs is not None and model else ""
    if on:
        if chosen == AUTO and pref == "on":
            return LatentNote("On for this model (one more model call per step)", Offer.TURN_OFF)
        return LatentNote("")
    if chosen == AUTO:
        why = "you turned them off" if pref == "off" else "one call per step is faster"
        return LatentNote(f"Off for this model ({why})", Offer.TURN_ON, estimates=False)
    if chosen.startswith("adapter"):
        return LatentNote("Off: the model's own action format makes no estimates", Offer.TURN_ON, estimates=False)
    title = _title(chosen)
    what = f"“{title}”" if title.lower().endswith("planner") else f"“{title}” planner"
    return LatentNote(f"Off: the {what} makes no estimates", Offer.TURN_ON, estimates=False)


def turn_on(prefs: PrefsStore, model: str) -> None:
    """Latent-state estimates for ``model`` under the automatic planner, from the next run on."""
    prefs.set(model, latent="on")


def turn_off(prefs: PrefsStore, model: str) -> None:
    """One call per step for ``model`` under the automatic planner."""
    prefs.set(model, latent="off")
