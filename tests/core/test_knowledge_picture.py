"""The interaction graph hands views a frozen picture of itself (pages with summaries
and visits, edges with counts) built from real virtual-phone screens."""

from __future__ import annotations

import dataclasses

import pytest

from agent.knowledge.graph import InteractionGraph
from agent.knowledge.types import GraphEdge
from phone.virtual.phone import VirtualPhone
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser


def test_the_graph_picture_shows_pages_and_how_often_an_element_led_between_them():
    parser = ScreenParser(PipelineConfig(mode="tree", ocr="none", detector="none", icons="none"))
    phone = VirtualPhone()
    try:
        home = parser.parse(phone.screenshot(with_hierarchy=True))
        phone.open_app("Settings")
        settings = parser.parse(phone.screenshot(with_hierarchy=True))
    finally:
        phone.close()
    icon = next(e for e in home.elements if (e.text or e.label) == "Settings")
    graph = InteractionGraph()
    graph.add_transition(home, icon, settings, "launcher", app_after="com.android.settings")
    graph.add_transition(home, icon, settings, "launcher", app_after="com.android.settings")
    picture = graph.picture()
    assert len(picture.pages) == 2 and all(p.summary and p.visits >= 1 for p in picture.pages)
    (edge,) = picture.edges
    assert isinstance(edge, GraphEdge) and edge.count == 2
    assert {edge.src, edge.dst} == {p.id for p in picture.pages}
    with pytest.raises(dataclasses.FrozenInstanceError):
        picture.pages[0].visits = 9  # type: ignore[misc]
