"""``PipelineConfig``: which backend runs each stage of the screen parser, and its knobs.

Plain frozen data; the application's settings map onto it.  No behaviour here beyond
validation of the values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Mode = Literal["auto", "vision", "tree", "fusion"]
DetectorName = Literal["auto", "hybrid", "yolo", "cv", "none"]
OcrName = Literal["rapidocr", "paddle", "none"]
IconName = Literal["auto", "onnx", "clip", "none"]


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    """How ``ScreenParser`` turns a ``Screen`` into a ``ScreenParse``.

    ``mode``: ``tree`` uses only the accessibility dump; ``vision`` only pixels;
    ``fusion`` both (tree first, vision fills gaps and flags disagreements); ``auto``
    is ``fusion`` when the screen carries a dump and ``vision`` otherwise.
    """

    mode: Mode = "auto"
    detector: DetectorName = "auto"  # auto: hybrid (YOLO + CV) if the model ships, else the CV detector
    ocr: OcrName = "rapidocr"
    icons: IconName = "auto"  # auto: the shipped ONNX classifier if present
    ocr_min_confidence: float = 0.95  # VisionTasker's bar
    ocr_det_max_side: int = 960  # text detection runs on an image no longer than this ...
    ocr_det_min_scale: float = 0.5  # ... unless that shrinks the frame below this share (tall 1080x2400 screens)
    ocr_use_cls: bool = False  # text-direction classifier (rarely useful on UIs)
    ocr_threads: int = 0  # 0 = onnxruntime default (one per core)
    ocr_cache_entries: int = 256  # images (frames, changed regions) whose OCR result is remembered by pixels; 0 = off
    ocr_rec_batch: int = 6  # text lines recognised per engine call
    ocr_tree_gaps: bool = True  # fusion: OCR only where the tree has no words (its words become spans)
    incremental_ocr: bool = True  # re-read only the changed region when given a previous frame
    incremental_max_changed: float = 0.35  # above this changed fraction, OCR the whole frame
    remember_previous: bool = True  # with no ``previous`` given, diff against this parser's last frame
    detector_min_confidence: float = 0.35
    detector_model: str = "ui_detector.onnx"
    icon_model: str = "icon_classifier.onnx"
    icon_min_confidence: float = 0.45
    evidence: bool = True  # pixel-only elements need words, an icon label or a control's shape
    occlusion: bool = True  # look for a dimmed screen around a dialog panel (the tree's evidence is always used)
    blocks: bool = True
    describe: bool = True
    max_image_pixels: int = 40_000_000  # larger images are refused with a clear error
    min_image_side: int = 16  # smaller images give an empty parse with a warning
    hierarchy_collapse: bool = True
    extra: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.ocr_min_confidence <= 1.0:
            raise ValueError(f"ocr_min_confidence must be in [0, 1], got {self.ocr_min_confidence}")
        if not 0.0 <= self.detector_min_confidence <= 1.0:
            raise ValueError("detector_min_confidence must be in [0, 1]")
        if not 0.0 <= self.ocr_det_min_scale <= 1.0:
            raise ValueError("ocr_det_min_scale must be in [0, 1]")
        if self.ocr_det_max_side < 64:
            raise ValueError("ocr_det_max_side must be at least 64")
        if self.ocr_cache_entries < 0 or self.ocr_rec_batch < 1:
            raise ValueError("ocr_cache_entries must be >= 0 and ocr_rec_batch >= 1")
        if not 0.0 < self.incremental_max_changed <= 1.0:
            raise ValueError("incremental_max_changed must be in (0, 1]")
