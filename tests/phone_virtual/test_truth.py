"""Specification of the virtual phone's ground truth elements: each is a
``vision.types.Element`` as the phone drew it, plus the glyph and whether the
hierarchy dump holds it; ``to_element`` gives what a perfect parser would report."""

from __future__ import annotations

from phone.virtual.phone import VirtualPhone
from phone.virtual.truth import TruthElement
from vision.geometry import Rect
from vision.types import Element, ElementKind, ElementSource


def test_ground_truth_elements_are_vision_elements_with_their_drawn_glyph():
    phone = VirtualPhone()
    phone.open_app("Clock")
    elements = phone.ground_truth().elements
    assert elements and all(isinstance(e, Element) for e in elements)
    assert any(e.icon for e in elements)
    assert [e.id for e in elements] == [f"e{i}" for i in range(len(elements))]


def test_to_element_names_an_unlabelled_icon_by_its_glyph_and_keeps_every_other_field():
    drawn = TruthElement(id="e3", kind=ElementKind.BUTTON, rect=Rect(10, 20, 60, 70), icon="add",
                         resource_id="com.example:id/fab", clickable=True, checkable=True, checked=False,
                         in_hierarchy=False)
    parsed = drawn.to_element()
    assert type(parsed) is Element
    assert parsed == Element(id="e3", kind=ElementKind.BUTTON, rect=Rect(10, 20, 60, 70), label="add",
                             resource_id="com.example:id/fab", clickable=True, checkable=True, checked=False,
                             source=ElementSource.HIERARCHY)


def test_to_element_keeps_a_label_the_phone_gave():
    drawn = TruthElement(id="e0", kind=ElementKind.BUTTON, rect=Rect(0, 0, 48, 48), label="Add alarm", icon="add")
    assert drawn.to_element().label == "Add alarm"
    assert drawn.display_name == "Add alarm"
