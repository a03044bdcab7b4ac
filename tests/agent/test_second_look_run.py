"""A run on a screen read from pixels alone looks again, closer, when the screen shows none
of the goal's words: the planner gets what the second look found, the step's evidence says
so, and the tap lands on it.  When the words are on the screen, or the parse holds the
tree's words, nothing is read again.  Real OCR and detector, the scripted model over HTTP."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent.events import Executed, RunSettings, Working
from agent.look_again import SecondLook
from agent.planners import make_planner
from agent.runner import drive, run_episode
from agent.types import Decision, DecisionKind
from tests.gui.fakes import ScriptedPhone
from tests.vision.drawn_pages import faint_target
from vision.config import PipelineConfig
from vision.geometry import Point
from vision.pipeline import ScreenParser
from vision.types import ElementSource, Screen


@pytest.fixture(scope="module")
def pixels() -> ScreenParser:
    return ScreenParser(PipelineConfig(mode="vision", remember_previous=False))


def _run(goal, ollama, parser, look):
    phone = ScriptedPhone()
    phone.next_image, target = faint_target()
    gen = run_episode(goal, phone, parser, make_planner("zeroshot-", ollama), None,
                      settings=RunSettings(mode="auto", max_steps=1, max_wait_s=0.0), look_again=look)
    events = list(drive(gen, lambda ev: Decision(DecisionKind.APPROVE)))
    return events, phone, target


def test_a_goal_whose_words_the_first_reading_missed_is_read_again_and_tapped(server, ollama, pixels):
    server.on("Next action:", "tap Clear cache")
    events, phone, target = _run("Clear the cache at the bottom", ollama, pixels, SecondLook(pixels.ocr_backend()))
    assert "reading the screen again, closer" in [e.stage for e in events if isinstance(e, Working)]
    step = next(e.record for e in events if isinstance(e, Executed))
    assert any("looked again at the bottom of the screen" in n and "Clear cache" in n for n in step.proposal.evidence)
    assert "Clear cache" in server.prompts("Next action:")[0]  # the planner read what was found
    taps = [Point(x, y) for name, x, y in (c for c in phone.calls if c[0] == "tap")]
    assert len(taps) == 1 and target.contains(taps[0])


def test_no_second_look_when_the_screen_shows_the_goals_words(server, ollama, pixels):
    server.on("Next action:", "tap Storage")
    events, _, _ = _run("Open Storage", ollama, pixels, SecondLook(pixels.ocr_backend()))
    assert "reading the screen again, closer" not in [e.stage for e in events if isinstance(e, Working)]
    step = next(e.record for e in events if isinstance(e, Executed))
    assert not any("looked again" in n for n in step.proposal.evidence)


def test_a_parse_with_the_trees_words_is_never_read_again(pixels):
    image, _ = faint_target()
    parse = pixels.parse(Screen(image))
    look = SecondLook(pixels.ocr_backend())
    assert look.needed("Clear the cache", parse)
    from_tree = replace(parse, elements=tuple(replace(e, source=ElementSource.HIERARCHY) for e in parse.elements))
    assert not look.needed("Clear the cache", from_tree)
    assert look("Clear the cache", Screen(image), from_tree) == (from_tree, ())
