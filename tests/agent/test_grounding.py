"""Grounding: LCS matching, the LLM grounder, Prompt2Task's ladder, and assessment."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent.commands import parse_command
from agent.grounding.assessment import Assessor
from agent.grounding.base import ElementGrounder, GroundContext, GroundingError
from agent.grounding.ladder import LadderGrounder
from agent.grounding.llm_grounder import LLMGrounder
from agent.grounding.match import best_text_match, lcs_similarity
from agent.types import Action
from tests.agent.screens import SIZE, clock_parse, settings_parse
from vision.geometry import Point


def test_lcs_similarity_is_twice_common_substring_over_total_length():
    assert lcs_similarity("display", "display") == 1.0
    assert lcs_similarity("abcd", "xbcx") == pytest.approx(2 * 2 / 8)
    assert lcs_similarity("", "x") == 0.0


def test_strict_text_match_ignores_widget_words_and_odd_dashes():
    parse = clock_parse()
    assert best_text_match("the Alarm tab", parse)[0].id == "2"
    assert best_text_match("Bluetooth", parse) is None


def test_element_grounder_aims_at_the_element_centre():
    parse = settings_parse()
    g = ElementGrounder().ground(parse_command("tap Display", SIZE), GroundContext("g", parse))
    assert g.action.touch == parse.element("3").rect.center and g.action.target.element_id == "3"
    typed = ElementGrounder().ground(parse_command("type 'dark' in the search settings field", SIZE),
                                     GroundContext("g", parse))
    assert typed.action.target.point == parse.element("5").rect.center


def test_element_grounder_miss_lists_the_available_elements():
    with pytest.raises(GroundingError, match="no element 'Bluetooth'") as info:
        ElementGrounder().ground(parse_command("tap Bluetooth", SIZE), GroundContext("g", settings_parse()))
    assert '"Display"' in info.value.available


def test_llm_grounder_picks_an_element_from_the_json_list(server, ollama):
    server.on("Find the on-screen element", '{"element": "3", "reason": "dark mode is under Display"}')
    parse = settings_parse()
    g = ElementGrounder(llm=LLMGrounder(ollama)).ground(parse_command("tap dark mode", SIZE),
                                                        GroundContext("Turn on dark mode", parse))
    assert g.action.touch == parse.element("3").rect.center
    assert '"center": [540, 510]' in server.requests[0].prompt


def test_llm_grounder_null_element_is_a_grounding_error(server, ollama):
    server.on("", '{"element": null, "reason": "nothing fits"}')
    with pytest.raises(GroundingError, match="nothing fits"):
        LLMGrounder(ollama).ground(parse_command("tap dark mode", SIZE), GroundContext("g", settings_parse()))


def test_ladder_uses_text_match_then_history_on_a_changed_screen(ollama):
    ladder = LadderGrounder(ollama)
    base = settings_parse()
    with_id = replace(base, elements=tuple(replace(e, resource_id="android:id/display") if e.id == "3" else e
                                           for e in base.elements))
    first = ladder.ladder(parse_command("tap Display", SIZE), GroundContext("g", with_id))
    assert first.level == "text"
    # the same instruction later, on a screen where the entry was renamed: found again from memory
    renamed = replace(with_id, elements=tuple(replace(e, text="Screen & colours") if e.id == "3" else e
                                              for e in with_id.elements))
    second = ladder.ladder(parse_command("tap Display", SIZE), GroundContext("g", renamed))
    assert second.level == "history" and second.grounded.action.target.element_id == "3"


def test_ladder_asks_the_llm_for_a_strategy_when_no_text_matches(server, ollama):
    server.on("Choose a strategy", '{"strategy": "redirect", "element": "3", "action": "tap [3] Display",'
              ' "reason": "dark theme is in Display"}')
    r = LadderGrounder(ollama).ladder(parse_command("tap Dark theme", SIZE), GroundContext("g", settings_parse()))
    assert r.level == "redirect" and r.grounded.action.target.element_id == "3"


@pytest.mark.parametrize("strategy", ["skip", "block"])
def test_ladder_skip_and_block_carry_no_action(server, ollama, strategy):
    server.on("Choose a strategy", f'{{"strategy": "{strategy}", "element": null, "reason": "r"}}')
    r = LadderGrounder(ollama).ladder(parse_command("tap Dark theme", SIZE), GroundContext("g", settings_parse()))
    assert r.level == strategy and r.grounded is None


def test_ladder_block_is_a_blocked_grounding_error_for_the_runner(server, ollama):
    server.on("Choose a strategy", '{"strategy": "block", "reason": "need the user"}')
    with pytest.raises(GroundingError) as info:
        LadderGrounder(ollama).ground(parse_command("tap Dark theme", SIZE), GroundContext("g", settings_parse()))
    assert info.value.blocked


def test_assessment_verdict_and_confidence(server, ollama):
    server.on("Check an action before", '{"verdict": "follow", "confident": false, "confidence": 0.3, "reason": "r"}')
    a = Assessor(ollama).assess("g", (), Action.tap(1, 2), "<screen>x</screen>")
    assert (a.verdict, a.confident, a.confidence) == ("follow", False, 0.3)


def test_assessment_rejects_a_previously_failed_option_without_asking(server, ollama):
    a = Assessor(ollama).assess("g", (), Action.tap(100, 200), "s", failed=(Action.tap(101, 201),))
    assert a.verdict == "change" and not server.requests


def test_assessment_unavailable_means_follow_unconfidently(server, ollama):
    server.on("", "garbage")
    a = Assessor(ollama).assess("g", (), Action.tap(1, 2), "s")
    assert a.verdict == "follow" and not a.confident


def test_point_targets_need_no_grounding():
    g = ElementGrounder().ground(Action.tap(5, 6), GroundContext("g", settings_parse()))
    assert g.action.touch == Point(5, 6)
