"""Every way a run can end has words (and a colour) wherever a status is shown: the Steps
tab's header, the run's end line, the shared HTML page, the Episodes tab and the CLI's
listing.  A status added to ``EpisodeStatus`` without words fails here."""

from __future__ import annotations

import pytest

from agent.types import EpisodeStatus
from app.cli.episodes import STATUS_STYLES
from app.episode_html import STATUS_WORDS as PAGE_WORDS
from app.gui.episode_controller import STATUS_WORDS as WINDOW_WORDS
from app.gui.episode_controller import episode_title
from widgets.episodes_panel import STATUS_COLOURS


@pytest.mark.parametrize("status", list(EpisodeStatus))
def test_every_status_has_words_in_the_window_and_on_the_page(status):
    assert WINDOW_WORDS[status].strip() and PAGE_WORDS[status].strip()
    assert WINDOW_WORDS[status] == PAGE_WORDS[status]  # one set of words, not two that drift


@pytest.mark.parametrize("status", list(EpisodeStatus))
def test_every_status_has_a_colour_in_the_episodes_tab_and_the_cli(status):
    assert status.value in STATUS_COLOURS and status.value in STATUS_STYLES


def test_an_interrupted_run_is_titled_in_words_not_by_its_raw_value():
    from agent.types import Episode

    title = episode_title(Episode(goal="Turn off Wi-Fi", status=EpisodeStatus.INTERRUPTED))
    assert title.startswith("Turn off Wi-Fi — ") and "interrupted" in title and "⏸" in title
