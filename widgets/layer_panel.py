"""Controls for the overlay layers: per layer a visibility check box, and under it a
colour button and an opacity slider; one check box for kind words on the boxes (off by
default: the legend below says which colour is which kind, and hovering a box names it).
Emits ``styleChanged(layer, style)`` (the kind-words box changes the widgets' and the
blocks' layers).  No I/O.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QCheckBox, QColorDialog, QGridLayout, QLabel, QPushButton, QSlider, QWidget

from widgets.overlays import CLASS_COLORS, DEFAULT_STYLES, Layer, LayerStyle

#: The layers whose boxes can carry their kind's word.
TAGGED = (Layer.WIDGETS, Layer.BLOCKS)


class LayerPanel(QWidget):
    styleChanged = Signal(object, object)  # Layer, LayerStyle

    def __init__(self, styles: dict[Layer, LayerStyle] | None = None, parent=None) -> None:
        super().__init__(parent)
        self._styles = dict(styles or DEFAULT_STYLES)
        grid = QGridLayout(self)
        grid.setContentsMargins(4, 4, 4, 4)
        self.checks: dict[Layer, QCheckBox] = {}
        self.colors: dict[Layer, QPushButton] = {}
        self.sliders: dict[Layer, QSlider] = {}
        for row, layer in enumerate(Layer):
            st = self._styles[layer]
            check = QCheckBox(layer.caption)
            check.setChecked(st.visible)
            color = QPushButton()
            color.setFixedSize(22, 22)
            color.setToolTip("Layer colour")
            slider = QSlider(Qt.Orientation.Horizontal)
            slider.setRange(0, 100)
            slider.setValue(round(st.opacity * 100))
            slider.setToolTip("Opacity")
            slider.setMinimumWidth(40)
            # the layer's name on its own line, its colour and opacity under it: the panel
            # fits a narrow column (1024x700) without scrolling sideways
            grid.addWidget(check, 2 * row, 0, 1, 3)
            grid.addWidget(color, 2 * row + 1, 1)
            grid.addWidget(slider, 2 * row + 1, 2)
            self.checks[layer], self.colors[layer], self.sliders[layer] = check, color, slider
            self._paint_swatch(layer)
            check.toggled.connect(lambda on, lay=layer: self._change(lay, visible=on))
            slider.valueChanged.connect(lambda v, lay=layer: self._change(lay, opacity=v / 100))
            color.clicked.connect(lambda _=False, lay=layer: self._pick_color(lay))
        grid.setColumnMinimumWidth(0, 16)
        grid.setColumnStretch(2, 1)
        row = 2 * len(Layer)
        self.kind_tags = QCheckBox("Kind words on the boxes")
        self.kind_tags.setToolTip("Write each box's kind (button, image, list …) on the mirror; "
                                  "off, the colours below say it and hovering a box names it")
        self.kind_tags.setChecked(self._styles[Layer.WIDGETS].tags)
        self.kind_tags.toggled.connect(self.set_kind_tags)
        grid.addWidget(self.kind_tags, row, 0, 1, 3)
        grid.addWidget(self._legend(), row + 1, 0, 1, 3)
        grid.setRowStretch(row + 2, 1)

    @staticmethod
    def _legend() -> QLabel:
        """Which colour is which kind of widget."""
        items = "".join(f'<span style="color:{c}">■</span>&nbsp;{k.value.replace("_", " ")} &nbsp; '
                        for k, c in CLASS_COLORS.items())
        legend = QLabel(f"<small>{items}</small>")
        legend.setObjectName("kindLegend")
        legend.setWordWrap(True)
        legend.setTextFormat(Qt.TextFormat.RichText)
        return legend

    def set_kind_tags(self, on: bool) -> None:
        """Kind words on the widgets' and blocks' boxes, or not."""
        if self.kind_tags.isChecked() != on:
            self.kind_tags.setChecked(on)  # comes back here through ``toggled``
            return
        for layer in TAGGED:
            if self._styles[layer].tags != on:
                self._change(layer, tags=on)

    def _paint_swatch(self, layer: Layer) -> None:
        self.colors[layer].setStyleSheet(
            f"background:{self._styles[layer].color}; border:1px solid #444; border-radius:3px"
        )

    def _pick_color(self, layer: Layer) -> None:
        c = QColorDialog.getColor(QColor(self._styles[layer].color), self, f"{layer.caption} colour")
        if c.isValid():
            self.set_color(layer, c.name())

    def set_color(self, layer: Layer, color: str) -> None:
        self._change(layer, color=color)
        self._paint_swatch(layer)

    def _change(self, layer: Layer, **changes: object) -> None:
        self._styles[layer] = replace(self._styles[layer], **changes)  # type: ignore[arg-type]
        self.styleChanged.emit(layer, self._styles[layer])

    def styles(self) -> dict[Layer, LayerStyle]:
        return dict(self._styles)
