"""Safety of proposed actions: which ones must wait for the user's approval, and why.

``sensitivity(action, parse, foreground)`` gives the sentence the approval card shows
(or None); ``assess`` gives every signal behind it.  The words live in ``words/*.toml``,
one file per language.  Nothing here talks to a device or a model or follows text on
the screen.
"""

from __future__ import annotations

from agent.safety.assess import SafetyAssessment, Signal, SignalKind, assess, sensitivity
from agent.safety.lexicon import Category, Lexicon, LexiconError, load_lexicon, normalise, shipped_lexicon

__all__ = ["Category", "Lexicon", "LexiconError", "SafetyAssessment", "Signal", "SignalKind", "assess",
           "load_lexicon", "normalise", "sensitivity", "shipped_lexicon"]
