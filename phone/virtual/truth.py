"""Ground truth for a rendered frame of the virtual phone: every visible element's box,
VisionTasker class, text and icon, the semantic blocks, the active tab.

Built from the same view tree that was painted.  Plain frozen data; no drawing, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from vision.geometry import Size
from vision.types import Block, Element, ElementKind


@dataclass(frozen=True, slots=True)
class TruthElement(Element):
    """An element as the virtual phone drew it: every field of ``vision.types.Element``,
    plus the glyph it drew (``icon``) and whether its node is in the hierarchy dump."""

    icon: str = ""
    in_hierarchy: bool = True


@dataclass(frozen=True, slots=True)
class GroundTruth:
    frame_id: int
    size: Size
    package: str
    activity: str
    elements: tuple[TruthElement, ...]
    blocks: tuple[Block, ...]
    active_tab: str | None = None
    dialog: str | None = None
    keyboard: bool = False

    def find(self, *, text: str | None = None, resource_id: str | None = None, label: str | None = None,
             kind: ElementKind | None = None) -> list[TruthElement]:
        """Elements matching every given criterion (text and label compare case-insensitively)."""
        out = []
        for e in self.elements:
            if text is not None and e.text.strip().lower() != text.strip().lower():
                continue
            if label is not None and e.label.strip().lower() != label.strip().lower():
                continue
            if resource_id is not None and not (e.resource_id == resource_id or e.resource_id.endswith("/" + resource_id)):
                continue
            if kind is not None and e.kind is not kind:
                continue
            out.append(e)
        return out

    def texts(self) -> list[str]:
        return [e.text for e in self.elements if e.text]
