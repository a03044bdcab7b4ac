"""What the window's own actions do: show a screen other than the live phone (a step, an
opened screenshot or hierarchy, a dropped file), export the overlay, edit an action with a
point picked on the mirror, change and save the settings, post notices and progress, and
hand the phone's commands to ``PhoneController``.

``WindowActions`` is the base of ``MainWindow``: it builds no widget (``WindowLayout``
does) and owns no controller (``MainWindow`` does); the attributes it reads are declared
below and set by those two.  Slow work (reading a file, saving) runs on the session's
worker, never on the GUI thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QRectF, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage, QPainter
from PySide6.QtWidgets import QFileDialog, QLabel, QMainWindow, QProgressBar, QWidget

from agent.device import Device
from agent.types import Action, Target
from app.gui.devices import DeviceChoice
from app.gui.session import LIVE, Session, Viewing, viewing_file, viewing_step
from app.gui.workers import Failure
from app.settings import Settings
from vision.geometry import Point
from vision.types import Screen, ScreenParse
from widgets.action_editor import ActionEditor
from widgets.layer_panel import LayerPanel
from widgets.notifications import Level, NotificationArea
from widgets.overlays import Layer
from widgets.parse_inspector import ParseInspector
from widgets.screen_view import ScreenView, ViewMode, element_words
from widgets.timeline import StepTimeline

if TYPE_CHECKING:
    from app.gui.episode_controller import EpisodeController
    from app.gui.macro_controller import MacroController
    from app.gui.model_controller import ModelController
    from app.gui.phone_controller import PhoneController
    from app.gui.run_controller import RunController

log = logging.getLogger(__name__)

IMAGE_FILTER = ("Screens: a screenshot, or a hierarchy beside it (*.png *.jpg *.jpeg *.webp *.bmp *.xml *.uix *.json);;"
                "Images (*.png *.jpg *.jpeg *.webp *.bmp);;"
                "Hierarchies: uiautomator, Appium page source, Rico, DroidBot (*.xml *.uix *.json)")


class WindowActions(QMainWindow):
    """The window's actions on what it shows (the base of ``MainWindow``)."""

    parseShown = Signal(object)  # ScreenParse

    # set by MainWindow.__init__: the session and the controllers ...
    session: Session
    phone: PhoneController
    run: RunController
    macros: MacroController
    episodes: EpisodeController
    models: ModelController
    _closing: bool
    _editor: ActionEditor | None
    _inspector_pending: ScreenParse | None
    # ... and by WindowLayout: the widgets
    view: ScreenView
    inspector: ParseInspector
    timeline: StepTimeline
    layer_panel: LayerPanel
    notifications: NotificationArea
    banner: QLabel
    banner_row: QWidget
    work_label: QLabel
    progress: QProgressBar

    # ---- notifications and progress ----------------------------------------------------
    def notify(self, level: Level | str, message: str, detail: str = "", key: str = "") -> None:
        log.log(logging.ERROR if Level(level) is Level.ERROR else logging.INFO, "%s %s", message, detail[:200])
        if not self._closing:
            self.notifications.notify(level, message, detail, key=key)

    def notify_failure(self, what: str, failure: Failure) -> None:
        """One card per kind of failure (``what``); the reason and the hint are its details."""
        hint = getattr(failure.error, "hint", "")
        self.notify(Level.ERROR, f"{what}: {failure.message}",
                    (f"What to do: {hint}\n\n" if hint else "") + failure.detail, key=what)

    def busy(self, text: str) -> None:
        self.work_label.setText(text)
        self.progress.setVisible(bool(text))

    # ---- the phone (PhoneController does the work) ------------------------------------------
    def refresh_devices(self) -> None:
        self.phone.refresh_devices()

    def connect_device(self, choice: DeviceChoice) -> None:
        self.phone.connect_device(choice)

    def use_device(self, device: Device, choice: DeviceChoice | None = None) -> None:
        """Attach an already-open device (tests, embedding)."""
        self.phone.use_device(device, choice)

    def request_parse(self, screen: Screen, fetch_tree: bool = False, viewing: Viewing = LIVE) -> None:
        """Parse ``screen`` on the parse thread; a newer request replaces a waiting one."""
        self.phone.request_parse(screen, fetch_tree=fetch_tree, viewing=viewing)

    def parse_now(self) -> None:
        self.phone.parse_now()

    def show_parse(self, parse: ScreenParse | None, marks: dict[str, str] | None = None) -> None:
        self.view.set_parse(parse, marks)
        if parse is not None and self.session.viewing.live:
            self.phone.show_hierarchy_note()  # live parses and a run's observations
        # filling the inspector's table costs the GUI thread ~10 ms: only while it is seen
        self._inspector_pending = parse
        if self.inspector.isVisible():
            self._fill_inspector()
        self.parseShown.emit(parse)

    def _fill_inspector(self) -> None:
        if self._inspector_pending is not self.inspector.parse:
            self.inspector.set_parse(self._inspector_pending)

    def _inspector_shown(self, shown: bool) -> None:
        if shown:
            self._fill_inspector()

    # ---- viewing something other than the live phone -----------------------------------
    def _set_viewing(self, viewing: Viewing, banner: str) -> None:
        self.session.viewing = viewing
        self.banner.setText(banner)
        self.banner_row.setVisible(not viewing.live)

    def show_live(self) -> None:
        self._set_viewing(LIVE, "")
        self.phone.frame_shown_again()
        demonstrating = self.run.demonstrating or self.macros.demonstrating or self.macros.recorder is not None
        self.view.set_mode(ViewMode.DEMONSTRATE if demonstrating else ViewMode.INSPECT)
        if self.session.live_screen is not None:
            self.view.set_frame(self.session.live_screen.image)
        self.show_parse(self.session.live_parse)
        proposal = self.run.proposal
        self.view.set_proposal(proposal.action if proposal is not None else None)

    def show_screen(self, screen: Screen | np.ndarray, parse: ScreenParse | None, viewing: Viewing,
                    banner: str) -> None:
        self._set_viewing(viewing, banner)
        self.view.set_frame(screen.image if isinstance(screen, Screen) else screen)
        self.show_parse(parse)

    def _on_step_selected(self, section: str, index: int) -> None:
        shot = self.run.step_screen(section, index)
        step = self.timeline.step(index, section)
        title = self.timeline.section_title(section)
        banner = f"Step {index + 1} of “{title}” — the phone keeps running"
        if shot is not None:
            screen, parse, action = shot
            if screen is None:
                self.notify(Level.INFO, f"No screen was recorded for step {index + 1}.", key="no-step-screen")
                return
            self.show_screen(screen, parse, viewing_step(section, index), banner)
            self.view.set_proposal(action)
            return
        ref = self.episodes.step_frame(section, index)
        if ref is None or step is None:
            self.notify(Level.INFO, f"No screen was recorded for step {index + 1}.", key="no-step-screen")
            return
        action = step.executed or (step.proposal.action if step.proposal is not None else None)
        viewing = viewing_step(section, index)

        def shown(screen: Screen) -> None:
            self.show_screen(screen, step.parse, viewing, banner)
            self.view.set_proposal(action)

        self.session.misc.submit(lambda: self.episodes.load_frame(ref), on_done=shown,
                         on_error=lambda f: self.notify_failure("Could not read the step's frame", f))

    def open_screenshot_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a screenshot to inspect", "", IMAGE_FILTER)
        if path:
            self.open_screenshot(Path(path))

    def open_screenshot(self, path: Path) -> None:
        """Load a screenshot and the hierarchy saved beside it, if any (on a worker), and
        parse them for offline inspection.  Opening the hierarchy file finds its screenshot."""
        def load() -> Screen:
            from vision.imageio import image_beside_tree, load_screen_files

            image_path = image_beside_tree(path) if path.suffix.lower() in (".xml", ".uix", ".json") else path
            arr, tree = load_screen_files(image_path, path if image_path != path else None)
            return Screen(image=arr, device=f"file:{image_path.name}", hierarchy_xml=tree)

        def loaded(screen: Screen) -> None:
            viewing = viewing_file(path.name)
            self.show_screen(screen, None, viewing, f"Screenshot {path.name} (offline inspection)")
            self.request_parse(screen, viewing=viewing)

        self.session.misc.submit(load, on_done=loaded,
                         on_error=lambda f: self.notify_failure(f"Could not open {path.name}", f))

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_screenshot(Path(url.toLocalFile()))
                break

    def overlay_image(self) -> QImage:
        """The mirror as shown (frame plus visible overlays) at device resolution."""
        scene = self.view.scene()
        rect = scene.sceneRect()
        img = QImage(int(rect.width()), int(rect.height()), QImage.Format.Format_ARGB32)
        img.fill(0)
        p = QPainter(img)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        scene.render(p, QRectF(0, 0, rect.width(), rect.height()), rect)
        p.end()
        return img

    def export_overlay_dialog(self) -> None:
        if self.view.frame is None:
            self.notify(Level.WARNING, "Nothing to export yet.")
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export overlay PNG", "overlay.png", "PNG (*.png)")
        if path:
            self.export_overlay(Path(path))

    def export_overlay(self, path: Path) -> None:
        img = self.overlay_image()  # rendering must happen on the GUI thread; saving need not

        def save() -> Path:
            tmp = path.with_name(path.stem + ".part.png")
            if not img.save(str(tmp)):
                raise OSError(f"could not write {path} (is the folder writable?)")
            tmp.replace(path)
            return path

        self.session.misc.submit(save, on_done=lambda p: self.notify(Level.INFO, f"Overlay saved to {p}"),
                         on_error=lambda f: self.notify_failure("Export failed", f))

    # ---- action editor (Edit decision, pick on mirror) -----------------------------------
    def open_action_editor(self, action: Action | None, on_accept: Callable[[Action], None]) -> ActionEditor:
        size = self.view.parse.screen_size if self.view.parse else (self.session.device.info.size if self.session.device else None)
        ed = ActionEditor(action, size, self)
        ed.pickRequested.connect(lambda _which: self.view.set_mode(ViewMode.PICK))
        ed.actionAccepted.connect(on_accept)
        ed.finished.connect(lambda _r: self._editor_closed(ed))
        self._editor = ed
        ed.show()
        return ed

    def _editor_closed(self, ed: ActionEditor) -> None:
        if self._editor is ed:
            self._editor = None
        if self.view.mode is ViewMode.PICK:
            self.view.set_mode(ViewMode.INSPECT)
        ed.deleteLater()

    def _on_point_picked(self, point: Point, element_id: str) -> None:
        self.view.set_mode(ViewMode.INSPECT)
        if self._editor is None:
            return
        target = None
        el = self.view.parse.element(element_id) if (element_id and self.view.parse) else None
        if el is not None:
            target = Target(element_id=el.id, point=point, description=element_words(el))
        self._editor.set_picked_point(point, target)
        self._editor.raise_()

    # ---- settings ------------------------------------------------------------------------
    def open_secrets(self) -> Any:
        """The Secrets dialog (``app.gui.guards.VaultController``): names in the vault, add, replace, delete."""
        from app.gui.guards import VaultController

        if getattr(self, "vault_controller", None) is None:
            self.vault_controller = VaultController(lambda: self)
        return self.vault_controller.show()

    def open_settings(self) -> None:
        if self.session.settings is None:
            self.notify(Level.WARNING, "No settings model is loaded.")
            return
        from widgets.settings_dialog import SettingsDialog

        dlg = SettingsDialog(self.session.settings, self)
        dlg.accepted.connect(lambda: self._settings_accepted(dlg.result_model()))
        dlg.finished.connect(dlg.deleteLater)
        dlg.open()

    def _settings_accepted(self, settings: object) -> None:
        if not isinstance(settings, Settings):  # the dialog was left without a valid model
            return
        self.session.settings = settings
        self.session.reset_parser()  # rebuilt with the new configuration on next use
        self.models.settings_changed()
        for layer in Layer:  # the dialog's overlay check boxes drive the Layers tab's
            self.layer_panel.checks[layer].setChecked(bool(getattr(settings.overlay, layer.value)))
        self.layer_panel.set_kind_tags(settings.overlay.kind_tags)

        def save() -> Path:
            from app.settings import save_settings

            return Path(save_settings(settings))

        self.session.misc.submit(save, on_done=lambda p: self.notify(Level.INFO, f"Settings saved to {p}"),
                         on_error=lambda f: self.notify_failure("Could not save settings", f))

    def persist_settings(self) -> None:
        """Save the current settings quietly (the model, planner and autonomy chosen survive a
        restart).  A small file written at once, so that closing the window right after
        cannot lose it."""
        from app.settings import save_settings

        try:
            save_settings(self.session.settings)
        except OSError as exc:
            self.notify(Level.WARNING, "Could not save settings", str(exc), key="settings-save")

    def ensure_model(self, model: str, then: Callable[[], None] | None = None) -> bool:
        """True when ``model`` can be used now; a built-in model that is not running is
        started (then False, and ``then`` runs once it is in use)."""
        from app.model_prefs import is_builtin

        if not is_builtin(model) or self.models.builtin_ready(model):
            return True
        self.models.start_builtin(model, then=then)
        return False
