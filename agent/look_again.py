"""A second, closer look at the screen when no element's words match the goal.

A goal such as "tap Upgrade Now" names words; when none of the elements a reply may name
shares a word with the goal, the first parse may simply have missed them (small grey
text, text on a coloured plate).  ``SecondLook`` then reads again, closer
(``vision.look_again``), where the goal points — "at the top", "bottom right", else the
whole screen — adds the lines found to the parse, and says what it did in words the
step's evidence keeps ("looked again at the top of the screen, closer: found 'Upgrade
Now'").  It does nothing when the goal's words are already on the screen, nor on a parse
that holds the accessibility tree's words (tree and fused parses: the tree has every line
the screen shows, so reading its pixels again finds nothing it lacks).  ``needed`` says
which, cheaply, so a caller can tell the user before the slower reading starts.

Which words count: the goal's content words (``agent.knowledge.retrieval.tokens``: stop
words out, synonyms folded) less the words that only say "do it" (open, tap, go …); those,
and the words that say where, are per-language data (``[look_again]`` in
``agent/knowledge/words/*.toml``, read by ``agent.knowledge.lexicon.LookWords``).
No model, no device; the OCR backend is injected.
"""

from __future__ import annotations

from agent.knowledge.lexicon import LookWords, fold
from agent.knowledge.retrieval import tokens
from agent.structured import choosable, element_name
from vision.geometry import Rect, Size
from vision.look_again import new_lines, read_closer, with_found
from vision.naming import is_description
from vision.ocr import OcrBackend
from vision.types import ElementSource, Screen, ScreenParse


def goal_words(goal: str) -> set[str]:
    """The goal's content words: less the words (``[look_again] act``, every language) that
    only say "do it" or where, whole or as ``tokens`` reads them."""
    look = LookWords.load()
    rest = look.act_words.sub(" ", fold(goal))
    return {w for w in tokens(rest) if len(w) >= 3 and w not in look.act}


def named_on_screen(goal: str, parse: ScreenParse) -> bool:
    """True when some element a reply may name shows one of the goal's content words
    (or the goal has none to look for)."""
    wanted = goal_words(goal)
    if not wanted:
        return True
    for e in choosable(parse):
        if is_description(e.label) and not e.text:
            continue  # "icon right of 'Wi-Fi'" does not show the words it quotes
        name = element_name(e)
        squeezed = "".join(name.casefold().split())  # OCR can run words together ("Clearcache")
        if wanted & set(tokens(name)) or any(len(w) >= 4 and w in squeezed for w in wanted):
            return True
    return False


def region_for(goal: str, size: Size) -> tuple[Rect, str]:
    """The part of the screen the goal's words point at, and its name in words."""
    w, h = size.width, size.height
    said = {name for name, pattern in LookWords.load().places if pattern.search(fold(goal))}
    where = next((name for name in ("top", "bottom") if name in said), "")
    top, bottom = {"top": (0, h // 3), "bottom": (2 * h // 3, h)}.get(where, (0, h))
    side = next((name for name in ("left", "right") if name in said), "")
    left, right = {"left": (0, w // 2), "right": (w // 2, w)}.get(side, (0, w))
    words = " ".join(x for x in (where, side) if x)
    return Rect(left, top, right, bottom), (f"the {words} of the screen" if words else "the whole screen")


class SecondLook:
    """Reads the screen again, closer, for a goal whose words no element shows."""

    def __init__(self, ocr: OcrBackend) -> None:
        self.ocr = ocr

    def needed(self, goal: str, parse: ScreenParse) -> bool:
        """True when ``parse`` is read from pixels alone and no element it offers shows the goal's words."""
        if any(e.source in (ElementSource.HIERARCHY, ElementSource.FUSED) for e in parse.elements):
            return False
        return not named_on_screen(goal, parse)

    def __call__(self, goal: str, screen: Screen, parse: ScreenParse) -> tuple[ScreenParse, tuple[str, ...]]:
        if not self.needed(goal, parse):
            return parse, ()
        region, where = region_for(goal, screen.size)
        found = new_lines(parse, read_closer(screen.image, region, self.ocr))
        if not found:
            return parse, (f"no element shows the goal's words; looked again at {where}, closer: nothing new",)
        wanted = goal_words(goal)
        matching = [t.text for t in found if wanted & set(tokens(t.text))]
        shown = ", ".join(repr(t) for t in (matching or [t.text for t in found])[:4])
        note = (f"no element showed the goal's words; looked again at {where}, closer: found {shown}"
                + (f" (and {len(found) - len(matching)} other lines)" if matching and len(found) > len(matching) else ""))
        return with_found(parse, found), (note,)
