"""Icon labels for text-less buttons: crop normalisation and the ONNX icon classifier.

``normalize_icon`` turns any coloured icon crop into a fixed-size glyph intensity map
(foreground bright, background dark); the training script uses the very same function,
so train and run time see identical inputs.  The classifier runs on onnxruntime only and
is loaded lazily, once.  An OpenCLIP zero-shot backend exists as an optional extra.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from vision.assets import model_path
from vision.errors import BackendUnavailable
from vision.icon_vocab import ICON_LABELS

log = logging.getLogger(__name__)

ICON_INPUT = 32


@dataclass(frozen=True, slots=True)
class IconGuess:
    label: str
    confidence: float


class IconClassifier(Protocol):
    """Names what a small icon crop does ("search", "settings", ...)."""

    def classify(self, crops: Sequence[np.ndarray]) -> list[IconGuess]: ...


def normalize_icon(crop: np.ndarray, size: int = ICON_INPUT) -> np.ndarray:
    """RGB crop -> ``size x size`` float32 map in [0, 1] of 'how different from the background'.

    The background is the crop's most common colour; components touching the crop
    border (a container's corners, neighbouring widgets) are removed when something
    else remains; the glyph is then centred and scaled to fill ~85 % of the square.
    """
    if crop.ndim != 3 or crop.shape[0] < 2 or crop.shape[1] < 2:
        return np.zeros((size, size), np.float32)
    img = crop.astype(np.int16)
    q = (img // 32).reshape(-1, 3)
    codes = q[:, 0] * 64 + q[:, 1] * 8 + q[:, 2]
    mode = np.bincount(codes, minlength=512).argmax()
    sel = codes == mode
    bg = img.reshape(-1, 3)[sel].mean(axis=0)
    dist = np.sqrt(((img - bg) ** 2).sum(axis=2)).astype(np.float32)
    peak = float(dist.max())
    if peak < 12.0:
        return np.zeros((size, size), np.float32)
    dist /= peak
    mask = (dist > 0.3).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    h, w = mask.shape
    keep = np.zeros(n, bool)
    for i in range(1, n):
        x, y, cw, ch, _area = stats[i]
        touches = x == 0 or y == 0 or x + cw >= w or y + ch >= h
        keep[i] = not touches
    if keep.any():
        dist = dist * keep[labels]
        mask = keep[labels].astype(np.uint8)
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return np.zeros((size, size), np.float32)
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    glyph = dist[y0:y1, x0:x1]
    side = int(max(glyph.shape) / 0.85) + 1
    canvas = np.zeros((side, side), np.float32)
    oy, ox = (side - glyph.shape[0]) // 2, (side - glyph.shape[1]) // 2
    canvas[oy : oy + glyph.shape[0], ox : ox + glyph.shape[1]] = glyph
    interp = cv2.INTER_AREA if side > size else cv2.INTER_LINEAR
    return cv2.resize(canvas, (size, size), interpolation=interp).astype(np.float32)


class OnnxIconClassifier:
    """The project's trained icon CNN (``resources/models/icon_classifier.onnx``)."""

    def __init__(self, path: Path | None = None, labels: Sequence[str] | None = None, threads: int = 1) -> None:
        self._path = path or model_path("icon_classifier.onnx")
        if self._path is None or not Path(self._path).is_file():
            raise BackendUnavailable(
                "icon classifier model not found",
                "run scripts/train_icons.py or reinstall tapwise (resources/models/icon_classifier.onnx)",
            )
        self._labels = list(labels) if labels else self._load_labels(Path(self._path))
        self._threads = threads
        self._session: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def _load_labels(path: Path) -> list[str]:
        side = path.with_suffix(".labels.json")
        if side.is_file():
            return list(json.loads(side.read_text(encoding="utf-8")))
        return list(ICON_LABELS)

    def _sess(self):
        with self._lock:
            if self._session is None:
                import onnxruntime as ort

                opts = ort.SessionOptions()
                opts.intra_op_num_threads = self._threads
                opts.log_severity_level = 3
                self._session = ort.InferenceSession(str(self._path), opts, providers=["CPUExecutionProvider"])
            return self._session

    def classify(self, crops: Sequence[np.ndarray]) -> list[IconGuess]:
        if not crops:
            return []
        batch = np.stack([normalize_icon(c) for c in crops])[:, None, :, :].astype(np.float32)
        sess = self._sess()
        logits = sess.run(None, {sess.get_inputs()[0].name: batch})[0]
        logits = logits - logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        idx = probs.argmax(axis=1)
        return [IconGuess(self._labels[i] if i < len(self._labels) else "", float(probs[k, i])) for k, i in enumerate(idx)]


class ClipIconClassifier:
    """Zero-shot icon labels with OpenCLIP (extra ``clip``; needs local weights)."""

    def __init__(self, weights: Path, model_name: str = "ViT-B-32", labels: Sequence[str] = ICON_LABELS) -> None:
        try:
            import open_clip  # noqa: F401
            import torch  # noqa: F401
        except ImportError as exc:  # pragma: no cover - optional extra
            raise BackendUnavailable("OpenCLIP is not installed", "pip install 'tapwise[clip]'") from exc
        if not Path(weights).is_file():
            raise BackendUnavailable(f"OpenCLIP weights not found: {weights}", "point to a local state-dict file")
        self._weights, self._name, self._labels = Path(weights), model_name, list(labels)
        self._state: Any = None

    def _load(self):  # pragma: no cover - optional extra
        if self._state is None:
            import open_clip
            import torch

            model, _, preprocess = open_clip.create_model_and_transforms(self._name, pretrained=str(self._weights))
            tok = open_clip.get_tokenizer(self._name)
            with torch.no_grad():
                text = model.encode_text(tok([f"an icon meaning {x}" for x in self._labels]))
                text = text / text.norm(dim=-1, keepdim=True)
            self._state = (model, preprocess, text)
        return self._state

    def classify(self, crops: Sequence[np.ndarray]) -> list[IconGuess]:  # pragma: no cover - optional extra
        import torch
        from PIL import Image

        model, preprocess, text = self._load()
        out = []
        with torch.no_grad():
            for c in crops:
                img = preprocess(Image.fromarray(c)).unsqueeze(0)
                f = model.encode_image(img)
                f = f / f.norm(dim=-1, keepdim=True)
                p = (100.0 * f @ text.T).softmax(dim=-1)[0]
                i = int(p.argmax())
                out.append(IconGuess(self._labels[i], float(p[i])))
        return out
