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
    """Decode a PNG/JPEG/WebP file or byte string into an ``H x W x 3`` RGB array, turned
    upright by its EXIF orientation tag (a phone photo tagged "rotate 90°" is read as shown)."""
    from PIL import Image, ImageOps, UnidentifiedImageError

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
            rgb = ImageOps.exif_transpose(im).convert("RGB")  # upright, as the camera/phone meant it
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


#: File endings of the tree formats ``vision.hierarchy.parse_hierarchy`` reads.
TREE_SUFFIXES = (".xml", ".uix", ".json")


#: At most this many sibling folders are looked through for a screenshot's tree (or a tree's screenshot).
MAX_SIBLING_FOLDERS = 20


def _parallel_folders(p: Path) -> list[Path]:
    """The other folders beside ``p``'s folder: a data set that keeps its screenshots and its
    trees in two folders side by side (``screenshots/12.jpg``, ``trees/12.json``)."""
    try:
        return sorted(d for d in p.parent.parent.iterdir() if d.is_dir() and d != p.parent)[:MAX_SIBLING_FOLDERS]
    except OSError:
        return []


def sibling_tree(image_path: str | Path) -> Path | None:
    """The tree saved with a screenshot under the same name (``shot.png`` -> ``shot.xml``,
    ``shot.uix`` or ``shot.json``; DroidBot's ``screen_X.png`` -> ``state_X.json``), beside it
    or in a folder beside its folder; None when there is none."""
    p = Path(image_path)
    names = [p.with_suffix(s) for s in TREE_SUFFIXES]
    if p.stem.startswith("screen_"):
        names.append(p.with_name("state_" + p.stem[len("screen_"):] + ".json"))
    found = next((n for n in names if n.is_file()), None)
    if found is not None:
        return found
    return next((d / (p.stem + s) for d in _parallel_folders(p) for s in TREE_SUFFIXES
                 if (d / (p.stem + s)).is_file()), None)


#: File endings of the screenshots a tree file may sit beside.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")


def image_beside_tree(tree_path: str | Path) -> Path:
    """The screenshot saved with a tree file (``shot.xml`` -> ``shot.png``; DroidBot's
    ``state_X.json`` -> ``screen_X.png``), beside it or in a folder beside its folder;
    ``ImageError`` when there is none."""
    p = Path(tree_path)
    stems = [p.stem]
    if p.stem.startswith("state_"):
        stems.append("screen_" + p.stem[len("state_"):])
    for folder in (p.parent, *_parallel_folders(p)):
        for stem in stems:
            for suffix in IMAGE_SUFFIXES:
                candidate = folder / (stem + suffix)
                if candidate.is_file():
                    return candidate
    raise ImageError(f"no screenshot beside {p.name}",
                     f"save the screenshot next to it as {p.stem}.png (or open the screenshot itself)")


def load_screen_files(image_path: str | Path, tree_path: str | Path | None = None) -> tuple[np.ndarray, str | None]:
    """A screenshot and its tree text (given, else the sibling found by ``sibling_tree``)."""
    rgb = load_rgb(image_path)
    tree = Path(tree_path) if tree_path is not None else sibling_tree(image_path)
    if tree is None:
        return rgb, None
    if not tree.is_file():
        raise ImageError(f"tree not found: {tree}", "check the path of the hierarchy file")
    return rgb, tree.read_text(encoding="utf-8", errors="replace")
