"""OCR results remembered by the pixels they came from.

``PixelCache`` sits in front of an OCR engine: each image (a whole frame, or a region that changed
since the frame before) is keyed by its size and a hash of its bytes, and an image seen
before is answered from memory instead of the engine.  Consecutive frames of a phone repeat
themselves a lot (a ripple that fades, a dialog opened and closed, a list scrolled back, the
overlay parsing an unchanged screen again), and OCR is the slowest stage.  The cache is
bounded (least recently used out first), belongs to one engine object (one parser), and a lock
makes it safe to share between threads.  Nothing here reads text itself.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from vision.types import TextSpan

Key = tuple[int, int, bytes]
CacheKey = tuple[int, int, bytes, str]


def pixel_key(image: np.ndarray) -> Key:
    """Height, width and a 128-bit hash of the pixels."""
    digest = hashlib.blake2b(np.ascontiguousarray(image).tobytes(), digest_size=16).digest()
    return image.shape[0], image.shape[1], digest


class PixelCache:
    """Spans by pixels: ``read(image, engine)`` calls ``engine`` only for an image not seen
    among the last ``max_entries``."""

    def __init__(self, max_entries: int = 256) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._cache: OrderedDict[CacheKey, tuple[TextSpan, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, image: np.ndarray, engine: Callable[[np.ndarray], list[TextSpan]], *, variant: str = "") -> list[TextSpan]:
        """``engine(image)``, or what it said before for these pixels (and this ``variant`` of reading)."""
        key = (*pixel_key(image), variant)
        with self._lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
                self.hits += 1
                return list(found)
        spans = tuple(engine(image))
        with self._lock:
            self.misses += 1
            self._cache[key] = spans
            while len(self._cache) > self.max_entries:
                self._cache.popitem(last=False)
        return list(spans)
