"""``DecisionMemory``: remember a decision, find remembered decisions for a screen and a
goal, retire one the user turned down, forget one on request.

One decision is kept per (app, screen identity, visit, goal): a later decision there
replaces the earlier one (the user changed their mind, or taught the step again after
the app changed).  Finding the step again on the current parse goes through the macro
cascade (``agent.macros.planner.resolve`` without its model level): the exact id confirmed
by the fingerprint, the resource id, the words, the icon label, the fingerprint.  A
remembered step whose element is not found again, or found only ambiguously
(``agent.macros.heal.doubt``), is not proposed (a miss); one taken
under another version of the app than the phone's is a *hint* (``Recall.demoted``), never
the step.

Persists through a ``DecisionStore``; no model, no device.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace

from agent.knowledge.retrieval import Scorer
from agent.macros.heal import doubt
from agent.macros.planner import resolve
from agent.macros.recorder import Observation
from agent.macros.reidentify import MatchLevel
from agent.memory.goals import EQUIVALENT, equivalent_goals, same_goal
from agent.memory.store import DecisionStore
from agent.memory.types import Recall, Remembered
from vision.types import ScreenParse

log = logging.getLogger(__name__)

#: Levels of the cascade a remembered step may be found again by (the model's is never asked).
TRUSTED_LEVELS = frozenset({MatchLevel.EXACT_ID, MatchLevel.RESOURCE_ID, MatchLevel.TEXT, MatchLevel.ICON_LABEL,
                            MatchLevel.FINGERPRINT, MatchLevel.NOT_NEEDED, MatchLevel.COORDINATES})


class DecisionMemory:
    """The user's decisions, per screen and goal (see the module docstring)."""

    def __init__(self, store: DecisionStore, scorer: Scorer | None = None, *, equivalent_at: float = EQUIVALENT) -> None:
        self.store, self.scorer, self.equivalent_at = store, scorer, equivalent_at

    # ---- writing ---------------------------------------------------------------------------
    def remember(self, entry: Remembered) -> Remembered:
        """Keep ``entry``; an earlier decision at the same place for the same goal goes."""
        for old in self.store.decisions(entry.app):
            if (old.id != entry.id and old.screen == entry.screen and old.visit == entry.visit
                    and same_goal(old.goal, entry.goal)):
                self.store.delete_decision(old.id)
        self.store.save_decision(entry)
        return entry

    def retire(self, entry: Remembered, why: str) -> Remembered:
        """The user turned the remembered step down: it is kept (listed) but not proposed."""
        retired = replace(entry, retired=why or "rejected")
        self.store.save_decision(retired)
        log.info("decision memory: retired %s (%s)", entry.id, retired.retired)
        return retired

    def confirm(self, entry: Remembered) -> Remembered:
        """The user approved the remembered step again: its date is now."""
        confirmed = replace(entry, at=time.time())
        self.store.save_decision(confirmed)
        return confirmed

    def forget(self, entry_id: str) -> None:
        self.store.delete_decision(entry_id)

    # ---- reading ---------------------------------------------------------------------------
    def all(self, app: str | None = None) -> list[Remembered]:
        return self.store.decisions(app)

    def by_app(self) -> dict[str, list[Remembered]]:
        out: dict[str, list[Remembered]] = {}
        for e in self.store.decisions():
            out.setdefault(e.app, []).append(e)
        return out

    def goals_like(self, goal: str) -> tuple[str, ...]:
        """Remembered goals equivalent to ``goal`` (``agent.memory.goals``), best first."""
        known = {e.goal for e in self.store.decisions() if e.active}
        return tuple(g for g, _ in equivalent_goals(goal, known, self.scorer, self.equivalent_at))

    def goals_at(self, app: str, screen: str, visit: int) -> list[str]:
        """The goals with a remembered step at this screen and visit, latest first."""
        here = sorted((e for e in self.store.decisions(app) if e.active and e.screen == screen and e.visit == visit),
                      key=lambda e: -e.at)
        return list(dict.fromkeys(e.goal for e in here))

    def recall(self, goal: str, equivalent: tuple[str, ...], parse: ScreenParse, *, app: str, screen: str,
               visit: int, version: str = "", image: object = None) -> Recall | None:
        """The remembered step for this screen, visit and goal (the goal itself first, then
        the ``equivalent`` goals in their order), found again on ``parse``; None on a miss."""
        here = [e for e in self.store.decisions(app) if e.active and e.screen == screen and e.visit == visit]
        ranked = sorted((e for e in here if same_goal(e.goal, goal)), key=lambda e: -e.at)
        for g in equivalent:
            ranked += sorted((e for e in here if same_goal(e.goal, g)), key=lambda e: -e.at)
        for entry in ranked:
            seen = Observation(parse, image, app)  # type: ignore[arg-type]
            match, action = resolve(entry.step, seen)
            unsure = doubt(entry.step, match, seen) if action is not None else ""
            if action is None or match.level not in TRUSTED_LEVELS or unsure:
                log.info("decision memory: %r not found again (%s)", entry.step.description, unsure or match.evidence)
                continue
            if match.element is not None and action.target is not None:  # aim at this parse's element
                action = replace(action, target=replace(action.target, element_id=match.element.id,
                                                        point=match.element.rect.center,
                                                        description=match.element.display_name))
            demoted = ""
            if entry.app_version and version and entry.app_version != version:
                demoted = f"remembered for version {entry.app_version} of the app; the phone has {version}"
            return Recall(entry, action, match.level.value, demoted, not same_goal(entry.goal, goal))
        return None
