"""Which element of the current screen a goal's words point at, and whether a switch
there already shows the state the goal asks for.

A small model often reaches the right screen and then taps something else, or flips
the right switch and flips it back on the next step because nothing told it the task
was finished.  ``focus(goal, parse)`` reads the screen the way a person skimming it
would:

* every element a reply may name is scored against the goal's words (the scorer of
  ``agent.knowledge.retrieval``), with the words of its row — the other elements whose
  vertical middle lies within it, as a switch's label does — counted beside its own, so
  that "Remove" in the row of "Phone case" outranks a lone "Remove" elsewhere;
* elements that cannot move the task on are left out: the tab or page already selected,
  window furniture ("Navigate up", "More options") and the name of the app in front
  when the goal merely says which app to use;
* the best element must clear a floor and beat the runner-up by a margin, or nothing is
  said (a tie is no evidence);
* when the goal asks to turn something on or off and the winner is a label or a row with
  a switch or checkbox, the focus is that control, and ``state_met`` says whether it
  already shows the asked state (None when the goal asks for no state or the control
  does not say).

Pure function over a parse; no model, no device, no I/O.  It only suggests: the planner
that receives the focus decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.knowledge import fill
from agent.knowledge.app_map import QUOTED, normalise
from agent.knowledge.lexicon import ConventionWords
from agent.knowledge.retrieval import LexicalScorer, Scorer, stems, tokens
from agent.structured import choosable, element_name, takes_a_tap
from vision.naming import is_description
from vision.types import Element, ElementKind, ScreenParse

#: The best element's score must reach this to be named at all.
MIN_SCORE = 0.45
#: ... and lead the runner-up by this much (two equally good matches say nothing).
MARGIN = 0.08
#: Words that move nothing forward: never the focus.
#: The words of every language these conventions read (``agent/knowledge/words/*.toml``).
_W = ConventionWords.load()
_FURNITURE = _W.merged("furniture")
#: "turn … on", "enable", "… on": each language's own verbs and particles (never mixed).
_ON = _W.patterns(r"\b(?:{state_verbs})\s+(?:{on_particle})\b|\b(?:{on_verbs})\b|\b(?:{on_particle})\b$")
_OFF = _W.patterns(r"\b(?:{state_verbs})\s+(?:{off_particle})\b|\b(?:{off_verbs})\b|\b(?:{off_particle})\b$")
_ON_AFTER = _W.patterns(r"\b(?:{state_verbs})\b.*\b(?:{on_particle})\b")
_OFF_AFTER = _W.patterns(r"\b(?:{state_verbs})\b.*\b(?:{off_particle})\b")
_TOGGLES = (ElementKind.SWITCH, ElementKind.CHECK_BOX)
#: Words that only say "get there": they name no element ("Display" is not "show").
_GO_WORDS = _W.merged("go")


@dataclass(frozen=True, slots=True)
class Focus:
    """The element the goal's words point at on this screen."""

    element: Element  # what to act on (the row's switch for an on/off goal)
    name: str  # its words, as a reply form names it
    score: float
    asked_on: bool | None = None  # the state the goal asks for (None: no state asked)
    state_met: bool | None = None  # the control already shows it (None: unknown or not asked)
    unique: bool = False  # the only element here that shows one of the goal's own words (not a verb)


def asked_state(goal: str) -> bool | None:
    """True for "turn on / enable …", False for "turn off / disable …", None otherwise."""
    text = " ".join(goal.split())
    on = any(p.search(text) for p in (*_ON, *_ON_AFTER))
    off = any(p.search(text) for p in (*_OFF, *_OFF_AFTER))
    if on == off:
        return None
    return on


def row_of(el: Element, pool: list[Element]) -> list[Element]:
    """The other elements side by side with ``el``: their vertical middles lie within each other."""
    out = []
    for o in pool:
        if o is el:
            continue
        oy, ey = (o.rect.top + o.rect.bottom) / 2, (el.rect.top + el.rect.bottom) / 2
        if el.rect.top <= oy <= el.rect.bottom or o.rect.top <= ey <= o.rect.bottom:
            out.append(o)
    return out


def _words(el: Element) -> str:
    """The element's own words ("" for none: a described icon's neighbour is not its name)."""
    return normalise(element_name(el)) if el.text or (el.label and not is_description(el.label)) else ""


def _query(goal: str, app_label: str) -> str:
    """The goal's words that can name an element: less the name of the app in front ("… in the
    Clock app") and the words that only say "go there" ("open", "show")."""
    if app_label:
        goal = re.sub(rf"\b{re.escape(app_label)}\b", " ", goal, flags=re.I)
    return " ".join(w for w in goal.split() if w.casefold().strip(".,!?'\"") not in _GO_WORDS)


def focus(goal: str, parse: ScreenParse, *, app_label: str = "", scorer: Scorer | None = None,
          min_score: float = MIN_SCORE, margin: float = MARGIN) -> Focus | None:
    """The element of ``parse`` that ``goal`` points at, or None when no element stands out."""
    scorer = scorer or LexicalScorer()
    everything = [e for e in parse.elements if not e.covered]
    pool = [e for e in choosable(parse)
            if takes_a_tap(e) and not e.selected and _words(e) and _words(e).casefold() not in _FURNITURE
            and not (app_label and _words(e).casefold() == app_label.casefold())]
    if not pool:
        return None
    query = _query(normalise(goal), app_label)
    if not query.strip():
        return None
    own = scorer.scores(query, [_words(e) for e in pool])
    rows = scorer.scores(query, [" ".join(_words(o) for o in row_of(e, everything)) or "-" for e in pool])
    scored = sorted(((0.7 * o + 0.3 * max(o, r), e) for o, r, e in zip(own, rows, pool, strict=True)),
                    key=lambda t: -t[0])
    best, el = scored[0]
    runner_up = next((s for s, e in scored[1:] if _words(e).casefold() != _words(el).casefold()), 0.0)
    if best < min_score or best - runner_up < margin:
        return None
    unique = _sole_mention(query, el, pool)
    el = _verb_inrow_of(goal, el, pool, scorer)
    asked = asked_state(goal)
    if asked is not None and el.kind not in _TOGGLES:
        toggles = [o for o in row_of(el, choosable(parse)) if o.kind in _TOGGLES or o.checkable]
        if len(toggles) == 1:
            el = toggles[0]
    met = None
    if asked is not None and el.checked is not None and (el.kind in _TOGGLES or el.checkable):
        met = el.checked == asked
    return Focus(el, element_name(el), round(best, 4), asked, met, unique)


def _sole_mention(query: str, el: Element, pool: list[Element]) -> bool:
    """True when ``el`` is the only element of ``pool`` showing one of the query's own words
    (four letters or more, not a verb or a state: "plumber", "Rosa", "Hotspot")."""
    own = {w for w in tokens(query) if len(w) >= 4 and w not in _STATE_WORDS | _ACT_WORDS}
    mine = own & set(tokens(_words(el)))
    if not mine:
        return False
    others = [set(tokens(_words(o))) for o in pool if o is not el and _words(o).casefold() != _words(el).casefold()]
    return any(all(w not in o for o in others) for w in mine)


def _verb_inrow_of(goal: str, el: Element, pool: list[Element], scorer: Scorer) -> Element:
    """The control in ``el``'s row named by the goal's first word ("Remove the phone case":
    the row's "Remove" button rather than the row itself), else ``el``."""
    verb = goal.split()[0] if goal.split() else ""
    if not verb or verb.casefold() in _GO_WORDS:
        return el
    row = [o for o in row_of(el, pool) if o in pool]
    if not row:
        return el
    scores = scorer.scores(verb, [_words(o) for o in row])
    best = max(range(len(row)), key=lambda i: scores[i])
    return row[best] if scores[best] >= 0.8 else el


def only_opens(goal: str, app_label: str) -> bool:
    """True when the goal asks for nothing but to have ``app_label`` open ("Open Settings",
    "Open Messages from the home screen")."""
    if not app_label or not re.search(rf"\b{re.escape(app_label)}\b", goal, flags=re.I):
        return False
    return not _query(normalise(goal), app_label).strip()


#: Words that only ask for a state: they need not appear on the screen for it to be met.
_STATE_WORDS = _W.merged("state")


def finished(goal: str, parse: ScreenParse, *, app_label: str = "", scorer: Scorer | None = None) -> str:
    """Why the screen shows the goal already met, or "" when it does not say so for sure.

    Two cases only, both checkable on the screen: the goal asks only to have an app open
    and that app is in front; or the goal asks for a switch's state, the switch the goal
    points at shows it, and every other word of the goal is on the screen around it (its
    row, the page's title, the selected tab, the app's name) — so "turn on dark theme and
    raise the font size" is never finished by the dark-theme switch alone."""
    if only_opens(goal, app_label):
        return f"{app_label} is open, as the task asks."
    f = focus(goal, parse, app_label=app_label, scorer=scorer)
    if f is not None and f.asked_on is None:
        return shows_value(goal, f, parse)
    if f is None or not f.state_met:
        return ""
    around = [o for o in parse.elements if not o.covered and (o is f.element or o in row_of(f.element, list(parse.elements))
                                                              or o.selected)]
    seen = set(tokens(" ".join([app_label, *(_words(o) for o in around), _title(parse)])))
    wanted = {w for w in tokens(_query(normalise(goal), app_label)) if w not in _STATE_WORDS}
    if not wanted <= seen:
        return ""
    return f"'{f.name}' shows {'on' if f.asked_on else 'off'}, as the task asks."


_TO_VALUE = _W.patterns(r"^(?:{value_verbs})\b(.+?)\b(?:{value_to})\s+(.+?)[.!]?$")
#: Buttons that still have to be pressed for a choice to count.
_CONFIRM_BUTTONS = _W.merged("confirm_buttons")


def confirm_button(parse: ScreenParse) -> Element | None:
    """A button that confirms a form or dialog (OK, Save, Apply, Done …), if one is shown."""
    for e in parse.elements:
        if not e.covered and takes_a_tap(e) and _words(e).strip().casefold() in _CONFIRM_BUTTONS:
            return e
    return None


def ready_to_confirm(goal: str, parse: ScreenParse, *, last: str, taken: list[str]) -> Element | None:
    """The OK / Save button to press now, or None.  A form or dialog with such a button is
    on the screen and the step just taken shows on it (``last``: the name of the element it
    tapped, or the text it typed — "Light" after choosing it, also as "Theme, Light");
    every option here that the goal names ("Descending", "Grid") is chosen — tapped in a
    step taken (``taken``: names and texts) or shown checked; a value the goal moves away
    from ("from grid to list") and the words saying where a text goes ("mobile number to
    …") name no option to pick; and every text the goal gives was typed or shows in a field
    here.  Pressing it is how a choice made in a dialog counts."""
    button = confirm_button(parse)
    if button is None or not last.strip():
        return None
    shown = [e for e in parse.elements if not e.covered and e is not button and _words(e)]
    if not any(_shows(_words(e), last) for e in shown
               if (takes_a_tap(e) or e.kind is ElementKind.EDIT_TEXT) and not e.rect.contains_rect(button.rect)):
        return None  # the last step was not made on this form: the choice is still to make
    fields = [e for e in shown if e.kind is ElementKind.EDIT_TEXT]
    if option_to_pick(goal, parse, taken, but=button) is not None:
        return None  # an option the goal names is still to pick
    entered = set(tokens(" ".join([*taken, *(_words(f) for f in fields)])))  # typed, or shown in a field
    if any(not set(tokens(v.text)) <= entered for v in fill.values(goal)):
        return None
    here = set(tokens(" ".join([*taken, *(_words(e) for e in shown)])))
    if any(w.isdigit() and w not in here for w in tokens(normalise(goal))):
        return None  # a number the goal gives (a time, a count) is not on the form yet
    return button


def option_to_pick(goal: str, parse: ScreenParse, taken: list[str], but: Element | None = None) -> Element | None:
    """An option on the screen that the goal names ("Descending", "Large") and no step taken
    picked (``taken``: names and texts) nor shows checked, or None.  A value the goal moves
    away from ("from grid to list") and the words saying where a text goes ("mobile number to
    …") name no option; fields and ``but`` (the OK button) are no options."""
    cues = set(tokens(" ".join(v.cue for v in fill.values(goal))))
    left = normalise(goal)
    for p in _FROM_VALUE:
        left = p.sub(" ", left)
    wanted = set(tokens(left))
    for e in parse.elements:
        own = set(tokens(_words(e)))
        if e.covered or e is but or not takes_a_tap(e) or e.kind is ElementKind.EDIT_TEXT or not own:
            continue
        if own <= wanted and not own <= cues and not (e.checked or e.selected) \
                and not any(_shows(_words(e), t) for t in taken):
            return e
    return None


#: "from grid to list": the value left behind, not one to choose.
_FROM_VALUE = _W.patterns(r"\b(?:{value_from})\s+[^,;]+?(?=\s+(?:{value_to})\b)")


def _shows(name: str, said: str) -> bool:
    """True when an element named ``name`` shows what a step said (``said``): the same
    element ("Movies, 0 items" and "> Movies"), or a row showing it as a part ("Theme, Light"
    shows "Light")."""
    if same_name(name, said):
        return True
    first = [tokens(x.split(",")[0]) for x in (name, said)]
    if first[0] and first[0] == first[1]:
        return True
    return said.strip().casefold() in {p.strip().casefold() for p in name.split(",")}


def shows_value(goal: str, f: Focus, parse: ScreenParse) -> str:
    """For "set / change X to V": why the element the goal points at already shows V beside
    X's name ("Font size, Medium"), with nothing left to confirm — or "" when it does not."""
    m = _to_value(goal)
    if m is None or confirm_button(parse) is not None:
        return ""
    name, value = set(tokens(m.group(1))) - _STATE_WORDS, set(tokens(m.group(2)))
    shown = set(tokens(_words(f.element)))
    if not value or not value <= shown or not name & (shown - value):
        return ""
    return f"'{f.name}' shows {m.group(2).strip()}, as the task asks."


def missing_words(goal: str, parse: ScreenParse, app_label: str = "") -> set[str]:
    """The goal's words (folded as the scorer folds them) that nothing on the screen shows,
    less the words that only say what to do (a verb, on/off)."""
    shown = set(tokens(" ".join([app_label, *(_words(e) for e in parse.elements if not e.covered),
                                 *(t.text for t in getattr(parse, "text_spans", ()) or ())])))
    wanted = {w for w in tokens(_query(normalise(goal), app_label)) if w not in _STATE_WORDS | _ACT_WORDS}
    return wanted - shown


#: Verbs whose object is a place, an option or a state: tapping the option the goal names can
#: be all they ask ("change the mode to Jazz", "search for the song and play it").  Any
#: other first verb ("delete", "pin", "call", "sort") asks for an operation after the tap.
_CHOOSING_VERBS = frozenset(stems(" ".join(_W.merged("choosing_verbs"))))
#: Words that ask for a confirmation still to be given.
_CONFIRM_WORDS = frozenset(stems(" ".join(_W.merged("confirm_verbs"))))
_NUMBER_WORDS = _W.merged("number_words")


#: Buttons that turn a question down: a screen showing one still asks something.
_NEGATIVE_BUTTONS = _W.merged("negative_buttons")


def asks_question(parse: ScreenParse) -> bool:
    """True when the screen shows a button that turns a question down (Cancel, No, Not now):
    a dialog is open and waits for an answer."""
    return any(not e.covered and takes_a_tap(e) and _words(e).strip().casefold() in _NEGATIVE_BUTTONS
               for e in parse.elements)


def goal_values(goal: str) -> list[str]:
    """The values the goal gives, folded: its quoted texts, the V of "set X to V", and its
    numbers (in digits: "five minutes" gives "5")."""
    text = normalise(goal)
    found = [next(q for q in quoted if q) for quoted in QUOTED.findall(text)]
    m = _to_value(text)
    if m is not None:
        found.append(m.group(2))
    found += [w for w in tokens(text) if w.isdigit()]
    return list(dict.fromkeys(v.strip().casefold() for v in found if v.strip()))


def offers_value(goal: str, tapped: str, parse: ScreenParse, taken: tuple[str, ...] = ()) -> bool:
    """True when an element to tap on the screen, other than the one just tapped, is named by
    a value the goal gives ("50%" among the choices after tapping "Quality, 80%"; the song
    'tune7' in the list after tapping "Tracks"): the value is still to be picked — unless a
    step taken (``taken``: names and texts) already gave it."""
    given = " ".join(taken).casefold()
    values = [v for v in goal_values(goal) if v not in given]
    if not values:
        return False
    for e in parse.elements:
        name = _words(e).strip().casefold()
        if e.covered or not takes_a_tap(e) or not name or same_name(name, tapped):
            continue
        parts = {p.strip() for p in name.split(",")}
        if any(v == name or v in parts or (v.isdigit() and v in tokens(name)) for v in values):
            return True
    return False


def named_here(goal: str, parse: ScreenParse, *, skip: str = "", taken: tuple[str, ...] = ()) -> str:
    """The name of an element to tap on the screen that the goal's own words name whole
    ("Buy now" for "buy the speaker now"), other than ``skip`` and the steps ``taken``, or
    "": what the goal asks is here, and a step elsewhere would leave it behind."""
    goal_stems = set(stems(_query(normalise(goal), "")))
    done = {t.casefold() for t in taken}
    for e in choosable(parse):
        name = _words(e).strip()
        if e.covered or e.selected or not takes_a_tap(e) or not name or name.casefold() in _FURNITURE \
                or name.casefold() in done or same_name(name, skip):
            continue
        own = set(stems(name))
        if own and own <= goal_stems:
            return name
    return ""


def same_name(a: str, b: str) -> bool:
    """Two names of one element: equal, one cut short ("Start recording automatically after
    lau…"), or the same first part ("tune7, 00:10" and "tune7")."""
    a, b = (x.split(" [")[0].strip().casefold() for x in (a, b))
    if a == b:
        return True
    for x, y in ((a, b), (b, a)):
        if x.endswith("…") and len(x) > 8 and y.startswith(x[:-1]):
            return True
    first_a, first_b = a.split(",")[0].strip(), b.split(",")[0].strip()
    return len(first_a) >= 3 and first_a == first_b


#: A focus this strong on the screen after a tap means the goal's target is still there to act on.
_CLEAR = 0.7
#: Nouns that name a part of any app, not what the goal is about.
_UI_WORDS = frozenset(tokens(" ".join(_W.merged("ui_words"))))
_CLAUSES = re.compile(r"\s*(?:[,;]|\b(?:" + "|".join(sorted(map(re.escape, _W.merged("clause_words")))) + r")\b)\s*",
                      re.I)


def last_clause(goal: str) -> str:
    """The last of the goal's parts that names something ("go to recents and play clip9.mp4"
    -> "play clip9.mp4"; "search for the DCIM folder and open it" -> "search for the DCIM
    folder", as "open it" names nothing of its own)."""
    parts = [p for p in _CLAUSES.split(goal) if p and p.strip()]
    named = [p for p in parts if set(tokens(p)) - _CHOOSING_VERBS - _ACT_WORDS - _STATE_WORDS - _UI_WORDS]
    return named[-1] if named else goal


def last_tap_finishes(goal: str, tapped: str, parse: ScreenParse, *, pointed: bool, taken: list[str],
                      app_label: str = "", scorer: Scorer | None = None) -> bool:
    """Whether the tap just made on ``tapped`` (``parse``: the screen after it) looks like the
    goal's last step: the element is named by a word of the goal's last part; it is what the
    goal's words pointed at on the screen where it was tapped (``pointed``), or the names and
    texts of the steps taken so far (``taken``, this tap's included) cover at least half of
    the goal's own words; for an on/off goal, the control tapped shows the state asked; every
    text the goal gives to enter was typed or tapped; and ``tap_can_finish`` finds nothing
    still to do.  ``scorer``: the one the focus is found with (lexical by default)."""
    if not set(tokens(tapped)) & (set(tokens(last_clause(normalise(goal)))) - set(tokens(app_label))):
        return False  # the app's own name ("… in the calendar" after tapping Calendar) answers nothing
    option = option_to_pick(goal, parse, taken)
    pool = [e for e in parse.elements if not e.covered]
    if option is not None and any(o.checkable or o.kind in _TOGGLES for o in (option, *row_of(option, pool))):
        return False  # the tap opened a choice the goal names ("Large" after "Font size")
    now = focus(goal, parse, app_label=app_label, scorer=scorer)
    if now is not None and not same_name(now.name, tapped) and (now.unique or now.score >= _CLEAR):
        return False  # the screen now shows what the goal points at, still to act on
    asked = asked_state(goal)
    if asked is not None:  # an on/off goal: the control tapped must show the state asked, here
        named = [e for e in pool if same_name(_words(e), tapped)]
        controls = {o.id: o for e in named for o in (e, *row_of(e, pool)) if o.kind in _TOGGLES or o.checkable}
        if not controls or any(o.checked is not asked for o in controls.values()):
            return False
    said = " ".join(taken).casefold()
    if any(v.text.casefold() not in said for v in fill.values(goal)):
        return False  # a text the goal gives was neither typed nor tapped yet
    if not pointed:
        covered = set(tokens(" ".join([app_label, *taken])))
        wanted = [w for w in dict.fromkeys(tokens(normalise(goal)))
                  if w not in _CHOOSING_VERBS | _ACT_WORDS | _STATE_WORDS | _UI_WORDS]
        if not wanted or sum(w in covered for w in wanted) < len(wanted) / 2:
            return False
    return tap_can_finish(goal, tapped, parse, app_label, tuple(taken))


def tap_can_finish(goal: str, tapped: str, parse: ScreenParse, app_label: str = "",
                   taken: tuple[str, ...] = ()) -> bool:
    """Whether tapping the element named ``tapped`` can have been all the goal asks, judged
    from the words alone (``parse`` is the screen after the tap).  No when the goal's first
    verb asks for an operation the element does not name ("delete contact Jack" after
    tapping "Jack"), when a number or a quoted text of the goal is neither on the element
    nor on the screen now (a value still to enter), when the goal asks to save or confirm
    and the element is not that button, when the screen now shows an OK / Save button
    (the choice waits for it) or a Cancel / No button (a question waits), or when it offers a
    value the goal gives as a choice to tap.  ``taken``: the names and texts of the steps
    taken so far; a value among them was already given (typed, or tapped on the way)."""
    words = normalise(goal).split()
    own = set(stems(tapped)) | set(tokens(tapped))  # "Clear call history" does "delete all call history"
    verb = (stems(words[0]) + tokens(words[0]))[:2] if words else []
    if verb and verb[0] not in _CHOOSING_VERBS and not own & set(verb):
        return False
    if any(w in _CONFIRM_WORDS and w not in own for w in stems(goal)):
        return False
    button = confirm_button(parse)
    if button is not None and _words(button).casefold() != tapped.strip().casefold():
        return False  # the choice waits for its OK / Save
    if asks_question(parse) or offers_value(goal, tapped, parse, taken):
        return False  # a dialog waits for an answer, or a list offers the value still to pick
    shown = " ".join([tapped, *taken, *(_words(e) for e in parse.elements if not e.covered),
                      *(t.text for t in getattr(parse, "text_spans", ()) or ())]).casefold()
    for quoted in QUOTED.findall(normalise(goal)):
        text = next(q for q in quoted if q).strip().casefold()
        if text and text not in shown:
            return False
    m = _to_value(goal)
    if m is not None and not set(tokens(m.group(2))) <= set(tokens(shown)):
        return False  # "change the ringtone to Zen Garden": Zen Garden is nowhere yet
    digits = {t for t in tokens(shown) if t.isdigit()}  # "five" is shown as "5"
    left = [w for w in _query(normalise(goal), app_label).casefold().split()
            if w.strip(".,!?:;'\"") not in shown and not set(tokens(w)) & digits]
    return not any(any(c.isdigit() for c in w) or w.strip(".,!?:;'\"") in _NUMBER_WORDS for w in left)


#: Verbs that say what to do with a thing, not which thing (folded as the scorer folds them).
_ACT_WORDS = _W.merged("act_words")


def _to_value(text: str) -> re.Match[str] | None:
    """"set X to V" read in the language it is written in (the first language whose pattern fits)."""
    flat = " ".join(normalise(text).split())
    return next((m for m in (p.match(flat) for p in _TO_VALUE) if m is not None), None)


def _title(parse: ScreenParse) -> str:
    """The top-most text of the page that takes no tap: its title, as a reader sees it."""
    texts = [e for e in parse.elements if e.kind is ElementKind.TEXT and not takes_a_tap(e) and not e.covered]
    return _words(min(texts, key=lambda e: e.rect.top)) if texts else ""


def focus_note(f: Focus) -> str:
    """The focus in one line for a planner's notes."""
    if f.state_met:
        state = "on" if f.asked_on else "off"
        return (f"'{f.name}' on this screen already shows {state}, as the task asks: the task looks "
                "finished, so reply that it is complete unless something else is still missing.")
    if f.asked_on is not None and f.state_met is False:
        return f"On this screen, '{f.name} [{f.element.id}]' is the control the task's words point at."
    return f"On this screen, '{f.name} [{f.element.id}]' is the element the task's words point at most."
