"""Overlay layers drawn over the mirrored screen, and how each one paints a parse.

A layer is a ``QGraphicsObject`` covering the screen in device pixels.  It records its
drawing into a ``QPicture`` once per parse (or style change) and replays it on every
paint, so a new mirror frame costs nothing here.  Captions belong to their box: inside it
or against it, with a leader when a little away, never on a neighbour, on words on the
screen or on another caption, of this layer or of a visible layer below it (the view
passes those down as ``avoid``); one that finds no such place is left out
(``widgets.captions``).  An element is captioned with its own name; kind words ("button",
"content") are off unless the layer's ``tags`` asks for them (the colours' legend and the
hover card say the kind).  A soft keyboard (a ``keyboard`` block) is drawn as that one
block, not as thirty keys.  Elements under a dialog, sheet or menu (``Element.covered``)
are drawn grey, dashed and without captions.  Pure drawing: no I/O, no parsing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
    QPicture,
    QPolygonF,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsObject

from agent.types import Action, ActionType
from vision.geometry import Rect
from vision.types import KEYBOARD_ROLE, Element, ElementKind, ElementSource, ScreenParse, TextSpan
from widgets.captions import Caption, CaptionBoard, CaptionPlacer, draw_caption, qrect


class Layer(StrEnum):
    """The overlay layers, bottom to top."""

    BLOCKS = "blocks"
    WIDGETS = "widgets"
    ACCESSIBILITY = "accessibility"
    OCR_TEXT = "ocr_text"
    ICON_LABELS = "icon_labels"
    MARKS = "marks"
    DISAGREEMENTS = "disagreements"

    @property
    def caption(self) -> str:
        """The layer's name as the layer panel shows it."""
        return _TITLES[self]


_TITLES = {
    Layer.BLOCKS: "Semantic blocks",
    Layer.WIDGETS: "Widgets by class",
    Layer.ACCESSIBILITY: "Accessibility tree",
    Layer.OCR_TEXT: "OCR text",
    Layer.ICON_LABELS: "Icon labels",
    Layer.MARKS: "Set-of-marks ids",
    Layer.DISAGREEMENTS: "Vision vs tree disagreements",
}


@dataclass(frozen=True, slots=True)
class LayerStyle:
    """How one layer is shown: visible or not, its colour (``#rrggbb``), opacity (0..1) and
    whether boxes carry their kind's word (``tags``: widgets and blocks only)."""

    visible: bool = True
    color: str = "#1e88e5"
    opacity: float = 0.85
    tags: bool = False  # kind words on the boxes ("button", a block's role)

    def __post_init__(self) -> None:
        if not 0.0 <= self.opacity <= 1.0:
            raise ValueError(f"opacity must be within 0..1, got {self.opacity}")
        if not QColor(self.color).isValid():
            raise ValueError(f"not a colour: {self.color!r}")


DEFAULT_STYLES: dict[Layer, LayerStyle] = {
    Layer.BLOCKS: LayerStyle(True, "#8e24aa", 0.8),
    Layer.WIDGETS: LayerStyle(True, "#1e88e5", 0.85),
    Layer.ACCESSIBILITY: LayerStyle(False, "#00897b", 0.7),
    Layer.OCR_TEXT: LayerStyle(False, "#f4511e", 0.85),
    Layer.ICON_LABELS: LayerStyle(True, "#fb8c00", 0.95),
    Layer.MARKS: LayerStyle(False, "#d81b60", 0.95),
    Layer.DISAGREEMENTS: LayerStyle(True, "#e53935", 0.9),
}

#: Per-class colours for the widget layer (the layer colour is used for anything else).
CLASS_COLORS: dict[ElementKind, str] = {
    ElementKind.BUTTON: "#1e88e5",
    ElementKind.EDIT_TEXT: "#43a047",
    ElementKind.IMAGE: "#6d4c41",
    ElementKind.SWITCH: "#00acc1",
    ElementKind.CHECK_BOX: "#00897b",
    ElementKind.RADIO_GROUP: "#5e35b1",
    ElementKind.SPINNER: "#3949ab",
    ElementKind.SEEK_BAR: "#c0ca33",
    ElementKind.RATING_BAR: "#fdd835",
    ElementKind.PAGE_INDICATOR: "#8d6e63",
    ElementKind.STATUS_BAR: "#757575",
    ElementKind.NAVIGATION_BAR: "#757575",
}


#: Colour of elements a dialog covers (drawn dashed, without tags).
COVERED_COLOR = "#9e9e9e"


def with_alpha(color: str, alpha: int) -> QColor:
    c = QColor(color)
    c.setAlpha(alpha)
    return c


class _PictureLayer(QGraphicsObject):
    """A screen-sized item that replays a recorded ``QPicture``."""

    def __init__(self, z: float) -> None:
        super().__init__()
        self._picture = QPicture()
        self._bounds = QRectF(0, 0, 1, 1)
        self.setZValue(z)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setAcceptHoverEvents(False)
        # replaying vector drawing every frame is the mirror's main cost: cache it as a
        # pixmap at screen resolution, redrawn only when the layer or the zoom changes
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(self, painter: QPainter, option, widget=None) -> None:
        self._picture.play(painter)

    def _record(self, bounds: QRectF, draw) -> None:
        self.prepareGeometryChange()
        self._bounds = bounds
        pic = QPicture()
        p = QPainter(pic)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        draw(p)
        p.end()
        self._picture = pic
        self.update()


class OverlayLayerItem(_PictureLayer):
    """One overlay layer of a parse."""

    def __init__(self, layer: Layer, style: LayerStyle, z: float) -> None:
        super().__init__(z)
        self.layer = layer
        self.style = style
        self._parse: ScreenParse | None = None
        self._marks: dict[str, str] = {}
        self.font_px: int | None = None  # None: default_font_px of the screen
        self.avoid: list[QRectF] = []  # captions of the visible layers below: this layer's keep off them
        self.captions: list[Caption] = []  # this layer's captions (device px)
        self.setVisible(style.visible)
        self.setOpacity(style.opacity)

    @property
    def placed(self) -> list[QRectF]:
        """Where this layer's captions went (device px)."""
        return [c.rect for c in self.captions]

    def set_style(self, style: LayerStyle) -> None:
        recolor = style.color != self.style.color or style.tags != self.style.tags
        self.style = style
        self.setVisible(style.visible)
        self.setOpacity(style.opacity)
        if recolor:
            self._redraw()

    def set_font_px(self, font_px: int | None, *, redraw: bool = True) -> None:
        """Label size in device pixels (the view keeps labels readable when zoomed out)."""
        if font_px != self.font_px:
            self.font_px = font_px
            if self._parse is not None and redraw:
                self._redraw()

    def set_parse(self, parse: ScreenParse | None, marks: dict[str, str] | None = None,
                  avoid: list[QRectF] | None = None) -> None:
        """Draw ``parse``; tags keep off ``avoid`` (the tags of the visible layers below)."""
        self._parse = parse
        self._marks = marks or {}
        if avoid is not None:
            self.avoid = list(avoid)
        self._redraw()

    def _redraw(self) -> None:
        parse = self._parse
        self.captions = []
        if parse is None:
            self._record(QRectF(0, 0, 1, 1), lambda p: None)
            return
        size = parse.screen_size
        bounds = QRectF(0, 0, size.width, size.height)
        ctx = Paint(self.style.color, self._marks, self.font_px or default_font_px(size.width),
                    CaptionBoard(list(self.avoid)), self.style.tags)
        self._record(bounds, lambda p: _DRAWERS[self.layer](p, parse, ctx))
        self.captions = ctx.board.placed


# ---- drawing of each layer ----------------------------------------------------------


def default_font_px(screen_width: int) -> int:
    """Label size in device pixels when the screen is shown at its native size."""
    return max(12, screen_width // 45)


@dataclass(frozen=True, slots=True)
class Paint:
    """What a layer's drawing needs beside the parse: its colour, the set-of-marks ids, the
    caption size, the captions already placed, and whether kind words are shown."""

    color: str
    marks: dict[str, str]
    font_px: int
    board: CaptionBoard
    tags: bool = False


def keyboard_keys(parse: ScreenParse) -> frozenset[str]:
    """The ids of the soft keyboard's keys (drawn as the keyboard's one block)."""
    return frozenset(i for b in parse.blocks if b.role == KEYBOARD_ROLE for i in b.element_ids)


def own_name(e: Element) -> str:
    """An element's own name: its label's first part (a row's label also lists its summary)."""
    return " ".join(e.label.split(" · ")[0].split())[:40]


def _label_font(font_px: int) -> QFont:
    f = QFont()
    f.setPixelSize(max(8, int(font_px)))
    f.setBold(True)
    return f


def _pen(color: QColor | str, width: float, style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> QPen:
    pen = QPen(QColor(color))
    pen.setWidthF(width)
    pen.setStyle(style)
    pen.setCosmetic(False)
    return pen


def _line_width(parse: ScreenParse) -> float:
    return max(2.0, parse.screen_size.width / 360)


def _draw_covered(p: QPainter, parse: ScreenParse, lw: float) -> None:
    """Covered elements: grey, dashed, unfilled; the covering panel's outline on top."""
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.setPen(_pen(COVERED_COLOR, max(1.5, lw * 0.6), Qt.PenStyle.DashLine))
    for e in parse.elements:
        if e.covered and e.kind is not ElementKind.CONTAINER:
            p.drawRect(qrect(e.rect))
    if parse.occluder is not None:
        p.setPen(_pen(COVERED_COLOR, lw))
        p.drawRect(qrect(parse.occluder))


def _draw_widgets(p: QPainter, parse: ScreenParse, ctx: Paint) -> None:
    lw = _line_width(parse)
    font = _label_font(ctx.font_px)
    font.setPixelSize(max(10, font.pixelSize() * 3 // 4))
    placer = CaptionPlacer(parse, font, ctx.board)
    keys = keyboard_keys(parse)
    _draw_covered(p, parse, lw)
    for e in parse.elements:
        if e.kind in (ElementKind.TEXT, ElementKind.CONTAINER) or e.source is ElementSource.OCR or e.covered \
                or e.id in keys:
            continue
        c = CLASS_COLORS.get(e.kind, ctx.color)
        p.setBrush(with_alpha(c, 28))
        p.setPen(_pen(c, lw))
        p.drawRect(qrect(e.rect))
        if ctx.tags and e.kind not in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR) and e.rect.height > 24:
            word = e.kind.value.replace("_", " ")
            draw_caption(p, placer.place(word, e.rect), with_alpha(c, 210), font)


def _draw_accessibility(p: QPainter, parse: ScreenParse, ctx: Paint) -> None:
    lw = max(1.5, _line_width(parse) * 0.6)
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.setPen(_pen(ctx.color, lw, Qt.PenStyle.DashLine))
    for e in parse.elements:
        if e.source in (ElementSource.HIERARCHY, ElementSource.FUSED):
            p.setPen(_pen(COVERED_COLOR if e.covered else ctx.color, lw, Qt.PenStyle.DashLine))
            p.drawRect(qrect(e.rect))


def _draw_ocr(p: QPainter, parse: ScreenParse, ctx: Paint) -> None:
    lw = max(1.5, _line_width(parse) * 0.6)
    font = _label_font(ctx.font_px)
    font.setBold(False)
    font.setPixelSize(max(10, font.pixelSize() * 2 // 3))
    placer = CaptionPlacer(parse, font, ctx.board)
    spans: list[TextSpan | Element] = list(parse.text_spans)
    if not spans:  # fall back to text elements read by OCR
        spans = [e for e in parse.elements if e.source is ElementSource.OCR and e.text]
    panel = parse.occluder
    for s in spans:
        hidden = panel is not None and not panel.contains(s.rect.center)
        c = COVERED_COLOR if hidden else ctx.color
        p.setBrush(with_alpha(c, 40))
        p.setPen(_pen(c, lw, Qt.PenStyle.DashLine if hidden else Qt.PenStyle.SolidLine))
        p.drawRect(qrect(s.rect))
        if not hidden:
            draw_caption(p, placer.place(s.text[:40], s.rect, inside_first=False), with_alpha(ctx.color, 220), font)


def _draw_icon_labels(p: QPainter, parse: ScreenParse, ctx: Paint) -> None:
    font = _label_font(ctx.font_px)
    font.setPixelSize(max(10, font.pixelSize() * 3 // 4))
    lw = _line_width(parse)
    placer = CaptionPlacer(parse, font, ctx.board)
    keys = keyboard_keys(parse)
    for e in parse.elements:
        if e.label and not e.text and e.kind not in (ElementKind.CONTAINER, ElementKind.TEXT) and e.id not in keys:
            p.setBrush(Qt.BrushStyle.NoBrush)
            if e.covered:
                p.setPen(_pen(COVERED_COLOR, lw * 0.6, Qt.PenStyle.DashLine))
                p.drawRect(qrect(e.rect))
                continue
            p.setPen(_pen(ctx.color, lw))  # solid: dotted wide pens cost ~10x more to rasterise
            p.drawRect(qrect(e.rect))
            draw_caption(p, placer.place(own_name(e), e.rect), with_alpha(ctx.color, 230), font, QColor("black"))


def _draw_blocks(p: QPainter, parse: ScreenParse, ctx: Paint) -> None:
    lw = _line_width(parse) * 1.6
    font = _label_font(ctx.font_px)
    placer = CaptionPlacer(parse, font, ctx.board)
    for b in parse.blocks:
        p.setBrush(with_alpha(ctx.color, 18))
        p.setPen(_pen(ctx.color, lw, Qt.PenStyle.DashLine))
        p.drawRoundedRect(qrect(b.rect), 8, 8)
        if b.active_child:
            active = parse.element(b.active_child)
            if active is not None:
                p.setBrush(with_alpha("#ffd600", 90))
                p.setPen(_pen("#ffd600", lw))
                p.drawRect(qrect(active.rect))
                draw_caption(p, placer.place("active tab", active.rect), with_alpha("#ffd600", 235), font, QColor("black"))
        caption = b.caption or (b.role.replace("_", " ") if ctx.tags or b.role == KEYBOARD_ROLE else "")
        draw_caption(p, placer.place(caption[:48], b.rect), with_alpha(ctx.color, 225), font)


def _draw_marks(p: QPainter, parse: ScreenParse, ctx: Paint) -> None:
    font = _label_font(ctx.font_px)
    placer = CaptionPlacer(parse, font, ctx.board)
    for e in parse.elements:
        if e.covered:
            continue  # no id to name: a tap would not reach it
        mark = ctx.marks.get(e.id, e.id)
        draw_caption(p, placer.place(mark, e.rect), with_alpha(ctx.color, 235), font)


#: The tag and outline of each kind of tree/pixel disagreement (unknown kinds: hatched).
_DISAGREEMENT_LOOK: dict[str, tuple[str, Qt.PenStyle, bool]] = {
    "only_in_tree": ("tree only", Qt.PenStyle.DashLine, False),
    "not_visible": ("tree only", Qt.PenStyle.DashLine, False),
    "only_on_screen": ("screen only", Qt.PenStyle.SolidLine, True),
    "missing_in_tree": ("screen only", Qt.PenStyle.SolidLine, True),
    "text_mismatch": ("other words", Qt.PenStyle.SolidLine, False),
    "unnamed_in_tree": ("no name in tree", Qt.PenStyle.DotLine, False),
}


def _draw_disagreements(p: QPainter, parse: ScreenParse, ctx: Paint) -> None:
    """What the tree has and the pixels do not show (dashed), what the pixels show and
    the tree lacks (hatched), and different words or a missing name (solid, dotted)."""
    lw = _line_width(parse) * 1.5
    font = _label_font(ctx.font_px)
    font.setPixelSize(max(10, font.pixelSize() * 3 // 4))
    placer = CaptionPlacer(parse, font, ctx.board)
    color = ctx.color
    for d in parse.disagreements:
        word, style, hatched = _DISAGREEMENT_LOOK.get(d.kind, (d.kind.replace("_", " "), Qt.PenStyle.SolidLine, True))
        p.setBrush(QBrush(with_alpha(color, 110), Qt.BrushStyle.BDiagPattern) if hatched else Qt.BrushStyle.NoBrush)
        p.setPen(_pen(color, lw, style))
        p.drawRect(qrect(d.rect))
        draw_caption(p, placer.place(word, d.rect), with_alpha(color, 235), font)


_DRAWERS = {
    Layer.WIDGETS: _draw_widgets,
    Layer.ACCESSIBILITY: _draw_accessibility,
    Layer.OCR_TEXT: _draw_ocr,
    Layer.ICON_LABELS: _draw_icon_labels,
    Layer.BLOCKS: _draw_blocks,
    Layer.MARKS: _draw_marks,
    Layer.DISAGREEMENTS: _draw_disagreements,
}


# ---- proposal marker and selection --------------------------------------------------


class ProposalMarkerItem(_PictureLayer):
    """Where the proposed action will land: tap point, swipe arrow, or text to type."""

    COLOR = "#00e676"

    def __init__(self) -> None:
        super().__init__(z=50)
        self.action: Action | None = None

    def set_action(self, action: Action | None, screen: Rect | None) -> None:
        self.action = action
        if action is None or screen is None:
            self._record(QRectF(0, 0, 1, 1), lambda p: None)
            return
        self._record(qrect(screen), lambda p: _draw_action(p, action, screen))


def _draw_action(p: QPainter, action: Action, screen: Rect) -> None:
    color = QColor(ProposalMarkerItem.COLOR)
    unit = max(6.0, screen.width / 60)
    font = QFont()
    font.setPixelSize(int(unit * 2.2))
    font.setBold(True)
    t = action.type
    if t in (ActionType.TAP, ActionType.LONG_PRESS) and action.touch is not None:
        c = QPointF(action.touch.x, action.touch.y)
        p.setPen(_pen("black", unit * 0.9))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawEllipse(c, unit * 3, unit * 3)
        p.setPen(_pen(color, unit * 0.6))
        p.drawEllipse(c, unit * 3, unit * 3)
        p.setBrush(color)
        p.drawEllipse(c, unit * 0.9, unit * 0.9)
        if t is ActionType.LONG_PRESS:
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawEllipse(c, unit * 4.5, unit * 4.5)
        p.drawLine(c + QPointF(-unit * 5, 0), c + QPointF(-unit * 3.2, 0))
        p.drawLine(c + QPointF(unit * 3.2, 0), c + QPointF(unit * 5, 0))
        p.drawLine(c + QPointF(0, -unit * 5), c + QPointF(0, -unit * 3.2))
        p.drawLine(c + QPointF(0, unit * 3.2), c + QPointF(0, unit * 5))
    elif t is ActionType.SWIPE:
        a, b = _swipe_points(action, screen)
        for pen_color, width in (("black", unit * 1.4), (color, unit * 0.8)):
            p.setPen(_pen(pen_color, width))
            p.drawLine(a, b)
        path = _arrow_head(a, b, unit * 3.5)
        p.setPen(_pen("black", unit * 0.4))
        p.setBrush(color)
        p.drawPath(path)
        p.drawEllipse(a, unit, unit)
    if t is ActionType.TYPE and action.text:
        text = f"⌨ {action.text}"
        fm = QFontMetricsF(font)
        w = fm.horizontalAdvance(text) + unit * 2
        h = fm.height() + unit
        x = (screen.width - w) / 2
        y = screen.height * 0.42
        p.setPen(_pen("black", unit * 0.3))
        p.setBrush(with_alpha(ProposalMarkerItem.COLOR, 235))
        p.drawRoundedRect(QRectF(x, y, w, h), unit, unit)
        p.setPen(QColor("black"))
        p.setFont(font)
        p.drawText(QRectF(x, y, w, h), Qt.AlignmentFlag.AlignCenter, text)
    if t not in (ActionType.TAP, ActionType.LONG_PRESS, ActionType.SWIPE, ActionType.TYPE):
        text = action.describe()
        fm = QFontMetricsF(font)
        w = fm.horizontalAdvance(text) + unit * 2
        h = fm.height() + unit
        p.setPen(_pen("black", unit * 0.3))
        p.setBrush(with_alpha(ProposalMarkerItem.COLOR, 235))
        r = QRectF((screen.width - w) / 2, screen.height * 0.85, w, h)
        p.drawRoundedRect(r, unit, unit)
        p.setPen(QColor("black"))
        p.setFont(font)
        p.drawText(r, Qt.AlignmentFlag.AlignCenter, text)


def _swipe_points(action: Action, screen: Rect) -> tuple[QPointF, QPointF]:
    if action.touch is not None and action.lift is not None:
        return QPointF(action.touch.x, action.touch.y), QPointF(action.lift.x, action.lift.y)
    d = action.finger_direction()
    cx, cy = screen.width / 2, screen.height / 2
    dx, dy = {"up": (0, -0.3), "down": (0, 0.3), "left": (-0.3, 0), "right": (0.3, 0)}[d.value if d else "up"]
    a = QPointF(cx - dx * screen.width, cy - dy * screen.height)
    b = QPointF(cx + dx * screen.width, cy + dy * screen.height)
    return a, b


def _arrow_head(a: QPointF, b: QPointF, size: float) -> QPainterPath:
    import math

    ang = math.atan2(b.y() - a.y(), b.x() - a.x())
    left = QPointF(b.x() - size * math.cos(ang - 0.45), b.y() - size * math.sin(ang - 0.45))
    right = QPointF(b.x() - size * math.cos(ang + 0.45), b.y() - size * math.sin(ang + 0.45))
    path = QPainterPath()
    path.addPolygon(QPolygonF([b, left, right, b]))
    return path


class HighlightItem(_PictureLayer):
    """The selected (solid) or hovered (thin) element's outline."""

    def __init__(self, color: str, width_factor: float, z: float) -> None:
        super().__init__(z)
        self.color = color
        self.width_factor = width_factor
        self.rect: Rect | None = None

    def set_rect(self, rect: Rect | None, screen: Rect | None) -> None:
        if rect == self.rect:
            return
        self.rect = rect
        if rect is None or screen is None:
            self._record(QRectF(0, 0, 1, 1), lambda p: None)
            return
        lw = max(2.0, screen.width / 360) * self.width_factor

        def draw(p: QPainter) -> None:
            p.setBrush(with_alpha(self.color, 40))
            p.setPen(_pen(self.color, lw))
            p.drawRect(qrect(rect))

        self._record(qrect(screen), draw)


def styles_with(styles: dict[Layer, LayerStyle], layer: Layer, **changes: object) -> dict[Layer, LayerStyle]:
    """A copy of ``styles`` with one layer's style changed."""
    out = dict(styles)
    out[layer] = replace(out[layer], **changes)  # type: ignore[arg-type]
    return out
