"""Items 2 and 3: no model reply crashes a run, and no point off the screen is executed.

Replies carry ``Infinity``, ``1e999`` (valid JSON, read as infinity), ``NaN``, negative
and huge coordinates, in JSON and in words; through the free-text reader, the
structured-reply path (``--constrained``) and the whole CLI against a scripted server.
"""

from __future__ import annotations

import pytest

from agent.commands import CommandError, parse_command, parse_lenient
from agent.device import Key
from agent.execute import NotExecutable, execute
from agent.types import Action, ActionType, EpisodeStatus, Target
from app.storage import Store
from tests.reliability.support import HOSTILE as HOSTILE_REPLIES
from tests.reliability.support import alternating, done_lines, run_args, scripted, tapwise
from vision.geometry import Point, Size

SCREEN = Size(1080, 2400)

HOSTILE = [
    *HOSTILE_REPLIES,
    '{"action": {"action_type":"click","x":1080,"y":2400}}',
    "long press (5000, 10)",
]


@pytest.mark.parametrize("reply", HOSTILE)
def test_a_hostile_reply_is_refused_with_a_clear_error_never_a_crash(reply):
    for reader in (parse_command, parse_lenient):
        with pytest.raises(CommandError) as err:
            reader(reply, SCREEN)
        assert "coordinates" in str(err.value) or "outside" in str(err.value)


def test_points_on_the_screen_still_work():
    assert parse_command('{"action_type":"click","x":1079,"y":2399}', SCREEN).touch == Point(1079, 2399)
    assert parse_command("tap (0, 0)", SCREEN).touch == Point(0, 0)


class Recorder:
    """A device that records what reaches it."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def tap(self, x: int, y: int) -> None:
        self.calls.append(("tap", x, y))

    def long_press(self, x: int, y: int, ms: int) -> None:
        self.calls.append(("long_press", x, y))

    def swipe(self, *a: int) -> None:
        self.calls.append(("swipe", *a))

    def input_text(self, text: str) -> None:
        self.calls.append(("text", text))

    def key(self, key: Key) -> None:
        self.calls.append(("key", key))


@pytest.mark.parametrize("action", [
    Action(ActionType.TAP, touch=Point(-10**12, 10**40)),
    Action(ActionType.LONG_PRESS, touch=Point(-50, -7), duration_ms=800),
    Action(ActionType.SWIPE, touch=Point(10, 10), lift=Point(10, 10**9)),
    Action.type_text("hi", Target(point=Point(-3, 4))),
])
def test_the_executor_never_sends_a_point_no_screen_has(action):
    device = Recorder()
    with pytest.raises(NotExecutable, match="off the screen"):
        execute(action, device)  # type: ignore[arg-type]
    assert device.calls == []


@pytest.mark.parametrize("constrained", ["--free", "--constrained"])
@pytest.mark.parametrize("reply", ['{"action_type":"click","x":Infinity,"y":1e999}',
                                   '{"action_type":"click","x":-50,"y":-7}',
                                   '{"action_type":"click","x":99999,"y":123456}'])
def test_a_run_fed_only_hostile_replies_ends_as_an_error_without_tapping(tmp_path, reply, constrained):
    db = tmp_path / "t.sqlite"
    with scripted(alternating(reply)) as llm:
        out = tapwise(*run_args(llm.url, steps=6, db=db), constrained)
    text = out.stdout + out.stderr
    assert "Traceback" not in text and "OverflowError" not in text
    assert done_lines(out.stdout) == 0, "nothing was executed"
    assert out.returncode == 2, text[-2000:]
    with Store(db) as store:
        (row,) = store.list_episodes()
        episode = store.load_episode(row["id"])
    assert episode.status is EpisodeStatus.ERROR, "the episode is closed, not left running"
    assert all(s.executed is None for s in episode.steps)
    assert any("outside" in (s.error or "") or "finite" in (s.error or "") for s in episode.steps)


def test_a_stored_macro_tapping_off_every_screen_does_not_replay_as_succeeded():
    from agent.macros.types import Macro, MacroStep
    from app.settings import load_settings

    macro = Macro("far away", steps=(MacroStep(Action(ActionType.TAP, touch=Point(-10**12, 10**40)), ""),))
    with Store(load_settings()[0].database_path) as store:  # stored as it was, bypassing the import checks
        store.save_macro(macro)
    out = tapwise("macro", "replay", "far away", "--no-interactive")
    assert "Traceback" not in out.stdout + out.stderr, out.stderr[-2000:]
    assert out.returncode != 0 and "succeeded" not in out.stdout.lower(), out.stdout


def test_an_openai_compatible_server_sending_infinity_does_not_crash_the_run(tmp_path):
    db = tmp_path / "t.sqlite"
    with scripted(alternating('{"action_type":"click","x":Infinity,"y":1e999}')) as llm:
        args = run_args(llm.url + "/v1", steps=4, db=db)
        args[args.index("ollama")] = "openai"
        out = tapwise(*args)
    assert "Traceback" not in out.stdout + out.stderr
    assert out.returncode == 2 and done_lines(out.stdout) == 0, out.stdout[-2000:]
