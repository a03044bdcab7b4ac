"""Whether a proposed action is sensitive, from several independent signals, and why.

Signals: the words on the target in any shipped language (its text, accessibility label,
resource id, and the agent's own description of it), the label of an icon-only target,
the screen around it (a dialog warning of deletion or payment, a password or PIN field
being typed into, a message field that Enter would send, a store or payment app in
front), and the model's own risk signal when its adapter gives one.  Any one signal is
enough to ask; the approval card shows the sentence ``SafetyAssessment.reason``.

This module reads the screen only to judge the action in front of it: it never follows
instructions written on the screen, never talks to a device or a model, and keeps no
state.  Swipes are judged like taps when they act on something (a horizontal swipe, or
one aimed at an element: swipe-to-delete, slide-to-pay), by what lies under their
start; plain scrolls are not.  Opening a payment, banking or wallet app is judged as
paying.  Back, Home, Wait and the terminal actions are never sensitive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from agent.safety.lexicon import ACT_KEYS, Category, Hit, Lexicon, shipped_lexicon
from agent.secrets.refs import names_in
from agent.types import Action, ActionType, RiskSignal
from vision.geometry import Rect
from vision.icon_vocab import ICON_LABELS
from vision.types import Element, ElementKind, ElementSource, ScreenParse

_NEVER = frozenset({ActionType.BACK, ActionType.HOME, ActionType.WAIT, ActionType.COMPLETE, ActionType.IMPOSSIBLE})
_ICON_LABELS = frozenset(ICON_LABELS)
#: Screen text longer than this is content (a note, a message), not the name of a control.
_LABEL_MAX_CHARS = 40
_LABEL_MAX_WORDS = 6
_QUOTE_MAX = 48
#: Controls that pick or fill in something; they never agree to a dialog's warning.
_CHOICE_KINDS = frozenset({ElementKind.EDIT_TEXT, ElementKind.CHECK_BOX, ElementKind.SWITCH, ElementKind.RADIO_GROUP,
                           ElementKind.SPINNER, ElementKind.SEEK_BAR, ElementKind.RATING_BAR})


class SignalKind(str, Enum):
    """Where a reason to ask came from."""

    WORDS = "words"  # the target's words in some language
    ICON = "icon"  # the label of an icon-only target
    DIALOG = "dialog"  # a dialog around the target warns what it does
    SECRET_FIELD = "secret field"  # typing into a password or PIN field
    MESSAGE_FIELD = "message field"  # Enter in a field where a message is written
    STORE_APP = "store app"  # an agreeing button in a store or payment app
    MONEY_APP = "money app"  # opening a payment, banking or wallet app
    MODEL = "model"  # the model's own risk signal


@dataclass(frozen=True, slots=True)
class Signal:
    """One reason to ask: its kind, the category of harm and a clause for the card."""

    kind: SignalKind
    category: Category
    evidence: str  # e.g. "the target reads 'Löschen' (German)"
    language: str = ""


@dataclass(frozen=True, slots=True)
class SafetyAssessment:
    """Every signal that fired for one action; ``sensitive`` when there is at least one."""

    signals: tuple[Signal, ...] = ()

    @property
    def sensitive(self) -> bool:
        return bool(self.signals)

    @property
    def category(self) -> Category | None:
        return self.signals[0].category if self.signals else None

    @property
    def categories(self) -> tuple[Category, ...]:
        return tuple(dict.fromkeys(s.category for s in self.signals))

    @property
    def reason(self) -> str:
        """A sentence the approval card can show as-is, or "" when nothing fired.

        ``"deleting — the target reads 'Löschen' (German)"``; a second, different piece of
        evidence is added after a semicolon.
        """
        if not self.signals:
            return ""
        first = self.signals[0]
        extra = next((s for s in self.signals[1:] if s.kind is not first.kind), None)
        text = f"{first.category.value} — {first.evidence}"
        if extra is not None:
            text += f"; {extra.evidence}" if extra.category is first.category else \
                f"; also {extra.category.value} — {extra.evidence}"
        return text


def _quote(text: str) -> str:
    t = " ".join(text.split())
    return t if len(t) <= _QUOTE_MAX else t[: _QUOTE_MAX - 1] + "…"


def _label_like(text: str) -> bool:
    t = text.strip()
    return bool(t) and len(t) <= _LABEL_MAX_CHARS and len(t.split()) <= _LABEL_MAX_WORDS


def _rid_words(resource_id: str) -> str:
    name = resource_id.rsplit("/", 1)[-1]
    name = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    return name.replace("_", " ").replace("-", " ").strip()


def _is_icon_label(e: Element) -> bool:
    """The label names a picture (from the icon classifier), not words an app wrote."""
    return not e.text and e.source is not ElementSource.HIERARCHY and e.label in _ICON_LABELS


def _target_elements(action: Action, parse: ScreenParse | None) -> list[Element]:
    """The element(s) the action lands on: the grounded one, else what lies under the point
    (the smallest reachable element and the smallest clickable one)."""
    if parse is None:
        return []
    t = action.target
    grounded = parse.element(t.element_id) if t is not None and t.element_id else None
    point = grounded.rect.center if grounded is not None else action.touch
    if point is None:
        return []
    hits = [e for e in parse.elements_at(point.x, point.y) if not getattr(e, "covered", False)]
    out: list[Element] = []
    if grounded is not None:
        out.append(grounded)
    elif hits:
        out.append(hits[0])
    clickable = next((e for e in hits if e.clickable), None)
    if clickable is not None and clickable not in out:
        out.append(clickable)
    return out


def _focused_field(action: Action, parse: ScreenParse | None) -> Element | None:
    if parse is None:
        return None
    for e in _target_elements(action, parse):
        if e.kind is ElementKind.EDIT_TEXT or e.password:
            return e
    reachable = [e for e in parse.elements if not getattr(e, "covered", False)]
    fields = [e for e in reachable if e.focused]
    fields.sort(key=lambda e: e.kind is not ElementKind.EDIT_TEXT)
    if fields:
        return fields[0]
    edits = [e for e in reachable if e.kind is ElementKind.EDIT_TEXT]
    return edits[0] if len(edits) == 1 else None  # pixels show no focus: the only field gets the text


def _word_signals(action: Action, targets: list[Element], lex: Lexicon) -> list[Signal]:
    found: dict[Category, Signal] = {}

    def look(text: str, phrase: str) -> None:
        for cat, hit in lex.act(text):
            if cat not in found:
                found[cat] = Signal(SignalKind.WORDS, cat, f"{phrase} '{_quote(text)}' ({hit.language})", hit.language)

    for e in targets:
        if e.kind is ElementKind.EDIT_TEXT:
            continue  # tapping a text field only focuses it; what is typed is judged by _field_signals
        if e.text and _label_like(e.text) and not e.password:
            look(e.text, "the target reads")
        icon_only = not e.text and lex.signs.icon_category(e.label) is not None  # said by _icon_signals
        if e.label and not icon_only and not _is_icon_label(e) and _label_like(e.label):
            look(e.label, "the target is labelled")
        if e.resource_id:
            rid = _rid_words(e.resource_id)
            for cat, hit in lex.act(rid):
                if cat not in found and hit.language == "English":
                    found[cat] = Signal(SignalKind.WORDS, cat, f"the target's id is '{_quote(rid)}'", hit.language)
    t = action.target
    # the agent's own words about the target; when the element itself is known, a long
    # description is the element's content (a note's text), not the name of a control
    fields_only = bool(targets) and all(e.kind is ElementKind.EDIT_TEXT for e in targets)
    if t is not None and t.description and not fields_only and (not targets or _label_like(t.description)):
        look(t.description, "the agent's target is")
    return list(found.values())


def _icon_signals(targets: list[Element], lex: Lexicon) -> list[Signal]:
    out = []
    for e in targets:
        if e.text or not e.label:
            continue
        if not (e.clickable or e.kind is ElementKind.BUTTON or e.source is not ElementSource.HIERARCHY):
            continue  # (pixels alone cannot tell whether an icon is clickable)
        cat = lex.signs.icon_category(e.label)
        if cat is not None:
            out.append(Signal(SignalKind.ICON, cat, f"the target is an icon showing '{_quote(e.label)}'"))
    return out


def _inside(r: Rect, outer: Rect) -> bool:
    c = r.center
    return outer.left <= c.x < outer.right and outer.top <= c.y < outer.bottom


def _dialog_signals(targets: list[Element], parse: ScreenParse | None, lex: Lexicon) -> list[Signal]:
    """A tap inside a dialog whose own words warn what agreeing does (unless it backs out)."""
    if parse is None or not targets:
        return []
    panel = getattr(parse, "occluder", None)
    if panel is None:
        return []
    target = targets[-1]
    if not _inside(target.rect, panel) or target.kind in _CHOICE_KINDS or not (target.clickable or target.text):
        return []
    names = [n for n in (target.text, target.label) if n]
    if any(lex.is_dismiss(n) for n in names):
        return []
    ids = {e.id for e in targets}
    words = [e.text or e.label for e in parse.elements
             if e.id not in ids and not e.clickable and not getattr(e, "covered", False)
             and (e.text or e.label) and _inside(e.rect, panel)]
    out: list[Signal] = []
    for w in words:
        for cat, hit in lex.warning(w):
            if all(s.category is not cat for s in out):
                out.append(Signal(SignalKind.DIALOG, cat, f"the dialog around it says '{_quote(w)}' ({hit.language})",
                                  hit.language))
    return out


def _field_signals(action: Action, parse: ScreenParse | None, foreground: str | None, lex: Lexicon) -> list[Signal]:
    field = _focused_field(action, parse)
    if action.type is ActionType.TYPE:
        if names_in(action.text) and (field is None or not field.password):
            return [Signal(SignalKind.SECRET_FIELD, Category.SECRET,
                           "it types a secret from the vault into a field that does not hide its text")]
        if field is None:
            return []
        if field.password:
            return [Signal(SignalKind.SECRET_FIELD, Category.SECRET, "the field it types into hides its text")]
        for text in (field.label, _rid_words(field.resource_id), field.text if _label_like(field.text) else ""):
            hit = lex.secret(text) if text else None
            if hit is not None:
                return [Signal(SignalKind.SECRET_FIELD, Category.SECRET,
                               f"the field it types into asks for '{_quote(text)}' ({hit.language})", hit.language)]
        return []
    if action.type is ActionType.ENTER:
        if field is not None:
            for text in (field.label, _rid_words(field.resource_id), field.text if _label_like(field.text) else ""):
                hit = lex.compose(text) if text else None
                if hit is not None:
                    return [Signal(SignalKind.MESSAGE_FIELD, Category.SENDING,
                                   f"Enter in the message field '{_quote(text)}' sends it ({hit.language})",
                                   hit.language)]
            return []
        if lex.signs.is_messaging(foreground):
            return [Signal(SignalKind.MESSAGE_FIELD, Category.SENDING,
                           f"Enter in a messaging app ({foreground}) may send what was typed")]
    return []


def _store_signals(action: Action, targets: list[Element], foreground: str | None, lex: Lexicon) -> list[Signal]:
    if not lex.signs.is_store(foreground):
        return []
    names = [n for e in targets for n in (e.text, e.label) if n]
    if action.target is not None and action.target.description:
        names.append(action.target.description)
    for n in names:
        hit = lex.is_confirm(n)
        if hit is not None:
            return [Signal(SignalKind.STORE_APP, Category.PAYING,
                           f"'{_quote(n)}' agrees to something in a store or payment app ({foreground})",
                           hit.language)]
    return []


def _acts_on_something(action: Action) -> bool:
    """A swipe that does something to what it starts on (not a plain scroll): aimed at an
    element, or mostly sideways (swipe-to-delete rows, slide-to-pay bars)."""
    t = action.target
    if t is not None and (t.element_id or t.description):
        return True
    if action.touch is not None and action.lift is not None:
        return abs(action.lift.x - action.touch.x) > abs(action.lift.y - action.touch.y)
    d = action.finger_direction()
    return d is not None and d.value in ("left", "right") and action.touch is not None


def _open_app_signals(action: Action, lex: Lexicon) -> list[Signal]:
    app = action.app or ""
    if not lex.signs.is_money_app(app):
        return []
    return [Signal(SignalKind.MONEY_APP, Category.PAYING, f"it opens '{_quote(app)}', a payment or banking app")]


def _model_signal(risk: RiskSignal | None) -> list[Signal]:
    if risk is None or not risk.risky:
        return []
    try:
        cat = ACT_KEYS.get(risk.category.strip().lower()) or Category.from_key(risk.category)
    except KeyError:
        cat = Category.RISKY
    why = risk.reason.strip() or "no reason given"
    score = f", score {risk.score:.2f}" if risk.score is not None else ""
    return [Signal(SignalKind.MODEL, cat, f"the model itself flagged this step ({_quote(why)}{score})")]


def assess(action: Action, parse: ScreenParse | None = None, foreground: str | None = None, *,
           risk: RiskSignal | None = None, lexicon: Lexicon | None = None) -> SafetyAssessment:
    """Every signal saying ``action`` is sensitive on this screen, strongest first.

    ``parse`` is the screen the action will land on, ``foreground`` its app package,
    ``risk`` the model's own signal; ``lexicon`` defaults to the shipped word files.
    """
    if action.type in _NEVER:
        return SafetyAssessment()
    lex = lexicon or shipped_lexicon()
    signals: list[Signal] = []
    if action.type in (ActionType.TAP, ActionType.LONG_PRESS):
        targets = _target_elements(action, parse)
        panel = getattr(parse, "occluder", None)
        targets = [e for e in targets if e.rect != panel]  # the dialog's own body is no button
        signals += _word_signals(action, targets, lex)
        signals += _icon_signals(targets, lex)
        signals += _dialog_signals(targets, parse, lex)
        signals += _store_signals(action, targets, foreground, lex)
    elif action.type is ActionType.SWIPE and _acts_on_something(action):
        targets = _target_elements(action, parse)
        panel = getattr(parse, "occluder", None)
        targets = [e for e in targets if e.rect != panel]
        signals += _word_signals(action, targets, lex)
        signals += _icon_signals(targets, lex)
        signals += _store_signals(action, targets, foreground, lex)
    elif action.type is ActionType.OPEN_APP:
        signals += _open_app_signals(action, lex)
    elif action.type is ActionType.TYPE:
        signals += _field_signals(action, parse, foreground, lex)
    elif action.type is ActionType.ENTER:
        signals += _field_signals(action, parse, foreground, lex)
    signals += _model_signal(risk)
    return SafetyAssessment(tuple(signals))


def sensitivity(action: Action, parse: ScreenParse | None = None, foreground: str | None = None, *,
                risk: RiskSignal | None = None) -> str | None:
    """Why ``action`` needs the user's approval, as a sentence for the approval card, or None.

    The sentence starts with the category (``"deleting — the target reads 'Löschen'
    (German)"``); ``assess`` gives every signal behind it.
    """
    a = assess(action, parse, foreground, risk=risk)
    return a.reason or None


__all__ = ["Hit", "SafetyAssessment", "Signal", "SignalKind", "assess", "sensitivity"]
