"""Finding what flashed: the tracker is fed the virtual phone's own frames (downscaled as
the record keeps them) and reads them with the real OCR.  A toast seen over many frames,
fading in, is stored once; text that the action itself replaced or removed is not a flash;
a snackbar and a dialog that go away by themselves are."""

from __future__ import annotations

import numpy as np
import pytest

from agent.execute import execute
from agent.types import Action, ActionType
from phone.record.capture import default_reader
from phone.record.flashes import FlashTracker
from phone.record.ring import FrameRing, RingFrame
from phone.virtual.phone import VirtualPhone
from phone.virtual.system import Dialog
from phone.virtual.tasks import load_tasks, replay

pytestmark = pytest.mark.slow

TASKS = {t.id: t for t in load_tasks()}


@pytest.fixture(scope="module")
def read():
    return default_reader()


class Feeder:
    """A timed virtual phone, its frames fed to a tracker at chosen (wall-clock) times."""

    def __init__(self, read, task: str | None = None) -> None:
        self.phone = VirtualPhone(timed_flashes=True)
        self.actions: list[Action] = []
        if task is not None:
            twin = VirtualPhone()
            self.actions = [a for a in replay(TASKS[task], twin) if a is not None and not a.is_terminal]
            TASKS[task].setup(self.phone)
        self.tracker = FlashTracker(read)
        self.ring = FrameRing()
        self.now = 1000.0
        self.found = []

    def frame(self, image: np.ndarray | None = None) -> np.ndarray:
        img = self.phone.screenshot().image if image is None else image
        return self.ring.shrink(RingFrame(img, self.now, self.now)).image

    def feed(self, image: np.ndarray | None = None, after: float = 0.5) -> None:
        self.now += after
        small = self.frame(image)
        if self.tracker.same(small):
            self.tracker.seen_again(self.now)
        else:
            self.found += self.tracker.feed(small, self.now)

    def act(self, step: int, action: Action) -> None:
        self.now += 0.5
        touched = action.touch
        where = None
        if touched is not None:
            from vision.geometry import Rect

            f = 1280 / self.phone.screen_size().height
            where = Rect(int(touched.x * f), int(touched.y * f), int(touched.x * f) + 1, int(touched.y * f) + 1)
        self.tracker.action(step, self.now, self.now + 0.02, where)
        execute(action, self.phone)
        self.feed(after=0.05)

    def expire(self) -> None:
        """The messages' time is up (the phone's clock jumps, the tracker's moves 2.5 s)."""
        for msg in (self.phone.flashes.toast, self.phone.flashes.snackbar):
            if msg is not None:
                msg.until = 0.0
        self.phone.tick_flashes()
        self.feed(after=2.5)


def test_a_toast_seen_once_over_many_frames_is_stored_once(read):
    f = Feeder(read, "toasts.call_carla")
    f.feed()
    for i, action in enumerate(f.actions[:-1]):
        f.act(i, action)
    before = f.phone.screenshot().image.copy()
    last = len(f.actions) - 1
    execute(f.actions[-1], f.phone)  # the toast appears, fading in as on a phone
    shown = f.phone.screenshot().image.copy()
    f.tracker.action(last, f.now + 0.4, f.now + 0.42)
    for alpha in (0.35, 0.7):
        f.feed((before * (1 - alpha) + shown * alpha).astype(np.uint8), after=0.5 if alpha < 0.5 else 0.05)
    f.feed(shown, after=0.05)
    for _ in range(3):  # the stream repeats the unchanged screen
        f.feed(shown, after=0.4)
    assert f.found == []  # still on the screen: not a flash yet
    assert ["Carla Mendes" in t.text for t in f.tracker.showing(last)] == [True]
    for alpha in (0.7, 0.35):  # fading out
        f.feed((before * (1 - alpha) + shown * alpha).astype(np.uint8), after=0.4)
    f.feed(before, after=0.05)
    assert len(f.found) == 1, f.found
    t = f.found[0]
    assert "Calling Carla Mendes" in t.text
    assert t.step == last
    assert 1.0 <= t.seconds <= 3.0
    f.feed(before, after=1.0)
    f.feed(after=1.0)
    assert len(f.found) == 1  # and never again


def test_pages_switches_and_typing_are_not_flashes(read):
    f = Feeder(read, "notes.create_packing_list")  # pages, a keyboard, letters typed into fields
    f.feed()
    for i, action in enumerate(f.actions):
        f.act(i, action)
        f.feed(after=0.8)
    g = Feeder(read, "settings.wifi_off")  # a switch and its label flip
    g.feed()
    for i, action in enumerate(g.actions):
        g.act(i, action)
        g.feed(after=0.8)
    assert f.found == [] and g.found == []


def test_a_snackbar_gone_by_itself_is_one_flash_with_its_action(read):
    f = Feeder(read, "toasts.delete_gym_alarm")
    f.feed()
    for i, action in enumerate(f.actions):
        f.act(i, action)
    f.feed(after=1.0)
    f.expire()
    assert len(f.found) == 1, f.found
    assert f.found[0].text.startswith("Alarm deleted") and "Undo" in f.found[0].text


def test_a_message_closed_by_the_action_that_touched_it_is_not_a_flash(read):
    f = Feeder(read, "toasts.delete_gym_alarm")
    f.feed()
    for i, action in enumerate(f.actions):
        f.act(i, action)
    undo = next(e for e in f.phone.ground_truth().elements if e.text == "Undo")
    f.act(len(f.actions), Action.tap(undo.rect.center.x, undo.rect.center.y))  # the user taps Undo
    f.feed(after=3.0)
    assert f.found == []


def test_a_dialog_that_closes_by_itself_is_a_flash(read):
    f = Feeder(read)
    f.phone.open_app("Clock")
    f.feed()
    f.tracker.action(0, f.now + 0.1, f.now + 0.12)  # the action that opened it
    f.phone.show_dialog(Dialog(title="Saving your alarm", message="Please wait", buttons=[]))
    f.feed(after=0.2)
    f.feed(after=0.5)
    f.phone.close_dialog()
    f.phone._settle()
    f.feed(after=1.5)  # nobody touched the phone
    assert len(f.found) == 1, f.found
    assert "Saving your alarm" in f.found[0].text and f.found[0].step == 0


def test_a_toast_that_came_with_a_new_page_belongs_to_the_step_that_showed_it(read):
    """The toast shows as the action's new page comes (the page is not read), then the next
    action changes the page under it: the toast still belongs to the step that showed it."""
    f = Feeder(read, "toasts.copy_link_speaker")
    f.feed()
    for i, action in enumerate(f.actions):  # the last one: the sheet closes, "Link copied" shows
        f.act(i, action)
    copied = len(f.actions) - 1
    f.feed(after=0.8)
    f.act(copied + 1, Action.simple(ActionType.BACK))  # another page comes under the toast
    f.feed(after=0.5)
    f.expire()
    assert len(f.found) == 1, f.found
    t = f.found[0]
    assert "Link copied" in t.text
    assert t.step == copied
    assert t.seconds >= 1.5  # on the screen since it came, not since the page under it changed


def _scripted_read(words_by_shade):
    """An OCR stand-in for the tracker's own logic: one line across the crop, its words
    chosen by the crop's darkest shade (what the pixels hold is set by the test)."""
    from vision.geometry import Rect
    from vision.types import TextSpan

    def read(crop):
        shade = int(crop.min())
        return [TextSpan(words_by_shade[shade], Rect(0, 4, crop.shape[1], crop.shape[0] - 4), 0.99)] \
            if shade in words_by_shade else []

    return read


def test_a_message_read_with_a_fragment_of_the_text_beneath_it_still_went_away():
    """A toast over body text may be read as one line with a fragment of that text ("Mir
    Link copied") and, once gone, the body text alone at the same place: texts unlike each
    other, so the toast went away — a flash of the step that showed it."""
    before_page = np.full((400, 300, 3), 200, np.uint8)
    page = np.full((400, 300, 3), 240, np.uint8)
    page[300:340, 20:280] = 90  # a line of body text
    with_toast = page.copy()
    with_toast[296:344, 60:240] = 30  # the toast's pill over it
    tracker = FlashTracker(_scripted_read({30: "Mir Link copied", 90: "Mini from our audio ran"}))
    tracker.feed(before_page, 100.0)
    tracker.action(0, 100.5, 100.52)  # the tap brings a new page and the toast with it (not read)
    assert tracker.feed(with_toast, 100.6) == []
    found = tracker.feed(page, 102.6)  # the toast goes by itself
    assert [(t.text, t.step) for t in found] == [("Mir Link copied", 0)]


def test_numbers_ticking_in_place_are_updates_not_flashes():
    page = np.full((400, 300, 3), 240, np.uint8)
    frames = []
    for shade in (10, 20, 30, 40):
        f = page.copy()
        f[100:130, 100:200] = shade
        frames.append(f)
    tracker = FlashTracker(_scripted_read({10: "00:01.2", 20: "00:02.4", 30: "00:03.6", 40: "00:04.8"}))
    tracker.feed(frames[0], 100.0)
    tracker.action(0, 100.5, 100.52, None)
    found = [t for i, f in enumerate(frames[1:]) for t in tracker.feed(f, 102.0 + i)]
    assert found == []
