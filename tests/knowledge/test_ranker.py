"""The learned step ranker: fitted on some apps' recorded steps, it ranks the step another
app's screen needs; its policy is chosen from held-out predictions; its weights travel as
a data file and only interface words get a weight of their own."""

from __future__ import annotations

import json

import pytest

from agent.knowledge.ranker import Example, Policy, RankerError, StepRanker, fit
from agent.knowledge.ranker_train import choose_policy, held_out, kept, train
from agent.knowledge.step_features import Move, step_view
from agent.planners.base import Turn
from agent.types import Action, ActionType, Target
from vision.geometry import Rect, Size
from vision.types import Element, ElementKind, ScreenParse


def page(*names: str) -> ScreenParse:
    rows = tuple(Element(str(i), ElementKind.BUTTON, Rect(0, 200 + 140 * i, 1080, 330 + 140 * i), text=n,
                         clickable=True) for i, n in enumerate(names))
    return ScreenParse(Size(1080, 2400), rows)


def tapped(parse: ScreenParse, name: str) -> Turn:
    el = next(e for e in parse.elements if e.text == name)
    return Turn(f"tap {name}", Action(ActionType.TAP, touch=el.rect.center,
                                      target=Target(element_id=el.id, description=name)), "before")


def app_steps(app: str, screens: list[tuple[str, tuple[str, ...], str]]) -> list[Example]:
    """For each (goal, screen rows, row to tap): the tap step, then "complete" after it."""
    out = []
    for goal, rows, target in screens:
        parse = page(*rows)
        view = step_view(goal, parse, ())
        out.append(Example(view, view.index_of(next(e.id for e in parse.elements if e.text == target)), app))
        after = step_view(goal, parse, (tapped(parse, target),))
        out.append(Example(after, after.index_of(None, complete=True), app))
    return out


NOTES = app_steps("notes", [("Open the archive", ("Inbox", "Archive", "Trash", "More options"), "Archive"),
                            ("Show my labels", ("Labels", "Reminders", "Inbox", "More options"), "Labels"),
                            ("Open reminders", ("Inbox", "Labels", "Reminders", "Settings"), "Reminders"),
                            ("Go to the trash", ("Trash", "Archive", "Inbox", "Settings"), "Trash")])
MUSIC = app_steps("music", [("Play the album list", ("Songs", "Albums", "Artists", "More options"), "Albums"),
                            ("Show artists", ("Artists", "Songs", "Genres", "Settings"), "Artists"),
                            ("Open genres", ("Songs", "Genres", "Albums", "More options"), "Genres"),
                            ("Open the queue", ("Queue", "Songs", "Albums", "Settings"), "Queue")])
CLOCK = app_steps("clock", [("Open the timer", ("Alarm", "Clock", "Timer", "Stopwatch"), "Timer"),
                            ("Show the stopwatch", ("Stopwatch", "Alarm", "Timer", "Bedtime"), "Stopwatch")])


def test_fitted_on_two_apps_it_ranks_the_right_step_first_on_a_third_it_never_saw():
    ranker = fit([*NOTES, *MUSIC])
    for ex in CLOCK:
        ranked = ranker.rank(ex.view)
        assert ranked.top is ex.view.candidates[ex.gold]


def test_held_out_predictions_come_from_weights_that_never_saw_the_app():
    preds = held_out([*NOTES, *MUSIC, *CLOCK])
    assert len(preds) == len(NOTES) + len(MUSIC) + len(CLOCK)
    right = sum(h.ranked.top is h.example.view.candidates[h.example.gold] for h in preds)
    assert right >= 0.8 * len(preds)


def test_the_policy_acts_alone_only_where_held_out_precision_reaches_the_bar():
    preds = held_out([*NOTES, *MUSIC, *CLOCK] * 2)  # enough steps for the minimum support
    policy, figures = choose_policy(preds)
    if policy.act <= 1.0:
        assert figures["act_alone_precision"] >= 0.95
    if policy.done <= 1.0:
        assert figures["done_alone_precision"] >= 0.95
    assert figures["offered_recall"] >= 0.95 and 0.0 <= policy.no_done < 1.0


def test_the_models_choices_are_the_best_elements_up_to_the_mass_and_at_most_k():
    ranker = fit([*NOTES, *MUSIC])
    ranked = ranker.rank(CLOCK[0].view)
    assert kept(ranked, 0.0)[0] is ranked.elements()[0]  # at least the best one
    assert len(kept(ranked, 1.0, 2)) == 2
    assert all(c.move is not Move.COMPLETE for c in kept(ranked, 1.0))


def test_words_of_content_or_of_too_few_apps_get_no_weight_of_their_own():
    ranker = fit([*NOTES, *MUSIC, *CLOCK], min_apps=2)
    words = {k.split(":", 1)[1] for k in ranker.weights if k.startswith("tok")}
    assert "options" in words or "more" in words or "settings" in words  # shown in two apps
    assert "archive" not in words and "albums" not in words  # one app's own words
    digits = app_steps("files", [("Open track7", ("track7", "Folders", "More options"), "track7")])
    ranker = fit([*NOTES, *digits, *[Example(e.view, e.gold, "other") for e in digits]], min_apps=2)
    assert not any(k.endswith("track7") for k in ranker.weights)  # a file's name, not an interface word


def test_weights_and_policy_survive_the_data_file_and_a_damaged_file_is_refused(tmp_path):
    ranker = train([*NOTES, *MUSIC, *CLOCK])
    path = tmp_path / "ranker.json"
    ranker.save(path)
    again = StepRanker.load(path)
    assert again.policy == ranker.policy and again.meta["held_out"] == json.loads(path.read_text())["meta"]["held_out"]
    view = CLOCK[0].view
    assert [c.name for c in again.rank(view).candidates] == [c.name for c in ranker.rank(view).candidates]
    path.write_text('{"schema": 99, "weights": {}}')
    with pytest.raises(RankerError, match="schema"):
        StepRanker.load(path)


def test_the_shipped_ranker_loads_with_a_policy_chosen_on_held_out_apps():
    ranker = StepRanker.shipped()
    assert ranker is not None and isinstance(ranker.policy, Policy)
    assert ranker.meta["held_out"]["act_alone_precision"] >= 0.95
    assert ranker.meta["held_out"]["done_alone_precision"] >= 0.95
    assert "train_evidence.py" in ranker.meta["command"]
