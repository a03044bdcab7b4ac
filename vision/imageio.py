"""Read images from files or bytes into the RGB ``uint8`` arrays ``Screen`` wants.

Every failure becomes an ``ImageError`` with a hint; nothing here crashes on bad input.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from vision.errors import ImageError

MAX_PIXELS = 40_000_000


def load_rgb(source: str | Path | bytes, *, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """Decode a PNG/JPEG/WebP file or byte string into an ``H x W x 3`` RGB array."""
    from PIL import Image, UnidentifiedImageError

    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise ImageError(f"image not found: {path}", "check the path")
        data = path.read_bytes()
        name = str(path)
    else:
        data = bytes(source)
        name = "<bytes>"
    if not data:
        raise ImageError(f"image is empty: {name}", "the file has 0 bytes; capture the screen again")
    try:
        with Image.open(io.BytesIO(data)) as im:
            w, h = im.size
            if w * h > max_pixels:
                raise ImageError(
                    f"image too large: {w}x{h} ({w * h} pixels > {max_pixels})",
                    "downscale it or raise PipelineConfig.max_image_pixels",
                )
            rgb = im.convert("RGB")
            arr = np.asarray(rgb, dtype=np.uint8)
    except ImageError:
        raise
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ImageError(f"cannot decode image {name}: {exc}", "is it a PNG or JPEG?") from exc
    if arr.ndim != 3 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ImageError(f"image has no pixels: {name}")
    return np.ascontiguousarray(arr)


def as_rgb(image: np.ndarray) -> np.ndarray:
    """Coerce a grey, RGBA or float image to RGB ``uint8`` (copies only when needed)."""
    arr = np.asarray(image)
    if arr.size == 0:
        raise ImageError("image is empty")
    if arr.dtype != np.uint8:
        if np.issubdtype(arr.dtype, np.floating) and arr.max(initial=0) <= 1.0:
            arr = arr * 255.0
        arr = np.clip(arr, 0, 255).astype(np.uint8)
    if arr.ndim == 2:
        arr = np.repeat(arr[:, :, None], 3, axis=2)
    elif arr.ndim == 3 and arr.shape[2] == 4:
        arr = arr[:, :, :3]
    elif arr.ndim == 3 and arr.shape[2] == 1:
        arr = np.repeat(arr, 3, axis=2)
    if arr.ndim != 3 or arr.shape[2] != 3:
        raise ImageError(f"unsupported image shape {arr.shape}")
    return np.ascontiguousarray(arr)
