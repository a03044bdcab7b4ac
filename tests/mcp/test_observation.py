"""What a client is shown: element ids that name their observation, and screen words left
as they are."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app import compose
from app.mcp.observation import BadElementId, Observation, screen_signature, split_id
from app.settings import load_settings
from phone.virtual.phone import VirtualPhone


def _observation(number: int = 3) -> Observation:
    phone = VirtualPhone()
    screen = phone.screenshot(with_hierarchy=True)
    parse = compose.make_parser(load_settings()[0], mode="tree").parse(screen)
    phone.close()
    return Observation(number, screen, parse, screen.foreground_package or "",
                       screen_signature(parse, screen.foreground_package or ""))


def test_ids_name_their_observation_and_malformed_ones_say_what_is_expected() -> None:
    assert split_id("7@3") == ("7", 3)
    for bad in ("7", "@3", "7@", "seven", ""):
        with pytest.raises(BadElementId, match="ids look like '7@3'"):
            split_id(bad)


def test_every_listed_element_and_line_carries_the_observation_number() -> None:
    obs = _observation(3)
    ids = [e.id for e in obs.elements()]
    assert ids and all(i.endswith("@3") for i in ids)
    assert "[3@3] button \"Clock\"" in obs.text()
    assert obs.as_dict()["observation"] == 3
    png = obs.marks_png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_brackets_in_the_screens_words_are_not_taken_for_ids() -> None:
    obs = _observation(4)
    worded = replace(obs.parse, description='Screen 1080x2400:\n  [5] text "Reply [draft] saved"\n')
    shown = Observation(4, obs.screen, worded, obs.package, obs.signature).text()
    assert '[5@4] text "Reply [draft] saved"' in shown
