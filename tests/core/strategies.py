"""Hypothesis strategies that build valid core objects."""

from __future__ import annotations

from hypothesis import strategies as st

from agent.macros.types import Macro, MacroStep
from agent.types import (
    Action,
    ActionType,
    Autonomy,
    Decision,
    DecisionKind,
    Direction,
    Episode,
    EpisodeStatus,
    Fingerprint,
    ImageRef,
    LatentState,
    LLMCall,
    Proposal,
    Step,
    StepOutcome,
    Target,
)
from vision.geometry import Point, Rect, Size
from vision.types import (
    Block,
    Disagreement,
    Element,
    ElementKind,
    ElementSource,
    ScreenParse,
    StageTiming,
    TextSpan,
)

text = st.text(max_size=30)
points = st.builds(Point, st.integers(0, 1079), st.integers(0, 2399))


@st.composite
def rects(draw):
    left = draw(st.integers(0, 1000))
    top = draw(st.integers(0, 2300))
    return Rect(left, top, left + draw(st.integers(0, 79)), top + draw(st.integers(0, 99)))


fingerprints = st.builds(
    Fingerprint,
    text=text,
    label=text,
    resource_id=text,
    rel_x=st.none() | st.floats(0, 1),
    rel_y=st.none() | st.floats(0, 1),
)
targets = st.builds(Target, element_id=st.none() | text, point=st.none() | points, description=text,
                    fingerprint=st.none() | fingerprints)


@st.composite
def actions(draw):
    kind = draw(st.sampled_from(list(ActionType)))
    if kind in (ActionType.TAP, ActionType.LONG_PRESS):
        return Action(kind, touch=draw(points), target=draw(st.none() | targets))
    if kind is ActionType.SWIPE:
        a, b = draw(points), draw(points)
        if a == b:
            return Action(kind, direction=draw(st.sampled_from(list(Direction))))
        return Action(kind, touch=a, lift=b, duration_ms=draw(st.integers(0, 2000)))
    if kind is ActionType.TYPE:
        return Action(kind, text=draw(st.text(min_size=1, max_size=40)))
    if kind is ActionType.OPEN_APP:
        return Action(kind, app=draw(st.text(min_size=1, max_size=20).filter(lambda s: s.strip())))
    return Action(kind)


elements = st.builds(
    Element,
    id=st.text(min_size=1, max_size=6),
    kind=st.sampled_from(list(ElementKind)),
    rect=rects(),
    text=text,
    checked=st.none() | st.booleans(),
    source=st.sampled_from(list(ElementSource)),
    confidence=st.floats(0, 1),
)


@st.composite
def parses(draw):
    els = draw(st.lists(elements, max_size=5, unique_by=lambda e: e.id))
    return ScreenParse(
        screen_size=Size(1080, 2400),
        elements=tuple(els),
        blocks=tuple(draw(st.lists(st.builds(Block, id=text, role=text, rect=rects(), caption=text,
                                             element_ids=st.tuples(*(st.just(e.id) for e in els[:2]))), max_size=2))),
        text_spans=tuple(draw(st.lists(st.builds(TextSpan, text=text, rect=rects(), confidence=st.floats(0, 1)), max_size=3))),
        timings=tuple(draw(st.lists(st.builds(StageTiming, stage=text, ms=st.floats(0, 1e4)), max_size=3))),
        description=draw(text),
        disagreements=tuple(draw(st.lists(st.builds(Disagreement, kind=text, rect=rects(), detail=text), max_size=2))),
    )


latents = st.builds(LatentState, performed_action=text, screen_summary=text, progression=text, mistakes=text,
                    completion=st.none() | st.booleans(), confidence=st.none() | st.floats(0, 1))
calls = st.builds(LLMCall, purpose=text, model=text, prompt=text, reply=text, latency_ms=st.floats(0, 1e5),
                  prompt_tokens=st.none() | st.integers(0, 10**6))
proposals = st.builds(Proposal, action=actions(), rationale=text, latent=st.none() | latents,
                      evidence=st.lists(text, max_size=3).map(tuple), confidence=st.none() | st.floats(0, 1),
                      plan=st.lists(text, max_size=3).map(tuple), llm_calls=st.lists(calls, max_size=2).map(tuple))


@st.composite
def decisions(draw):
    kind = draw(st.sampled_from(list(DecisionKind)))
    action = draw(actions()) if kind in (DecisionKind.EDIT, DecisionKind.DEMONSTRATE) else None
    feedback = draw(st.text(min_size=1, max_size=20).filter(str.strip)) if kind is DecisionKind.REJECT else ""
    return Decision(kind, action=action, feedback=feedback)


image_refs = st.builds(ImageRef, path=text, sha256=st.text("0123456789abcdef", min_size=64, max_size=64),
                       width=st.integers(1, 4000), height=st.integers(1, 4000))


@st.composite
def steps(draw, index=None):
    return Step(
        index=draw(st.integers(0, 500)) if index is None else index,
        screenshot=draw(st.none() | image_refs),
        parse=draw(st.none() | parses()),
        proposal=draw(st.none() | proposals),
        decision=draw(st.none() | decisions()),
        executed=draw(st.none() | actions()),
        outcome=draw(st.sampled_from(list(StepOutcome))),
        error=draw(st.none() | text),
        started_at=draw(st.floats(0, 2e9)),
        finished_at=draw(st.none() | st.floats(0, 2e9)),
        timings_ms=tuple(draw(st.lists(st.tuples(st.sampled_from(["frame", "hierarchy", "parse", "llm", "execute"]),
                                                 st.floats(0, 1e6)), max_size=5))),
    )


@st.composite
def episodes(draw):
    n = draw(st.integers(0, 3))
    return Episode(
        goal=draw(text),
        planner=draw(text),
        status=draw(st.sampled_from(list(EpisodeStatus))),
        autonomy=draw(st.sampled_from(list(Autonomy))),
        steps=tuple(draw(steps(index=i)) for i in range(n)),
        started_at=draw(st.floats(0, 2e9)),
    )


macro_steps = st.builds(MacroStep, action=actions(), description=text, target=st.none() | targets)
macros = st.builds(Macro, name=st.text(min_size=1, max_size=20).filter(str.strip),
                   steps=st.lists(macro_steps, max_size=4).map(tuple), version=st.integers(1, 50),
                   parameters=st.lists(text, max_size=3).map(tuple))
