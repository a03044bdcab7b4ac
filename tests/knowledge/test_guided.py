"""How the guided planner uses the learned step ranker: it acts alone only above the
policy's levels, otherwise the model decides among the ranked elements, and it never
repeats what the user turned down."""

from __future__ import annotations

from agent.feedback import NOT_DONE_NOTE
from agent.knowledge.guide import MapGuide
from agent.knowledge.guided import GuidedPlanner
from agent.knowledge.ranker import Policy, StepRanker
from agent.planners.base import PlanContext, Turn
from agent.types import Action, ActionType
from tests.knowledge.recording_planner import Recorder
from vision.geometry import Rect, Size
from vision.types import Element, ElementKind, ScreenParse


def screen(*names: str, kind: ElementKind = ElementKind.BUTTON) -> ScreenParse:
    rows = tuple(Element(str(i), kind, Rect(0, 200 + 150 * i, 1080, 340 + 150 * i), text=n, clickable=True)
                 for i, n in enumerate(names))
    return ScreenParse(Size(1080, 2400), rows)


#: A ranker that follows the goal's words strongly, and says "complete" once a step was taken.
WORDS = {"own": 10.0, "last": -10.0, "bias_done": -6.0, "done_cov": 12.0}


def guided(policy: Policy, weights: dict[str, float] | None = None) -> tuple[GuidedPlanner, Recorder]:
    inner = Recorder()
    return GuidedPlanner(inner, MapGuide([]), None, ranker=StepRanker(weights or WORDS, policy),
                         small_model=True), inner


def test_the_best_element_is_taken_without_the_model_when_the_ranker_is_sure_enough():
    planner, inner = guided(Policy(act=0.9, done=1.01))
    step = planner.propose(PlanContext("Open Bluetooth", screen("Wi-Fi", "Bluetooth", "Display"), ""))
    assert not inner.seen
    assert step.action.type is ActionType.TAP and step.action.target.description == "Bluetooth"
    assert step.planner == "recorder+screen" and "Bluetooth" in step.rationale


def test_below_the_act_level_the_model_decides_among_the_best_elements_in_the_rankers_order():
    planner, inner = guided(Policy(act=1.01, done=1.01, mass=0.9))
    parse = screen("Wi-Fi", "Display", "Bluetooth", "Sound")
    planner.propose(PlanContext("Open Bluetooth", parse, ""))
    ctx = inner.seen[-1]
    assert ctx.offer[0] == "2"  # Bluetooth first
    assert len(ctx.offer) < 4  # the rest of the screen is not offered: it holds little of the probability
    assert ctx.parse.elements[0].id == "2"
    assert any("likeliest next step" in n and "Bluetooth" in n for n in ctx.notes)


def test_complete_is_said_without_the_model_above_the_done_level_but_never_on_the_first_screen():
    planner, inner = guided(Policy(act=1.01, done=0.8))
    parse = screen("Wi-Fi", "Bluetooth")
    first = planner.propose(PlanContext("Open Bluetooth", parse, ""))
    assert first.action.type is not ActionType.COMPLETE
    tapped = Turn("tap Bluetooth", Action(ActionType.TAP, touch=parse.elements[1].rect.center,
                                          target=_target(parse.elements[1])), "before")
    done = planner.propose(PlanContext("Open Bluetooth", parse, "after", history=(tapped,)))
    assert done.action.type is ActionType.COMPLETE and done.planner == "recorder+screen"
    assert len(inner.seen) == 1  # only the first screen asked the model


def test_once_the_user_says_not_done_the_ranker_no_longer_claims_it():
    planner, inner = guided(Policy(act=1.01, done=0.8))
    parse = screen("Wi-Fi", "Bluetooth")
    tapped = Turn("tap Bluetooth", Action(ActionType.TAP, touch=parse.elements[1].rect.center,
                                          target=_target(parse.elements[1])), "before")
    step = planner.propose(PlanContext("Open Bluetooth", parse, "after", history=(tapped,),
                                       notes=(NOT_DONE_NOTE + ": and pair the headphones",)))
    assert step.action.type is not ActionType.COMPLETE and inner.seen


def test_complete_is_not_offered_to_the_model_where_the_ranker_rules_it_out():
    planner, inner = guided(Policy(act=1.01, done=1.01, no_done=0.5))
    parse = screen("Wi-Fi", "Bluetooth")
    tapped = Turn("tap Wi-Fi", Action(ActionType.TAP, touch=parse.elements[0].rect.center,
                                      target=_target(parse.elements[0])), "before")
    planner.propose(PlanContext("Pair the headphones", parse, "after", history=(tapped,)))
    assert inner.seen[-1].allow_done is False


def test_a_step_the_user_turned_down_here_is_never_taken_alone():
    planner, inner = guided(Policy(act=0.9, done=1.01))
    parse = screen("Wi-Fi", "Bluetooth", "Display")
    sure = planner.propose(PlanContext("Open Bluetooth", parse, ""))
    again = planner.propose(PlanContext("Open Bluetooth", parse, "", rejected=(sure.action,)))
    assert inner.seen and again.planner == "recorder"


def test_a_rejected_element_makes_way_for_the_next_in_the_ranking_when_one_is_offered():
    """Offered only the ranker's best element, a small model whose proposal of it was
    rejected is offered the second best, not an empty list (it would only scroll)."""
    planner, inner = guided(Policy(act=1.01, done=1.01, mass=0.99, keep_small=1),
                            {"own": 10.0, "kind_button": 0.0, "row_top": 1.0})
    parse = screen("Wi-Fi", "Display", "Bluetooth", "Bluetooth devices")
    planner.propose(PlanContext("Open Bluetooth", parse, ""))
    first = inner.seen[-1].offer
    assert len(first) == 1
    tap = Action(ActionType.TAP, touch=parse.elements[int(first[0])].rect.center,
                 target=_target(parse.elements[int(first[0])]))
    planner.propose(PlanContext("Open Bluetooth", parse, "", rejected=(tap,), rejections=1))
    second = inner.seen[-1].offer
    assert len(second) == 1 and second != first and second[0] in {"2", "3"}
    assert not any(f"[{first[0]}]" in n for n in inner.seen[-1].notes if "likeliest" in n)


def test_a_model_that_is_not_a_small_built_in_one_decides_every_step_offered_every_element_best_first():
    inner = Recorder()
    planner = GuidedPlanner(inner, MapGuide([]), None, ranker=StepRanker(WORDS, Policy(act=0.5, done=0.5, mass=0.5)))
    parse = screen("Wi-Fi", "Display", "Bluetooth", "Sound")
    planner.propose(PlanContext("Open Bluetooth", parse, ""))
    ctx = inner.seen[-1]
    assert ctx.offer[0] == "2" and len(ctx.offer) == 4 and ctx.allow_done


def test_without_evidence_the_planner_is_only_guided_by_maps():
    inner = Recorder()
    planner = GuidedPlanner(inner, MapGuide([]), None, evidence=False)
    planner.propose(PlanContext("Open Bluetooth", screen("Wi-Fi", "Bluetooth"), ""))
    assert inner.seen[-1].offer == () and inner.seen[-1].allow_done


def test_the_shipped_ranker_puts_the_row_the_goal_names_first_on_a_screen_it_never_saw():
    ranker = StepRanker.shipped()
    assert ranker is not None and 0.5 <= ranker.policy.act <= 1.0 and 0.5 <= ranker.policy.done <= 1.0
    planner = GuidedPlanner(Recorder(), MapGuide([]), None, ranker=ranker)
    parse = screen("Network & internet", "Connected devices", "Apps", "Notifications", "Battery", "Display")
    step = planner.propose(PlanContext("Turn the notifications off", parse, ""))
    assert step.action.target is not None or planner.inner.seen[-1].offer[0] == "3"
    if step.action.target is not None and step.planner.endswith("+screen"):
        assert step.action.target.element_id == "3"


def _target(el: Element):
    from agent.types import Target

    return Target(element_id=el.id, point=el.rect.center, description=el.text)


def test_a_switch_already_tapped_in_this_run_is_never_tapped_again_on_evidence():
    planner, inner = guided(Policy(act=0.5, done=1.01), {"own": 10.0})
    parse = screen("All-day", kind=ElementKind.SWITCH)
    parse = ScreenParse(parse.screen_size, (*parse.elements, *screen("Title", "Save").elements[1:]))
    tapped = Turn("tap All-day", Action(ActionType.TAP, touch=parse.elements[0].rect.center,
                                        target=_target(parse.elements[0])), "form")
    step = planner.propose(PlanContext("Add an all-day event", parse, "form", history=(tapped,)))
    assert inner.seen and step.planner == "recorder"  # tapping it again would undo it: the model decides


def test_a_sensitive_step_is_never_taken_alone_on_a_screen_that_lacks_what_the_goal_names():
    planner, inner = guided(Policy(act=0.5, done=1.01))
    wrong_note = screen("Groceries", "Delete note")
    planner.propose(PlanContext("Delete the note about the dentist", wrong_note, ""))
    assert inner.seen  # "Delete note" fits the words, but the dentist is not here: the model and the user decide
    right_note = screen("Dentist note", "Delete")
    step, inner2 = guided(Policy(act=0.5, done=1.01))
    proposal = step.propose(PlanContext("Delete the dentist note", right_note, ""))
    assert not inner2.seen and proposal.action.target.description in ("Delete", "Dentist note")


def test_what_no_mapped_screen_shows_is_only_advised_to_any_model_and_never_again_once_turned_down():
    from tests.knowledge.test_app_map import explored

    clock, _ = explored("Clock", 150)
    guide = MapGuide([clock])
    blank = screen("Alarm", "Clock", "Timer", "Stopwatch")
    assert guide.unreachable("Show the weather forecast in the Clock app", blank) == ["weather", "forecast"]
    assert guide.unreachable("Start the stopwatch", blank) == []
    assert guide.unreachable("Show the weather", screen("Weather", "Alarm")) == []  # this screen shows it
    assert guide.unreachable("Wake me at half past three in the afternoon", blank) == []  # times say no place
    small_inner = Recorder()
    small = GuidedPlanner(small_inner, guide, None, ranker=StepRanker(WORDS, Policy()), small_model=True)
    said = small.propose(PlanContext("Show the weather forecast in the Clock app", blank, ""))
    assert said.action.type is ActionType.BACK  # the model answered, told what the maps found
    assert any("'weather'" in n for n in small_inner.seen[-1].notes)
    small.propose(PlanContext("Show the weather forecast in the Clock app", blank, "",
                              rejected=(Action.simple(ActionType.IMPOSSIBLE),)))
    assert not any("'weather'" in n for n in small_inner.seen[-1].notes)  # the user said it is possible
    inner = Recorder()
    other = GuidedPlanner(inner, guide, None, ranker=StepRanker(WORDS, Policy()))
    other.propose(PlanContext("Show the weather forecast in the Clock app", blank, ""))
    assert any("'weather'" in n for n in inner.seen[-1].notes)


def test_inside_the_app_the_goal_names_a_small_model_proposes_impossible_when_no_explored_screen_shows_its_object():
    from phone.virtual.phone import VirtualPhone
    from tests.knowledge.test_app_map import explored

    clock, _ = explored("Clock", 150)
    guide = MapGuide([clock])
    blank = screen("Alarm", "Clock", "Timer", "Stopwatch")
    in_clock = VirtualPhone()
    in_clock.open_app("Clock")

    def small(device=in_clock, small_model=True):
        return GuidedPlanner(Recorder(), guide, device, ranker=StepRanker(WORDS, Policy()), small_model=small_model)

    said = small().propose(PlanContext("Show the weather forecast in the Clock app", blank, ""))
    assert said.action.type is ActionType.IMPOSSIBLE and said.planner == "recorder+map"
    assert "'weather'" in said.rationale and "Clock" in said.rationale
    # the app the goal names, by the name the phone shows in its own language
    uhr = VirtualPhone(lang="de")
    uhr.open_app("Clock")
    german = small(uhr).propose(PlanContext("Zeig mir die Wettervorhersage in der Uhr-App", blank, ""))
    assert german.action.type is ActionType.IMPOSSIBLE and "'wettervorhersage'" in german.rationale
    assert "in Uhr" in german.rationale  # named as the phone names it
    # not where the goal names no app, nor in another app, nor once turned down, nor for any other model
    assert small().propose(PlanContext("Show the weather forecast", blank, "")).action.type is not ActionType.IMPOSSIBLE
    home = VirtualPhone()
    assert small(home).propose(PlanContext("Show the weather forecast in the Clock app", blank, "")).action.type \
        is not ActionType.IMPOSSIBLE
    turned_down = PlanContext("Show the weather forecast in the Clock app", blank, "",
                              rejected=(Action.simple(ActionType.IMPOSSIBLE),))
    assert small().propose(turned_down).action.type is not ActionType.IMPOSSIBLE
    assert small(small_model=False).propose(PlanContext("Show the weather forecast in the Clock app", blank, "")) \
        .action.type is not ActionType.IMPOSSIBLE
    # what the goal is about is on a screen of the app: no verdict
    assert small().propose(PlanContext("Start the stopwatch in the Clock app", blank, "")).action.type \
        is not ActionType.IMPOSSIBLE
    for phone in (in_clock, uhr, home):
        phone.close()


def test_complete_is_not_claimed_while_a_button_named_by_the_goals_own_verb_is_still_untapped():
    planner, inner = guided(Policy(act=1.01, done=0.5))
    parse = ScreenParse(Size(1080, 2400), (
        Element("0", ElementKind.BUTTON, Rect(0, 2064, 216, 2274), text="Stopwatch", clickable=True, selected=True),
        Element("1", ElementKind.BUTTON, Rect(400, 1800, 680, 2000), text="Start", clickable=True)))
    tapped = Turn("tap Stopwatch", Action(ActionType.TAP, touch=parse.elements[0].rect.center,
                                          target=_target(parse.elements[0])), "before")
    step = planner.propose(PlanContext("Start the stopwatch", parse, "after", history=(tapped,)))
    assert step.action.type is not ActionType.COMPLETE and inner.seen  # "Start" is still to be pressed
    pressed = Turn("tap Start", Action(ActionType.TAP, touch=parse.elements[1].rect.center,
                                       target=_target(parse.elements[1])), "after")
    running = ScreenParse(Size(1080, 2400), (
        Element("2", ElementKind.BUTTON, Rect(400, 1800, 680, 2000), text="Stop", clickable=True),))
    done = planner.propose(PlanContext("Start the stopwatch", running, "later", history=(tapped, pressed)))
    assert done.action.type is ActionType.COMPLETE


def test_the_tab_the_last_step_chose_is_not_offered_again_but_a_button_may_be_pressed_twice():
    planner, inner = guided(Policy(act=1.01, done=1.01, mass=1.0))
    tab = Element("0", ElementKind.BUTTON, Rect(0, 2064, 216, 2274), text="Stopwatch", clickable=True, selected=True)
    lap = Element("1", ElementKind.BUTTON, Rect(400, 1800, 680, 2000), text="Lap", clickable=True)
    parse = ScreenParse(Size(1080, 2400), (tab, lap))
    on_tab = Turn("tap Stopwatch", Action(ActionType.TAP, touch=tab.rect.center, target=_target(tab)), "before")
    planner.propose(PlanContext("Open the stopwatch and lap it", parse, "after", history=(on_tab,)))
    assert "0" not in inner.seen[-1].offer
    on_lap = Turn("tap Lap", Action(ActionType.TAP, touch=lap.rect.center, target=_target(lap)), "after")
    planner.propose(PlanContext("Record a lap twice", parse, "later", history=(on_lap,)))
    assert "1" in inner.seen[-1].offer  # pressing "Lap" again is a new lap
