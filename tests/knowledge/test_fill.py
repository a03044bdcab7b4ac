"""The text a goal gives for a field of the screen (``agent.knowledge.fill``) and how the
guided planner types it without asking the model."""

from __future__ import annotations

import pytest

from agent.knowledge.fill import fill, values
from agent.knowledge.guide import MapGuide
from agent.knowledge.guided import GuidedPlanner
from agent.planners.base import PlanContext
from agent.types import Action, ActionType, Proposal, Target
from tests.knowledge.recording_planner import Recorder
from vision.geometry import Rect, Size
from vision.types import Element, ElementKind, ScreenParse


def field(i: int, words: str, *, rid: str = "", top: int = 300) -> Element:
    return Element(id=str(i), kind=ElementKind.EDIT_TEXT, rect=Rect(40, top, 1040, top + 120), text=words,
                   resource_id=rid, clickable=True)


def button(i: int, words: str, top: int) -> Element:
    return Element(id=str(i), kind=ElementKind.BUTTON, rect=Rect(40, top, 1040, top + 120), text=words, clickable=True)


def screen(*elements: Element) -> ScreenParse:
    return ScreenParse(Size(1080, 2400), elements=tuple(elements))


@pytest.mark.parametrize(("goal", "expected"), [
    ("Create a note titled 'Packing list' with the text 'Passport, charger'",
     [("Packing list", "quoted"), ("Passport, charger", "quoted")]),
    ("Add the email quinn@example.org to Quinn's contact", [("quinn@example.org", "email")]),
    ("Add a contact with phone number +1 555-0177", [("+1 555-0177", "number")]),
    ("text Alice that I-love-you", [("I-love-you", "message")]),
    ("Search for the DCIM folder and open it", [("DCIM", "search")]),
    ("search call history with Bob", [("Bob", "search")]),
    ("Connect to the network 'CoffeeBar Guest' with password latte2026",
     [("CoffeeBar Guest", "quoted"), ("latte2026", "secret")]),
    ("Set the PIN 4821.", [("4821", "secret")]),
    ("Set an alarm for 6:45 AM", []),  # a time is picked, not typed
    ("Turn off Wi-Fi", []),
])
def test_the_values_a_goal_gives_to_type(goal, expected):
    assert [(v.text, v.kind) for v in values(goal)] == expected


def test_each_quoted_value_goes_to_the_field_its_words_name():
    form = screen(field(1, "Title", top=300), field(2, "Note", top=500))
    goal = "Create a note titled 'Packing list' with the text 'Passport, charger'"
    first = fill(goal, form)
    assert first is not None and first.field.id == "1" and first.text == "Packing list"
    typed = screen(field(1, "Packing list", top=300), field(2, "Note", top=500))
    second = fill(goal, typed)  # the title is typed: the body is next, into the only other field
    assert second is not None and second.field.id == "2" and second.text == "Passport, charger"
    done = screen(field(1, "Packing list", top=300), field(2, "Passport, charger", top=500))
    assert fill(goal, done) is None


def test_a_search_box_takes_only_what_is_searched_for():
    results = screen(field(0, "Search", top=100), button(1, "Alice Johnson", 300))
    assert fill("Search contact Alice and call her", results).field.id == "0"  # listed, but searched for
    assert fill("Tell Alice 'see you at noon'", results) is None  # a message is not a search


def test_a_value_the_screen_lists_is_for_tapping_not_typing():
    page = screen(field(0, "Name", top=100), button(1, "Packing list", 300))
    assert fill("Open the note 'Packing list'", page) is None


def test_a_field_naming_another_values_kind_waits_for_that_value():
    """The recipients box names phone numbers: the message is not typed there, the number is."""
    to = screen(field(0, "Type names, phone numbers or emails", rid="recipient_text_view", top=100))
    first = fill("Text 'On my way' to +1 555-0142", to)
    assert first is not None and first.text == "+1 555-0142"
    chat = screen(button(0, "+1 555-0142", 100), field(1, "Text message", top=2000))
    second = fill("Text 'On my way' to +1 555-0142", chat)
    assert second is not None and second.text == "On my way" and second.field.id == "1"


def test_the_password_the_goal_gives_goes_into_the_password_field():
    dialog = screen(button(0, "CoffeeBar Guest", 100), field(1, "Password", top=300), button(2, "Connect", 600))
    f = fill("Connect to the Wi-Fi network 'CoffeeBar Guest' with password latte2026", dialog)
    assert f is not None and f.field.id == "1" and f.text == "latte2026"


def test_two_fields_and_no_word_naming_either_give_nothing():
    form = screen(field(1, "First name", top=300), field(2, "Surname", top=500))
    assert fill("Rename it to 'Kitchen'", form) is None


def test_the_field_the_goal_gives_a_text_for_is_offered_first_with_that_text_and_a_tap_on_it_types_it():
    form = screen(field(1, "Title", top=300), field(2, "Note", top=500), button(3, "Save", 700))
    inner = Recorder()
    p = GuidedPlanner(inner, MapGuide([]), None, small_model=True).propose(
        PlanContext("Create a note titled 'Packing list'", form, "form"))
    ctx = inner.seen[-1]
    assert ctx.offer[0] == "1" and any("typing 'Packing list' into 'Title'" in n for n in ctx.notes)

    class TapsTitle(Recorder):
        def propose(self, ctx: PlanContext) -> Proposal:
            title = ctx.parse.element("1")
            return Proposal(Action(ActionType.TAP, touch=title.rect.center,
                                   target=Target(element_id="1", description="Title")), planner="taps")

    p = GuidedPlanner(TapsTitle(), MapGuide([]), None, small_model=True).propose(
        PlanContext("Create a note titled 'Packing list'", form, "form"))
    assert p.action.type is ActionType.TYPE and p.action.text == "Packing list"  # the tap became the typing
