"""The "screen changed" warning speaks only when what changed matters: the virtual phone's
screens, parsed like a run's observations and told apart as the feedback tells them
(``agent.effects.screen_identity``), checked once the screen has settled."""

from __future__ import annotations

import pytest

from agent.device import Key
from agent.effects import screen_identity
from app.gui.screen_watch import ScreenWatch
from phone.virtual.noise import NoiseConfig
from phone.virtual.phone import VirtualPhone
from vision.config import PipelineConfig
from vision.hierarchy import parse_hierarchy
from vision.keyboard import keyboard_rect
from vision.pipeline import ScreenParser
from vision.types import ElementKind, Screen

SETTLE_MS = 150
PARSER = ScreenParser(PipelineConfig(remember_previous=False))


def identity(shot: Screen) -> str:
    return screen_identity(PARSER.parse(shot), shot.foreground_package)


class Phone:
    """The phone as the window sees it: mirror frames, and a screen the watch identifies."""

    def __init__(self) -> None:
        self.phone = VirtualPhone(noise=NoiseConfig(dynamic_content=True))  # its clock ticks by itself
        self.identified = 0

    def shot(self) -> Screen:
        return self.phone.screenshot(with_hierarchy=True)

    def next_minute(self) -> Screen:
        """The first frame showing the next minute on the clock."""
        now = self.phone.minutes_now()
        while True:
            shot = self.shot()
            if self.phone.minutes_now() != now:
                return shot

    def identify(self, _frame: Screen, done) -> None:  # type: ignore[no-untyped-def]
        self.identified += 1
        done(identity(self.shot()))  # a fresh screenshot with its tree, as the window takes it

    def field(self) -> None:
        shot = self.shot()
        f = next(e for e in parse_hierarchy(shot.hierarchy_xml or "", shot.size).elements
                 if e.kind is ElementKind.EDIT_TEXT)
        self.phone.tap(f.rect.center.x, f.rect.center.y)


@pytest.fixture
def search_page() -> Phone:
    """Settings' search page with the keyboard put away (Back), as a step may be planned on it."""
    p = Phone()
    p.phone.open_app("Settings")
    p.field()
    p.phone.key(Key.BACK)
    assert keyboard_rect(PARSER.parse(p.shot())) is None
    return p


def watching(qtbot, p: Phone) -> tuple[ScreenWatch, list[bool]]:
    watch = ScreenWatch(p.identify, settle_ms=SETTLE_MS)
    said: list[bool] = []
    watch.verdict.connect(said.append)
    first = p.shot()
    watch.watch(identity(first), first)
    return watch, said


def test_a_ticking_clock_never_warns(qtbot, search_page):
    p = search_page
    watch, said = watching(qtbot, p)
    for _ in range(3):
        watch.frame(p.next_minute())
        qtbot.wait(SETTLE_MS * 3)
    assert p.identified == 3, "each new minute is looked at once the screen settled"
    assert said == [] and not watch.changed


def test_an_opening_keyboard_never_warns_but_another_page_does(qtbot, search_page):
    p = search_page
    watch, said = watching(qtbot, p)
    p.field()  # the keyboard comes up over the same page
    shot = p.shot()
    assert keyboard_rect(PARSER.parse(shot)) is not None
    watch.frame(shot)
    qtbot.wait(SETTLE_MS * 3)
    assert p.identified == 1 and said == []
    p.phone.key(Key.BACK)  # the keyboard goes
    p.phone.key(Key.BACK)  # and the page: Settings' first page is another screen
    watch.frame(p.shot())
    assert not watch.changed, "nothing is said before the screen has settled"
    qtbot.waitUntil(lambda: watch.changed, timeout=5000)
    assert said == [True]


def test_frames_that_keep_changing_are_not_identified_until_they_stop(qtbot, search_page):
    p = search_page
    watch, said = watching(qtbot, p)
    for _ in range(8):  # an animation: a new frame every 40 ms
        watch.frame(p.next_minute())
        qtbot.wait(40)
    assert p.identified == 0
    qtbot.waitUntil(lambda: p.identified == 1, timeout=3000)
    assert said == []


def test_a_decision_ends_the_watch(qtbot, search_page):
    p = search_page
    watch, said = watching(qtbot, p)
    p.phone.key(Key.BACK)
    p.phone.key(Key.BACK)
    watch.frame(p.shot())
    watch.stop()
    qtbot.wait(SETTLE_MS * 3)
    assert p.identified == 0 and said == [] and not watch.watching
