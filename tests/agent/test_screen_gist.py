"""The screen summary the user sees matches the screen (issue 26, item 4).

Every description a model reads starts with the screen's gist, made from the parse alone:
the app in front, the page's title and a few entries, or "the home screen" for a launcher.
When the model's summary calls an app's page the home screen, the estimator replaces it
with the gist and says so, before the later aspects read it."""

from __future__ import annotations

import pytest

from agent.latent import FROM_THE_PARSE, ChainedEstimator, FusedEstimator, LatentInput, grounded_summary
from agent.screen_text import description, fenced, gist_in, is_home, screen_gist
from tests.agent.screens import clock_parse, settings_parse

SETTINGS = fenced(description(settings_parse(), app="com.android.settings"))
HOME_PACKAGE = "com.google.android.apps.nexuslauncher"


def test_the_gist_names_the_app_the_page_and_its_first_entries():
    gist = screen_gist(settings_parse(), "com.android.settings")
    assert (gist.app, gist.title, gist.home) == ("Settings", "Settings", False)
    assert gist.salient[:2] == ("Network & internet", "Display")
    assert gist.text.startswith("the Settings app, page \u201cSettings\u201d; on it: Network & internet")
    clock = screen_gist(clock_parse(), "com.google.android.deskclock")
    assert clock.app == "Clock" and clock.home is False


def test_a_launcher_in_front_is_the_home_screen_and_an_unknown_app_is_not_guessed():
    assert screen_gist(settings_parse(), HOME_PACKAGE).home is True
    assert screen_gist(settings_parse(), "com.miui.home").home is True
    assert screen_gist(settings_parse(), None).home is None


def test_every_description_starts_with_the_gist_and_it_reads_back():
    first = SETTINGS.splitlines()[1]
    assert first.startswith("Now showing: the Settings app, page \u201cSettings\u201d")
    back = gist_in(SETTINGS)
    assert back is not None and (back.app, back.title, back.home) == ("Settings", "Settings", False)
    assert gist_in(fenced(description(settings_parse(), app=HOME_PACKAGE))).home is True  # type: ignore[union-attr]
    assert gist_in("Screen 1080x2400:\n  [1] button") is None


def test_a_home_screen_summary_of_the_settings_screen_is_replaced_by_the_gist_and_marked():
    fixed = grounded_summary("The home screen of the phone.", SETTINGS)
    assert fixed.startswith("The Settings app, page \u201cSettings\u201d")
    assert FROM_THE_PARSE in fixed and "home screen of the phone" in fixed  # says what the model said


def test_a_summary_that_agrees_or_cannot_be_checked_is_kept():
    agreeing = "The Settings screen, opened from the home screen."
    assert grounded_summary(agreeing, SETTINGS) == agreeing  # names the app: not a contradiction
    assert grounded_summary("Settings main page.", SETTINGS) == "Settings main page."
    home = fenced(description(settings_parse(), app=HOME_PACKAGE))
    assert grounded_summary("The home screen.", home) == "The home screen."
    unknown = fenced(description(settings_parse()))  # a screenshot without its app
    assert grounded_summary("The home screen.", unknown) == "The home screen."


def test_the_chained_estimator_replaces_home_screen_before_progression_reads_it(server, ollama):
    server.on("Screen summary:", "home screen")
    server.on('starts with "You have"', "You have opened Settings.")
    server.on('answer exactly "No mistakes."', "No mistakes.")
    est = ChainedEstimator(ollama).estimate(LatentInput(goal="Turn off Wi-Fi", screen=SETTINGS))
    summary = est.latent.screen_summary
    assert summary.startswith("The Settings app") and FROM_THE_PARSE in summary
    progression_prompt = server.requests[1].prompt
    assert summary in progression_prompt and "\nhome screen" not in progression_prompt


def test_the_fused_estimator_replaces_it_too(server, ollama):
    server.on("Estimate the hidden state", '{"performed_action": "Opened Settings.", "screen_summary": "Home screen",'
              ' "progression": "You have opened Settings.", "mistakes": "No mistakes.", "completed": false,'
              ' "completion_reason": "Wi-Fi is on", "confidence": 0.6}')
    est = FusedEstimator(ollama).estimate(LatentInput(goal="Turn off Wi-Fi", screen=SETTINGS))
    assert est.latent.screen_summary.startswith("The Settings app") and FROM_THE_PARSE in est.latent.screen_summary


@pytest.mark.parametrize("package", ["com.google.android.apps.nexuslauncher", "com.sec.android.app.launcher",
                                     "com.miui.home", "com.huawei.android.launcher", "org.example.home"])
def test_a_launcher_package_is_a_home_screen(package):
    assert is_home(package)


@pytest.mark.parametrize("package", ["", None, "com.android.settings", "com.example.homework", "com.example.homepage"])
def test_an_app_or_no_package_is_not_a_home_screen(package):
    assert not is_home(package)
