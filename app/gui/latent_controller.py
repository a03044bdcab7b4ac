"""Keeps the latent-state panel's note true: before a run, for the planner and model the
task panel shows; during a run, for the planner that runs (``app.gui.latent_note``).

The note's one link turns the estimates on (or off again) for the model shown, kept in the
model preferences: the automatic planner then estimates them from the next run on.  A
click during a run says so ("from the next run").  Reads and writes only the preferences
store (a small JSON file, on the GUI thread as the model manager does); never imports the
window.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from app.gui.latent_note import LatentNote, Offer, note_for, turn_off, turn_on

if TYPE_CHECKING:
    from app.gui.session import Workbench

log = logging.getLogger(__name__)


class LatentNotes:
    """The note above the latent-state rows, and its link."""

    def __init__(self, ui: Workbench) -> None:
        self.ui = ui
        self._running: LatentNote | None = None  # the note of the run in progress
        self._model = ""
        ui.task_panel.choiceChanged.connect(self.refresh)
        ui.latent_panel.linkActivated.connect(self._clicked)
        self.refresh()

    def _choice(self) -> tuple[str, str]:
        req = self.ui.task_panel.request()
        return req.planner or "auto", req.model

    def refresh(self) -> None:
        """Show the note for the run in progress, else for the planner and model now chosen."""
        if self._running is not None:
            self._show(self._running)
            return
        chosen, model = self._choice()
        prefs = self.ui.session.prefs
        from app.compose import planner_for_model

        used = planner_for_model(chosen, model, prefs) if model else chosen
        self._model = model
        self._show(note_for(chosen, used, model, prefs))

    def run_started(self, chosen: str, used: str, model: str, estimator: bool) -> None:
        """A run was built: ``estimator`` says whether it makes estimates."""
        self._model = model
        self._running = note_for(chosen, used, model, self.ui.session.prefs, estimator=estimator)
        self._show(self._running)

    def run_ended(self) -> None:
        self._running = None
        self.refresh()

    def _show(self, note: LatentNote) -> None:
        self.ui.latent_panel.set_note(note.text, note.offer.value, off=not note.estimates)

    def _clicked(self, link: str) -> None:
        model = self._model or self._choice()[1]
        if not model:
            return
        prefs = self.ui.session.prefs
        try:
            if link == Offer.TURN_ON.value:
                turn_on(prefs, model)
                if self.ui.task_panel.request().planner not in ("auto", None):
                    self.ui.task_panel.set_defaults(planner="auto")  # the estimates come with the automatic planner
            elif link == Offer.TURN_OFF.value:
                turn_off(prefs, model)
        except OSError as exc:  # the preferences file could not be written
            log.warning("model preferences not saved: %s", exc)
            self.ui.latent_panel.set_note(f"Could not save the choice: {exc}")
            return
        if self._running is not None:
            what = "on" if link == Offer.TURN_ON.value else "off"
            self.ui.latent_panel.set_note(f"Estimates {what} for {model} from the next run", off=not self._running.estimates)
            return
        self.refresh()
