"""The screen conventions of ``agent.knowledge.focus``: the element a goal's words point at,
a switch already in the asked state, a tap that answers the goal's last part, a dialog's
OK once the choice is made.  They are features of the learned step ranker
(``agent.knowledge.step_features``), whose weight the data decides."""

from __future__ import annotations

import pytest

from agent.knowledge.focus import asked_state, focus, focus_note
from agent.knowledge.guide import MapGuide
from agent.knowledge.guided import GuidedPlanner
from agent.planners.base import PlanContext
from agent.types import Action, ActionType
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import load_tasks, tasks_by_id
from tests.knowledge.recording_planner import Recorder  # a planner that remembers what it was shown
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser

TASKS = tasks_by_id(load_tasks())


@pytest.fixture(scope="module")
def parser() -> ScreenParser:
    return ScreenParser(PipelineConfig(mode="tree"))


def screen_after(task_id: str, steps: int, parser: ScreenParser, phone: VirtualPhone | None = None):
    """The parse of the screen reached by the first ``steps`` reference steps of a task."""
    phone = phone or VirtualPhone()
    task = TASKS[task_id]
    task.setup(phone)
    for step in task.solution[:steps]:
        step.execute(phone)
    return parser.parse(phone.screenshot(with_hierarchy=True)), phone


@pytest.mark.parametrize(("goal", "state"), [
    ("Turn on dark theme", True), ("Enable Bluetooth", True), ("Turn off Wi-Fi", False),
    ("switch airplane mode off", False), ("Start the stopwatch", None), ("Open Settings", None),
])
def test_the_state_a_goal_asks_for(goal, state):
    assert asked_state(goal) is state


def test_an_on_off_goal_points_at_the_switch_of_the_matching_row_and_knows_when_it_is_met(parser):
    parse, phone = screen_after("settings.dark_theme_on", 2, parser)  # the Display page
    f = focus("Turn on dark theme", parse, app_label="Settings")
    assert f is not None and f.element.checkable and f.asked_on is True and f.state_met is False
    assert "Dark theme" in " ".join(e.display_name for e in parse.elements
                                    if e.rect.top <= f.element.rect.center.y <= e.rect.bottom)
    assert f"[{f.element.id}]" in focus_note(f)
    c = f.element.rect.center
    phone.tap(c.x, c.y)
    after = focus("Turn on dark theme", parser.parse(phone.screenshot(with_hierarchy=True)), app_label="Settings")
    assert after is not None and after.state_met is True
    assert "complete" in focus_note(after)


def test_a_verb_that_names_a_button_in_the_row_picks_that_button(parser):
    parse, _ = screen_after("shop.remove_case", 2, parser)  # the cart
    f = focus("Remove the phone case from my cart", parse, app_label="Shop")
    assert f is not None and f.name == "Remove"


def test_goal_words_that_only_say_where_to_go_point_at_nothing(parser):
    parse, _ = screen_after("launcher.open_settings_icon", 1, parser)  # inside Settings already
    assert focus("Open Settings", parse, app_label="Settings") is None


def test_the_selected_tab_is_never_the_focus_but_the_button_the_goal_names_is(parser):
    parse, _ = screen_after("clock.stopwatch_start", 2, parser)  # the Stopwatch tab
    f = focus("Start the stopwatch", parse, app_label="Clock")
    assert f is not None and f.name == "Start"


def test_two_equally_good_matches_say_nothing(parser):
    parse, _ = screen_after("clock.stopwatch_start", 1, parser)  # the Clock app's tabs
    assert focus("Timer or stopwatch", parse, app_label="Clock") is None


class Front:
    def __init__(self, package: str) -> None:
        self.package = package

    def foreground(self) -> tuple[str, str]:
        return self.package, ""


def test_the_only_element_showing_the_goals_own_word_is_acted_on_though_its_score_is_low(parser):
    parse, phone = screen_after("notes.delete_dentist", 1, parser)  # the notes list
    f = focus("Delete the note about the dentist", parse, app_label="Notes")
    assert f is not None and f.score < 0.7 and f.unique and "dentist" in f.name


def test_a_word_shown_by_two_elements_is_no_sole_mention():
    from vision.geometry import Rect, Size
    from vision.types import Element, ElementKind, ScreenParse

    rows = (Element("1", ElementKind.BUTTON, Rect(0, 100, 1080, 300), label="Trip to Rome: tickets", clickable=True),
            Element("2", ElementKind.BUTTON, Rect(0, 300, 1080, 500), label="Trip photos", clickable=True))
    f = focus("Show the trip tickets", ScreenParse(Size(1080, 2400), elements=rows))
    assert f is not None and f.element.id == "1" and f.unique  # "tickets" is on one row only
    f = focus("Show the trip", ScreenParse(Size(1080, 2400), elements=rows))
    assert f is None or not f.unique  # "trip" is on both


def test_a_goal_that_only_opens_an_app_is_finished_once_that_app_is_in_front(parser):
    from agent.knowledge.focus import only_opens

    assert only_opens("Open Messages from the home screen", "Messages")
    assert not only_opens("Send a message in Messages", "Messages")
    assert not only_opens("Open Settings", "Clock")
    parse, _ = screen_after("launcher.open_settings_icon", 1, parser)  # Settings is open
    from agent.knowledge.focus import finished

    assert "Settings is open" in finished("Open Settings", parse, app_label="Settings")


def test_a_switch_already_in_the_asked_state_finishes_the_task_without_a_model_call(parser):
    from agent.knowledge.focus import finished

    parse, phone = screen_after("settings.dark_theme_on", 2, parser)  # Display, dark theme off
    assert finished("Turn on dark theme", parse, app_label="Settings") == ""
    switch = focus("Turn on dark theme", parse, app_label="Settings")
    assert switch is not None
    c = switch.element.rect.center
    phone.tap(c.x, c.y)
    after = parser.parse(phone.screenshot(with_hierarchy=True))
    assert "shows on" in finished("Turn on dark theme", after, app_label="Settings")
    # a goal that asks for more than the switch is not finished by it
    assert finished("Turn on dark theme and make the font larger", after, app_label="Settings") == ""


def test_once_the_user_says_not_done_the_screen_evidence_no_longer_claims_it(parser):
    from agent.feedback import NOT_DONE_NOTE

    parse, phone = screen_after("launcher.open_settings_icon", 1, parser)
    inner = Recorder()
    GuidedPlanner(inner, MapGuide([]), phone).propose(
        PlanContext("Open Settings", parse, "", notes=(NOT_DONE_NOTE + ": show the Wi-Fi page too",)))
    assert inner.seen  # the model was asked


@pytest.mark.parametrize(("goal", "tapped", "can"), [
    ("Delete contact Jack", "Jack", False),  # the operation is still to do
    ("Pin the Book ideas note", "Book ideas", False),
    ("delete all call history", "Clear call history", True),  # the element names the operation
    ("change the mode to Hip Hop", "Hip Hop", True),  # choosing the option is the whole task
    ("Search for the song 'test1' and play it", "test1", True),
    ("Switch custom colors to light and save it", "Light", False),  # a confirmation is still to give
    ("Set the sleep timer for five minutes", "Sleep timer", False),  # a value is still to enter
    ("Add an all-day event 'Rent due' on April 1", "All-day", False),
])
def test_tapping_what_the_goal_names_can_finish_it_only_when_nothing_else_is_asked(goal, tapped, can):
    from agent.knowledge.focus import tap_can_finish
    from vision.geometry import Size
    from vision.types import ScreenParse

    assert tap_can_finish(goal, tapped, ScreenParse(Size(1080, 2400), elements=())) is can


def _row_screen(*rows: tuple[str, str]):
    from vision.geometry import Rect, Size
    from vision.types import Element, ElementKind, ScreenParse

    els = [Element(id=str(i), kind=ElementKind(kind), rect=Rect(0, 200 + 150 * i, 1080, 340 + 150 * i), text=words,
                   clickable=True) for i, (kind, words) in enumerate(rows)]
    return ScreenParse(Size(1080, 2400), elements=tuple(els))


def test_a_setting_row_already_showing_the_asked_value_finishes_the_task():
    from agent.knowledge.focus import finished

    page = _row_screen(("button", "Font size, Medium"), ("button", "Theme, Dark"), ("button", "Language"))
    assert "shows medium" in finished("adjust font size to medium", page)
    assert finished("adjust font size to large", page) == ""  # shows another value
    dialog = _row_screen(("button", "Font size, Medium"), ("button", "OK"))
    assert finished("adjust font size to medium", dialog) == ""  # the choice still waits for its OK


def test_an_element_is_the_one_just_tapped_by_name_even_when_its_name_was_cut_short():
    from agent.knowledge.focus import same_name

    assert same_name("Start recording automatically after launching the app", "Start recording automatically after lau…")
    assert same_name("test1, 00:10, 124 kB", "test1")
    assert not same_name("OK", "Light")  # a dialog's OK and the next dialog's option share a place, not a name


def _tap(name: str, element_id: str = "3") -> Action:
    from agent.types import Target

    return Action(ActionType.TAP, target=Target(element_id=element_id, description=name))


def test_numbers_in_words_read_as_the_digits_a_screen_shows():
    from agent.knowledge.focus import goal_values, tap_can_finish
    from agent.knowledge.retrieval import tokens

    assert tokens("five minutes") == tokens("5 minutes")
    assert "5" in goal_values("set the sleep timer for five minutes")
    assert tap_can_finish("Set the sleep timer for five minutes", "5 minutes", _row_screen(("button", "Play")))


def test_a_dialog_that_asks_or_a_list_offering_the_goals_value_means_the_tap_did_not_finish():
    from agent.knowledge.focus import asks_question, offers_value, tap_can_finish

    question = _row_screen(("text", "Move pic3.jpg to the Recycle Bin?"), ("button", "No"), ("button", "Yes"))
    assert asks_question(question)
    assert not tap_can_finish("delete the last photo", "Delete", question)
    choices = _row_screen(("check_box", "80%"), ("check_box", "50%"), ("check_box", "20%"))
    assert offers_value("set photo quality to 50%", "Photo quality, 80%", choices)
    assert not tap_can_finish("set photo quality to 50%", "Photo quality, 80%", choices)
    songs = _row_screen(("button", "test1"), ("button", "test2"))
    assert offers_value("play the song 'test1' in the tracks", "Tracks", songs)
    assert not offers_value("play the song 'test1' in the tracks", "Tracks", songs, taken=("test1",))  # typed already
    assert not offers_value("play the song 'test1' in the tracks", "test1", songs)  # the value itself was tapped


@pytest.mark.parametrize(("goal", "last"), [
    ("go to recents and play video2.mp4", "play video2.mp4"),
    ("Search for the DCIM folder in gallery app and open it", "Search for the DCIM folder in gallery app"),
    ("open the file, then share it with Bob", "share it with Bob"),
    ("Turn on dark theme", "Turn on dark theme"),
])
def test_the_last_part_of_a_goal_is_the_last_that_names_something(goal, last):
    from agent.knowledge.focus import last_clause

    assert last_clause(goal) == last


def test_a_tap_finishes_the_goal_only_when_it_answers_its_last_part_and_nothing_waits():
    from agent.knowledge.focus import last_tap_finishes

    after = _row_screen(("text", "Album"), ("button", "Play / Pause"))
    goal = "go to the recent tab and open test1.m4a"
    assert last_tap_finishes(goal, "test1.m4a, 124 kB", after, pointed=True, taken=["Recents", "test1.m4a, 124 kB"])
    assert not last_tap_finishes(goal, "Recents", after, pointed=True, taken=["Recents"])  # the first part only
    # not what the screen pointed at: the steps taken must cover half the goal's own words
    assert last_tap_finishes("call Alice", "Call contact", after, pointed=False, taken=["Alice", "Call contact"])
    assert not last_tap_finishes("call Alice", "Call contact", after, pointed=False, taken=["Call contact"])
    # a text the goal gives must have been typed first
    assert not last_tap_finishes("text Alice that I-love-you", "Send SMS", after, pointed=True,
                                 taken=["Alice", "Send SMS"])


def test_an_on_off_goal_is_finished_by_a_tap_only_when_the_control_shows_the_state_asked():
    from agent.knowledge.focus import last_tap_finishes
    from vision.geometry import Rect, Size
    from vision.types import Element, ElementKind, ScreenParse

    def page(checked: bool) -> ScreenParse:
        box = Element(id="4", kind=ElementKind.CHECK_BOX, rect=Rect(0, 200, 1080, 340),
                      text="Close this app when launching a different one", clickable=True, checkable=True,
                      checked=checked)
        return ScreenParse(Size(1080, 2400), elements=(box,))

    goal = "Disable closing this app when launching a different one"
    name = "Close this app when launching a different one"
    assert last_tap_finishes(goal, name, page(False), pointed=True, taken=[name])
    assert not last_tap_finishes(goal, name, page(True), pointed=True, taken=[name])  # still on
    assert not last_tap_finishes("Turn off Wi-Fi", "Wi-Fi", _row_screen(("button", "Wi-Fi networks")),
                                 pointed=True, taken=["Wi-Fi"])  # opened a page: no control shows off


def test_a_choice_made_in_a_dialog_is_confirmed_with_its_ok_once_every_option_the_goal_names_is_picked():
    from agent.knowledge.focus import ready_to_confirm

    def dialog(*checked: str):
        page = _row_screen(("check_box", "Title"), ("check_box", "Year"),
                           ("check_box", "Ascending"), ("check_box", "Descending"), ("button", "Cancel"),
                           ("button", "OK"))
        from dataclasses import replace

        return replace(page, elements=tuple(replace(e, checkable=e.kind.value == "check_box",
                                                    checked=e.text in checked if e.kind.value == "check_box" else None)
                                            for e in page.elements))

    goal = "sort by year in descending order"
    assert ready_to_confirm(goal, dialog("Title", "Ascending"), last="Sort by", taken=["Sort by"]) is None  # just opened
    assert ready_to_confirm(goal, dialog("Year", "Ascending"), last="Year", taken=["Sort by", "Year"]) is None
    ok = ready_to_confirm(goal, dialog("Year", "Descending"), last="Descending", taken=["Sort by", "Year", "Descending"])
    assert ok is not None and ok.text == "OK"


def test_a_form_is_saved_once_the_texts_the_goal_gives_are_entered_and_the_choice_shows_on_it():
    from agent.knowledge.focus import ready_to_confirm

    form = _row_screen(("edit_text", "sunset"), ("edit_text", "jpg"), ("button", "Cancel"), ("button", "OK"))
    goal = "rename the last photo to 'sunset'"
    assert ready_to_confirm(goal, form, last="sunset", taken=["Rename", "sunset"]) is not None
    empty = _row_screen(("edit_text", "IMG_0001"), ("button", "Cancel"), ("button", "OK"))
    assert ready_to_confirm(goal, empty, last="Rename", taken=["Rename"]) is None  # nothing typed yet
    theme = _row_screen(("button", "Theme, Light"), ("button", "Text color"), ("button", "Save"))
    assert ready_to_confirm("change the theme to light and save it", theme, last="Light",
                            taken=["Customize colors", "Theme, Dark", "Light"]) is not None  # "Light" shows in its row
    mode = _row_screen(("check_box", "Grid"), ("check_box", "List"), ("button", "OK"))
    assert ready_to_confirm("change the display mode from grid to list", mode, last="List",
                            taken=["Change view type", "List"]) is not None  # grid is left behind, not picked


def test_a_tap_that_only_opens_a_page_does_not_finish_a_goal_still_to_do_there(parser):
    """Found with the scripted model on the virtual phone: each of these was called done."""
    from agent.knowledge.focus import last_tap_finishes

    fonts, _ = screen_after("settings.font_large", 3, parser)  # "Font size" tapped: its choices are open
    assert not last_tap_finishes("Make the font size large", "Font size", fonts, pointed=True,
                                 taken=["Display", "Font size"], app_label="Settings")
    page, _ = screen_after("settings.dots_off", 2, parser)  # "Notifications" tapped: the dot's switch is here
    assert not last_tap_finishes("Turn off notification dots on app icons", "Notifications", page, pointed=True,
                                 taken=["Notifications"], app_label="Settings")
    month, _ = screen_after("calendar.show_april", 1, parser)  # the app opened: its name answers nothing
    assert not last_tap_finishes("Show next month in the calendar", "Calendar", month, pointed=True,
                                 taken=["Calendar"], app_label="Calendar")
    tones = _row_screen(("button", "Beep"), ("button", "Chimes"), ("button", "Harp"))  # Zen Garden further down
    assert not last_tap_finishes("Change my ringtone to Zen Garden", "Phone ringtone", tones, pointed=True,
                                 taken=["Sound", "Phone ringtone"])


def test_a_dialog_just_opened_is_not_confirmed_though_its_frame_bears_the_name_tapped(parser):
    from agent.knowledge.focus import ready_to_confirm

    dialog, _ = screen_after("files.new_folder_receipts", 3, parser)  # "New folder" tapped: the name is still to type
    assert ready_to_confirm("Create a folder called Receipts in internal storage", dialog, last="New folder",
                            taken=["Internal storage", "New folder"]) is None


def test_an_element_the_goals_own_words_name_whole_is_found_on_the_screen():
    from agent.knowledge.focus import named_here

    page = _row_screen(("button", "Cart"), ("button", "Add to cart"), ("button", "Buy now"))
    assert named_here("Buy the mini Bluetooth speaker now", page) == "Buy now"
    assert named_here("Buy the mini Bluetooth speaker now", page, taken=("Buy now",)) == ""  # done already
    assert named_here("Buy the mini Bluetooth speaker now", page, skip="Buy now") == ""
    assert named_here("Turn on Wi-Fi", page) == ""  # some words shared is not naming it whole
