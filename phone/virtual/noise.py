"""Noise knobs for the virtual phone: the ways real phones and their accessibility
trees mislead agents.  Every knob is off by default and deterministic for a seed.

This module only holds the configuration and the seeded decisions; the phone applies
them (``phone``) and the XML dumper uses them (``dump``).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class NoiseConfig:
    """What to get wrong, and how often.

    - ``missing_desc``: probability that an icon-only button has no content-desc.
    - ``invisible_nodes``: number of invisible (zero-size or hidden) nodes added to each dump.
    - ``stale_nodes``: probability that the first dump after a screen change still
      carries the previous screen's nodes.
    - ``opaque_packages``: apps whose content is one opaque view with no children (like
      a WebView or a Flutter screen); ``("*",)`` means every app.
    - ``tap_offset_px``: standard deviation of a Gaussian offset added to taps.
    - ``drop_taps``: probability that a tap or long press is lost.
    - ``update_delay``: number of screenshots after an input that still show the old frame.
    - ``ads``: probability, after each input, that a pop-up ad appears.
    - ``dynamic_content``: the clock advances, banners rotate and counters change
      between frames even without input.
    """

    missing_desc: float = 0.0
    invisible_nodes: int = 0
    stale_nodes: float = 0.0
    opaque_packages: tuple[str, ...] = ()
    tap_offset_px: float = 0.0
    drop_taps: float = 0.0
    update_delay: int = 0
    ads: float = 0.0
    dynamic_content: bool = False

    def __post_init__(self) -> None:
        for name in ("missing_desc", "stale_nodes", "drop_taps", "ads"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"NoiseConfig.{name} is a probability in [0, 1], got {v!r}")
        for name in ("invisible_nodes", "update_delay"):
            if getattr(self, name) < 0:
                raise ValueError(f"NoiseConfig.{name} must be >= 0")
        if self.tap_offset_px < 0:
            raise ValueError("NoiseConfig.tap_offset_px must be >= 0")

    @property
    def any(self) -> bool:
        return self != NoiseConfig()

    def is_opaque(self, package: str) -> bool:
        return "*" in self.opaque_packages or package in self.opaque_packages


def stable_chance(seed: int, *parts: object) -> float:
    """A number in [0, 1) fixed by the seed and the parts (independent of call order)."""
    h = hashlib.blake2b(repr((seed, *parts)).encode(), digest_size=8).digest()
    return int.from_bytes(h, "big") / 2**64


def make_rng(seed: int, stream: str) -> random.Random:
    return random.Random(f"{seed}:{stream}")
