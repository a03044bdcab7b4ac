"""Specification of the virtual phone's ground truth elements: each is a
``vision.types.Element`` as the phone drew it, plus the glyph and whether the
hierarchy dump holds it; ``to_element`` gives what a perfect parser would report."""

from __future__ import annotations

from phone.virtual.phone import VirtualPhone
from phone.virtual.truth import TruthElement
from vision.geometry import Rect
from vision.types import Element, ElementKind


def test_ground_truth_elements_are_vision_elements_with_their_drawn_glyph():
    phone = VirtualPhone()
    phone.open_app("Clock")
    elements = phone.ground_truth().elements
    assert elements and all(isinstance(e, Element) for e in elements)
    assert any(e.icon for e in elements)
    assert [e.id for e in elements] == [f"e{i}" for i in range(len(elements))]


def test_a_label_the_phone_gave_is_the_elements_name_before_its_glyph():
    drawn = TruthElement(id="e0", kind=ElementKind.BUTTON, rect=Rect(0, 0, 48, 48), label="Add alarm", icon="add")
    assert drawn.display_name == "Add alarm"
