"""The screen view: a mirrored phone frame with toggleable overlay layers.

Shows the newest numpy RGB frame (older frames that arrive before a repaint are
dropped), the overlay layers of the current ``ScreenParse``, the proposed action's
marker, and hover / selection highlights.  Mouse input becomes intent signals only:
selecting an element (inspect mode), a gesture for the phone (control mode), picking a
point for the action editor, or demonstrating a gesture.  Overlays drawn for an older
frame are hidden once the frame on show is another screen (``set_overlays_current``; a
blinking cursor or the clock ticking does not count).  It never talks to a device.
"""

from __future__ import annotations

import time
from enum import StrEnum

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPixmapCache, QTransform
from PySide6.QtWidgets import QFrame, QGraphicsItem, QGraphicsScene, QGraphicsView, QToolTip

from agent.types import Action, ActionType
from vision.geometry import Point, Rect
from vision.types import Element, Screen, ScreenParse
from widgets.frames import rgb_to_display_qimage, rgb_to_qimage
from widgets.overlays import (
    DEFAULT_STYLES,
    HighlightItem,
    Layer,
    LayerStyle,
    OverlayLayerItem,
    ProposalMarkerItem,
    default_font_px,
)


class ViewMode(StrEnum):
    """What a click on the view means."""

    INSPECT = "inspect"  # click selects an element
    CONTROL = "control"  # tap / long-press / drag is sent to the phone
    PICK = "pick"  # click picks a point for the action editor
    DEMONSTRATE = "demonstrate"  # tap / long-press / drag becomes a demonstrated action


#: Pixmap cache size (KiB) for the overlay layers: about 12 screen-sized ARGB pixmaps.
PIXMAP_CACHE_KB = 160 * 1024

#: Smallest on-screen size (logical px) of overlay labels, whatever the zoom.
MIN_LABEL_PX = 12

#: Overlays are hidden once this share of the screen differs from the frame they were drawn
#: for (a blinking cursor or the status bar's clock stays well below it; a new page does not).
MOVED_FRACTION = 0.01
#: Frames are compared on every this-many-th pixel in each direction.
THUMB_STEP = 16


def _thumb(rgb: np.ndarray) -> np.ndarray:
    """A coarse brightness sample of a frame, to tell a new screen from a blinking cursor."""
    return rgb[::THUMB_STEP, ::THUMB_STEP].astype(np.int16).sum(axis=2)


def moved_on(drawn_for: np.ndarray | None, now: np.ndarray) -> bool:
    """Whether frame ``now`` shows another screen than the one sampled as ``drawn_for``."""
    if drawn_for is None:
        return False
    thumb = _thumb(now)
    if thumb.shape != drawn_for.shape:
        return True
    return float((np.abs(thumb - drawn_for) > 60).mean()) > MOVED_FRACTION


#: A press held at least this long without moving is a long press.
LONG_PRESS_MS = 600
#: A drag longer than this fraction of the screen width is a swipe.
SWIPE_MIN_FRACTION = 0.03


class FrameItem(QGraphicsItem):
    """Paints one RGB frame in device pixels; keeps a copy pre-scaled to the view."""

    def __init__(self) -> None:
        super().__init__()
        self._rgb: np.ndarray | None = None
        self._full: QImage | None = None
        self._scaled: QImage | None = None
        self._scaled_key: tuple[float, float] | None = None
        self._bounds = QRectF(0, 0, 1, 1)
        self.setZValue(0)
        self.setCacheMode(QGraphicsItem.CacheMode.NoCache)

    @property
    def rgb(self) -> np.ndarray | None:
        return self._rgb

    def set_rgb(self, rgb: np.ndarray, scale_hint: float | None = None, dpr: float = 1.0) -> None:
        h, w = rgb.shape[:2]
        if self._bounds.width() != w or self._bounds.height() != h:
            self.prepareGeometryChange()
            self._bounds = QRectF(0, 0, w, h)
        self._rgb = rgb
        self._full = None
        self._scaled = None
        self._scaled_key = None
        if scale_hint is not None and 0 < scale_hint < 1:
            self._prepare(scale_hint, dpr)
        self.update()

    def _prepare(self, scale: float, dpr: float) -> QImage:
        assert self._rgb is not None
        key = (round(scale, 4), dpr)
        if self._scaled is None or self._scaled_key != key:
            img = rgb_to_display_qimage(self._rgb, min(1.0, scale * dpr))
            img.setDevicePixelRatio(dpr)
            self._scaled, self._scaled_key = img, key
        return self._scaled

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if self._rgb is None:
            return
        t = painter.worldTransform()
        scale = t.m11()
        if t.type().value <= QTransform.TransformationType.TxScale.value and 0 < scale < 1 and abs(scale - t.m22()) < 1e-3:
            dpr = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
            img = self._prepare(scale, dpr)
            origin = t.map(QPointF(0, 0))
            painter.save()
            painter.resetTransform()
            painter.drawImage(origin, img)
            painter.restore()
            return
        if self._full is None:
            self._full = rgb_to_qimage(self._rgb)
        painter.drawImage(self._bounds, self._full)


class ScreenView(QGraphicsView):
    """The mirror: frame, overlays, proposal marker, hover details and selection."""

    elementSelected = Signal(str)  # element id, "" when the selection was cleared
    elementHovered = Signal(str)  # element id, "" when nothing is under the pointer
    pointPicked = Signal(object, str)  # Point (device px), element id under it or ""
    actionDemonstrated = Signal(object)  # Action performed by the user on the mirror
    controlGesture = Signal(object)  # Action for the phone, made on the mirror in control mode
    frameShown = Signal(float)  # captured_at of the frame now displayed
    modeChanged = Signal(object)  # the ViewMode now in force

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("screenView")
        self._scene = QGraphicsScene(self)
        self.setScene(self._scene)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setBackgroundBrush(QColor("#202124"))
        self.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.FullViewportUpdate)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setMouseTracking(True)
        self.setMinimumSize(180, 320)

        # every overlay layer keeps a screen-sized pixmap cache (see overlays.py); Qt's
        # default 10 MB pixmap cache holds only a few, so raise it (never lower it)
        QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), PIXMAP_CACHE_KB))
        self._frame_item = FrameItem()
        self._scene.addItem(self._frame_item)
        self._styles: dict[Layer, LayerStyle] = dict(DEFAULT_STYLES)
        self._layers: dict[Layer, OverlayLayerItem] = {}
        for i, layer in enumerate(Layer):
            item = OverlayLayerItem(layer, self._styles[layer], z=10 + i)
            self._scene.addItem(item)
            self._layers[layer] = item
        self._hover_item = HighlightItem("#ffffff", 1.0, z=40)
        self._selected_item = HighlightItem("#ffea00", 2.0, z=41)
        self._marker = ProposalMarkerItem()
        self._demo_trail = HighlightItem("#00e676", 1.0, z=60)
        for extra in (self._hover_item, self._selected_item, self._marker, self._demo_trail):
            self._scene.addItem(extra)

        self._parse: ScreenParse | None = None
        self._marks: dict[str, str] | None = None
        self._overlays_current = True
        self._parsed_thumb: np.ndarray | None = None
        self._screen_rect: Rect | None = None
        self._pending: tuple[np.ndarray, float] | None = None
        self._apply_scheduled = False
        self._frames_shown = 0
        self._frames_dropped = 0
        self._mode = ViewMode.INSPECT
        self._selected_id = ""
        self._hovered_id = ""
        self._hover_details = ""
        # (viewport position, device point, time) of the press; the device point is taken at
        # press time because the view may re-fit before the release (a notice appearing)
        self._press: tuple[QPointF, Point | None, float] | None = None
        self._typed = ""  # text typed on the mirror while demonstrating
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    # ---- frames --------------------------------------------------------------------
    def set_frame(self, frame: np.ndarray | Screen, captured_at: float | None = None) -> None:
        """Show ``frame`` soon; a newer frame given before the repaint replaces it."""
        if isinstance(frame, Screen):
            captured_at = frame.captured_at if captured_at is None else captured_at
            frame = frame.image
        if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            raise ValueError(f"expected an HxWx3 uint8 RGB frame, got {frame.shape} {frame.dtype}")
        if self._pending is not None:
            self._frames_dropped += 1
        self._pending = (frame, time.time() if captured_at is None else captured_at)
        if not self._apply_scheduled:
            self._apply_scheduled = True
            QTimer.singleShot(0, self._apply_pending)

    def flush(self) -> None:
        """Apply a pending frame now (tests and benchmarks)."""
        self._apply_pending()

    def _apply_pending(self) -> None:
        self._apply_scheduled = False
        if self._pending is None:
            return
        rgb, captured_at = self._pending
        self._pending = None
        h, w = rgb.shape[:2]
        resized = self._screen_rect is None or (self._screen_rect.width, self._screen_rect.height) != (w, h)
        self._screen_rect = Rect(0, 0, w, h)
        scale = self.transform().m11() if not resized else None
        self._frame_item.set_rgb(rgb, scale_hint=scale, dpr=self.devicePixelRatioF())
        if resized:
            self._scene.setSceneRect(QRectF(0, 0, w, h))
            self._fit()
        self._frames_shown += 1
        if self._parse is not None and self._overlays_current and moved_on(self._parsed_thumb, rgb):
            self.set_overlays_current(False)  # the screen moved on: no boxes over the wrong things
        self.frameShown.emit(captured_at)

    @property
    def frame(self) -> np.ndarray | None:
        return self._frame_item.rgb

    @property
    def frames_shown(self) -> int:
        return self._frames_shown

    @property
    def frames_dropped(self) -> int:
        return self._frames_dropped

    # ---- parse and layers ----------------------------------------------------------
    def set_parse(self, parse: ScreenParse | None, marks: dict[str, str] | None = None) -> None:
        """Draw ``parse`` on the overlay layers (``marks`` maps element id to a set-of-marks id)."""
        self._parse = parse
        self._marks = marks
        if parse is not None and self._screen_rect is None:
            self._screen_rect = Rect(0, 0, parse.screen_size.width, parse.screen_size.height)
            self._scene.setSceneRect(QRectF(0, 0, parse.screen_size.width, parse.screen_size.height))
            self._fit()
        self._draw_layers()
        # drawn for the frame on show, or for the one about to be shown (a screenshot opened
        # with its parse); a later frame that shows another screen hides them until the next parse
        drawn_for = self._pending[0] if self._pending is not None else self._frame_item.rgb
        self._parsed_thumb = _thumb(drawn_for) if drawn_for is not None else None
        self.set_overlays_current(True)
        if parse is None or (self._selected_id and parse.element(self._selected_id) is None):
            self._selected_id = ""
            self._selected_item.set_rect(None, None)
        elif self._selected_id:
            el = parse.element(self._selected_id)
            self._selected_item.set_rect(el.rect if el else None, self._screen_rect)
        self._set_hover(None)

    def _draw_layers(self) -> None:
        """Draw every visible layer bottom to top; each keeps its captions off those of the
        visible layers below it (set-of-marks ids never cover OCR words, icon names never
        cover widget kinds).  A hidden layer is not drawn (a long list's set-of-marks ids
        cost seconds): turning it on draws the layers again."""
        taken: list[QRectF] = []
        for layer in Layer:
            item = self._layers[layer]
            if not self._styles[layer].visible:
                item.set_parse(None)  # drawn when it is turned on (that redraws every layer)
                continue
            item.set_parse(self._parse, self._marks, avoid=taken)
            taken = taken + item.placed

    @property
    def parse(self) -> ScreenParse | None:
        return self._parse

    def set_overlays_current(self, current: bool) -> None:
        """Show the overlays (``True``: they were drawn for the frame on show) or hide
        them until the next parse (``False``: the phone has moved on since)."""
        self._overlays_current = current
        for layer, item in self._layers.items():
            item.setVisible(current and self._styles[layer].visible)

    @property
    def overlays_current(self) -> bool:
        return self._overlays_current

    def layer_style(self, layer: Layer) -> LayerStyle:
        return self._styles[layer]

    def layer_styles(self) -> dict[Layer, LayerStyle]:
        return dict(self._styles)

    def set_layer_style(self, layer: Layer, style: LayerStyle) -> None:
        before = self._styles[layer]
        self._styles[layer] = style
        self._layers[layer].set_style(style)
        if not self._overlays_current:
            self._layers[layer].setVisible(False)
        if (style.visible, style.tags) != (before.visible, before.tags) and self._parse is not None:
            self._draw_layers()  # the layers above place their captions around this one's, or not

    def set_layer_visible(self, layer: Layer, visible: bool) -> None:
        from dataclasses import replace

        self.set_layer_style(layer, replace(self._styles[layer], visible=visible))

    def layer_item(self, layer: Layer) -> OverlayLayerItem:
        return self._layers[layer]

    # ---- proposal marker -----------------------------------------------------------
    def set_proposal(self, action: Action | None) -> None:
        self._marker.set_action(action, self._screen_rect)

    @property
    def proposal(self) -> Action | None:
        return self._marker.action

    # ---- selection -----------------------------------------------------------------
    def select_element(self, element_id: str) -> None:
        """Select without emitting (used to sync from the inspector)."""
        el = self._parse.element(element_id) if (self._parse and element_id) else None
        self._selected_id = el.id if el else ""
        self._selected_item.set_rect(el.rect if el else None, self._screen_rect)

    def select_rect(self, rect: Rect | None) -> None:
        """Outline ``rect`` as the selection (a place no element stands for, such as a
        disagreement about something only the tree or only the pixels have)."""
        self._selected_id = ""
        self._selected_item.set_rect(rect, self._screen_rect)

    @property
    def selected_id(self) -> str:
        return self._selected_id

    @property
    def hover_details(self) -> str:
        return self._hover_details

    # ---- modes ---------------------------------------------------------------------
    def set_mode(self, mode: ViewMode) -> None:
        self._mode = ViewMode(mode)
        self._typed = ""
        if self._mode is ViewMode.DEMONSTRATE:
            self.setFocus()
        cursor = {
            ViewMode.INSPECT: Qt.CursorShape.ArrowCursor,
            ViewMode.CONTROL: Qt.CursorShape.PointingHandCursor,
            ViewMode.PICK: Qt.CursorShape.CrossCursor,
            ViewMode.DEMONSTRATE: Qt.CursorShape.PointingHandCursor,
        }[self._mode]
        self.viewport().setCursor(cursor)
        self.modeChanged.emit(self._mode)

    @property
    def mode(self) -> ViewMode:
        return self._mode

    # ---- geometry ------------------------------------------------------------------
    def _fit(self) -> None:
        if self._screen_rect is not None:
            self.fitInView(self._scene.sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
            self._update_label_size()

    def _update_label_size(self) -> None:
        """Keep overlay labels at least MIN_LABEL_PX on screen however small the mirror is."""
        scale = self.transform().m11()
        if self._screen_rect is None or scale <= 0:
            return
        font_px = max(default_font_px(self._screen_rect.width), round(MIN_LABEL_PX / scale))
        current = self._layers[Layer.BLOCKS].font_px
        if current is None or abs(font_px - current) > 0.1 * current:
            for item in self._layers.values():
                item.set_font_px(font_px, redraw=False)
            if self._parse is not None:
                self._draw_layers()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def device_point(self, view_pos: QPointF) -> Point | None:
        """The device pixel under a viewport position, or None off the screen."""
        if self._screen_rect is None:
            return None
        sp = self.mapToScene(view_pos.toPoint())
        x, y = int(sp.x()), int(sp.y())
        if not (0 <= x < self._screen_rect.width and 0 <= y < self._screen_rect.height):
            return None
        return Point(x, y)

    def view_pos_of(self, p: Point) -> QPointF:
        """The viewport position showing device pixel ``p`` (for tests and demos)."""
        return QPointF(self.mapFromScene(QPointF(p.x + 0.5, p.y + 0.5)))

    def element_at(self, p: Point) -> Element | None:
        if self._parse is None:
            return None
        hits = self._parse.elements_at(p.x, p.y)
        return hits[0] if hits else None

    # ---- keyboard (typing while demonstrating) ----------------------------------------
    @property
    def typed_text(self) -> str:
        return self._typed

    def keyPressEvent(self, event) -> None:
        """While demonstrating, typed keys build a "type" action; Enter sends it, Esc clears."""
        if self._mode is not ViewMode.DEMONSTRATE:
            super().keyPressEvent(event)
            return
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if self._typed:
                text, self._typed = self._typed, ""
                self.set_proposal(None)
                self.actionDemonstrated.emit(Action.type_text(text))
        elif key == Qt.Key.Key_Escape:
            self._typed = ""
            self.set_proposal(None)
        elif key == Qt.Key.Key_Backspace:
            self._typed = self._typed[:-1]
            self.set_proposal(Action.type_text(self._typed) if self._typed else None)
        elif event.text() and event.text().isprintable():
            self._typed += event.text()
            self.set_proposal(Action.type_text(self._typed))
        else:
            super().keyPressEvent(event)
        event.accept()

    # ---- mouse ---------------------------------------------------------------------
    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        p = self.device_point(event.position())
        if self._press is not None and self._mode in (ViewMode.DEMONSTRATE, ViewMode.CONTROL) and p is not None:
            start = self._press[1]
            if start is not None:
                self._demo_trail.set_rect(
                    Rect(min(start.x, p.x), min(start.y, p.y), max(start.x, p.x) + 1, max(start.y, p.y) + 1),
                    self._screen_rect,
                )
        el = self.element_at(p) if p is not None else None
        self._set_hover(el)
        if el is not None and self._hover_details:
            QToolTip.showText(event.globalPosition().toPoint(), self._hover_details, self)
        else:
            QToolTip.hideText()
        super().mouseMoveEvent(event)

    def leaveEvent(self, event) -> None:
        self._set_hover(None)
        super().leaveEvent(event)

    def _set_hover(self, el: Element | None) -> None:
        new_id = el.id if el else ""
        if new_id == self._hovered_id:
            return
        self._hovered_id = new_id
        self._hover_details = element_details(el, self._parse) if el else ""
        self._hover_item.set_rect(el.rect if el else None, self._screen_rect)
        self.elementHovered.emit(new_id)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._press = (event.position(), self.device_point(event.position()), time.monotonic())
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._press is None:
            super().mouseReleaseEvent(event)
            return
        start_pos, start, t0 = self._press
        self._press = None
        self._demo_trail.set_rect(None, None)
        held_ms = (time.monotonic() - t0) * 1000
        moved = (event.position() - start_pos).manhattanLength() > 3
        end = self.device_point(event.position()) if moved else start
        if start is None:
            return
        if self._mode is ViewMode.INSPECT:
            el = self.element_at(start)
            self._selected_id = el.id if el else ""
            self._selected_item.set_rect(el.rect if el else None, self._screen_rect)
            self.elementSelected.emit(self._selected_id)
        elif self._mode is ViewMode.PICK:
            el = self.element_at(start)
            self.pointPicked.emit(start, el.id if el else "")
        elif self._mode is ViewMode.CONTROL:
            element = self.element_at(start) if self._overlays_current else None
            self.controlGesture.emit(gesture_to_action(start, end or start, held_ms, self._screen_rect, element))
        else:
            action = gesture_to_action(start, end or start, held_ms, self._screen_rect, self.element_at(start))
            self.actionDemonstrated.emit(action)
        event.accept()


def gesture_to_action(start: Point, end: Point, held_ms: float, screen: Rect | None, element: Element | None) -> Action:
    """Turn a press/drag/release on the mirror into a tap, long press or swipe."""
    from agent.types import Target

    width = screen.width if screen is not None else 1080
    if start.distance_to(end) >= SWIPE_MIN_FRACTION * width:
        swipe = Action.swipe(start.x, start.y, end.x, end.y, duration_ms=max(100, min(2000, int(held_ms))))
        from dataclasses import replace

        return replace(swipe, direction=swipe.finger_direction())
    target = None
    if element is not None:
        target = Target(element_id=element.id, point=start, description=element_words(element))
    if held_ms >= LONG_PRESS_MS:
        return Action(ActionType.LONG_PRESS, touch=start, target=target, duration_ms=int(held_ms))
    return Action.tap(start.x, start.y, target=target)


_STATEFUL = ("switch", "check_box", "radio_group", "seek_bar", "rating_bar")


def element_words(el: Element) -> str:
    """How a person names an element: "Airplane mode switch", "Bluetooth", "search button"."""
    kind = el.kind.value.replace("_", " ")
    if el.kind.value in _STATEFUL:
        name = el.label or el.text
        return f"{name} {kind}".strip()
    name = el.display_name
    if not name:
        return kind
    return name if el.text else f"{name} {kind}" if el.kind.value == "button" else name


def element_details(el: Element, parse: ScreenParse | None) -> str:
    """The multi-line description shown when hovering an element."""
    lines = [f"{el.kind.value.replace('_', ' ')}  ·  {el.id}"]
    if el.text:
        lines.append(f"text: {el.text}")
    if el.label:
        lines.append(f"label: {el.label}")
    if el.resource_id:
        lines.append(f"id: {el.resource_id}")
    flags = [n for n in ("clickable", "checkable", "scrollable", "focused", "selected") if getattr(el, n)]
    if el.checked is not None:
        flags.append("checked" if el.checked else "unchecked")
    if not el.enabled:
        flags.append("disabled")
    if flags:
        lines.append(", ".join(flags))
    lines.append(f"source: {el.source.value}  conf {el.confidence:.2f}")
    lines.append(f"bounds: {el.rect.to_bounds_string()}")
    if parse is not None:
        block = parse.block_of(el.id)
        if block is not None:
            lines.append(f"block: {block.caption or block.role}")
    return "\n".join(lines)
