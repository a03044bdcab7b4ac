"""Train the UI widget detector (YOLOv8n from scratch) on virtual-phone screens; export ONNX.

Reproducible from a clean checkout with the training venv:

    python3 -m venv .venv-train
    .venv-train/bin/pip install torch==2.14.1 torchvision==0.29.1 ultralytics onnx
    .venv-train/bin/pip install --no-deps qtawesome          # the sim's icon font
    PYTHONPATH=. .venv-train/bin/python scripts/train_detector.py data --out .work/det
    PYTHONPATH=. .venv-train/bin/python scripts/train_detector.py train --data .work/det --model-out resources/models

``data`` walks the virtual phone (``phone.virtual``) with a seeded random explorer (taps on
clickable elements, scrolls, back, app switches) over profiles, themes and languages and
writes YOLO labels from ``VirtualPhone.ground_truth()`` for VisionTasker's 12 classes.
Training seeds are 0..N-1; the benchmark uses seeds from 1000 and the tablet profile,
which training never sees.  ``train`` runs ultralytics fully offline (YOLO_OFFLINE,
local YOLO_CONFIG_DIR with a local TTF as Arial.ttf, plots/amp off, workers 0) and
exports ``ui_detector.onnx`` plus a metrics file for the model card.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import random
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.geometry import Rect
from vision.types import DETECTOR_CLASSES, ElementKind

log = logging.getLogger("train_detector")
CLASS_INDEX = {k: i for i, k in enumerate(DETECTOR_CLASSES)}
TRAIN_PROFILES = ("phone", "small")
RARE = {CLASS_INDEX[k] for k in (ElementKind.PAGE_INDICATOR, ElementKind.SEEK_BAR, ElementKind.RATING_BAR, ElementKind.CHECK_BOX,
                                 ElementKind.RADIO_GROUP, ElementKind.SPINNER, ElementKind.SWITCH)}
EVAL_PROFILES = ("phone", "small", "tablet")


def explore(profile: str, theme: str, lang: str, seed: int, steps: int) -> Iterator[tuple[np.ndarray, object]]:
    """Yield (RGB image, GroundTruth) for distinct frames of a seeded random walk."""
    from phone.virtual.phone import VirtualPhone

    rng = random.Random(f"{profile}-{theme}-{lang}-{seed}")
    phone = VirtualPhone(profile=profile, theme=theme, lang=lang, seed=seed)
    seen: set[str] = set()
    apps = [pkg for _name, pkg in phone.installed_apps()]
    size = phone.screen_size()
    for _ in range(steps):
        try:
            img = phone.screenshot().image
            truth = phone.ground_truth()
        except Exception as exc:  # the simulator is young; one bad frame must not stop a run
            log.debug("frame failed: %s", exc)
            phone.go_home()
            continue
        key = hashlib.blake2b(img[::8, ::8].tobytes(), digest_size=8).hexdigest()
        if key not in seen:
            seen.add(key)
            yield img, truth
        r = rng.random()
        try:
            clickable = [e for e in truth.elements if e.clickable and e.kind not in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)]
            if r < 0.6 and clickable:
                e = rng.choice(clickable)
                phone.tap(e.rect.center.x, e.rect.center.y)
            elif r < 0.75:
                x = size.width // 2
                phone.swipe(x, int(size.height * 0.7), x, int(size.height * 0.3), 300)
            elif r < 0.85:
                phone.key("BACK")
            elif apps:
                phone.go_home()
                phone.open_app(rng.choice(apps))
        except Exception as exc:
            log.debug("action failed: %s", exc)
            try:
                phone.go_home()
            except Exception:
                pass


def yolo_lines(truth, W: int, H: int) -> list[str]:
    out = []
    for e in truth.elements:
        c = CLASS_INDEX.get(e.kind)
        if c is None:
            continue
        r: Rect = e.rect.clamp(truth.size)
        if r.width < 2 or r.height < 2:
            continue
        out.append(f"{c} {(r.left + r.right) / 2 / W:.6f} {(r.top + r.bottom) / 2 / H:.6f} {r.width / W:.6f} {r.height / H:.6f}")
    return out


def cmd_data(args: argparse.Namespace) -> None:
    from PIL import Image

    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    for split in ("train", "val"):
        (out / "images" / split).mkdir(parents=True)
        (out / "labels" / split).mkdir(parents=True)
    n = {"train": 0, "val": 0}
    t0 = time.time()
    for seed in range(args.seeds):
        for profile in TRAIN_PROFILES:
            theme = ("light", "dark")[(seed + len(profile)) % 2]
            lang = ("en", "de")[seed % 3 == 2]
            split = "val" if seed % 10 == 9 else "train"
            for img, truth in explore(profile, theme, lang, seed, args.steps):
                H, W = img.shape[:2]
                scale = args.imgsz / max(H, W)
                im = Image.fromarray(img).resize((round(W * scale), round(H * scale)), Image.BILINEAR)
                lines = yolo_lines(truth, W, H)
                rare = any(int(li.split()[0]) in RARE for li in lines)
                copies = args.rare_copies if (rare and split == "train") else 1  # oversample rare widgets
                for _ in range(copies):
                    name = f"s{seed}_{profile}_{theme}_{lang}_{n[split]}"
                    im.save(out / "images" / split / f"{name}.jpg", quality=92)
                    (out / "labels" / split / f"{name}.txt").write_text("\n".join(lines) + "\n")
                    n[split] += 1
    names = {i: k.value for i, k in enumerate(DETECTOR_CLASSES)}
    (out / "data.yaml").write_text(
        f"path: {out.resolve()}\ntrain: images/train\nval: images/val\nnames:\n" + "".join(f"  {i}: {v}\n" for i, v in names.items())
    )
    print(f"wrote {n['train']} train / {n['val']} val frames to {out} in {time.time() - t0:.0f}s")


def _offline_env(workdir: Path) -> None:
    cfg = workdir / "yolo_config"
    (cfg / "Ultralytics").mkdir(parents=True, exist_ok=True)
    font = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    target = cfg / "Ultralytics" / "Arial.ttf"
    if font.is_file() and not target.exists():
        shutil.copy(font, target)
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_CONFIG_DIR", str(cfg))
    os.environ.setdefault("MPLCONFIGDIR", str(workdir / "mpl"))


def cmd_train(args: argparse.Namespace) -> None:
    data = Path(args.data).resolve()
    _offline_env(data)
    from ultralytics import YOLO

    t0 = time.time()
    model = YOLO("yolov8n.yaml")
    model.train(
        data=str(data / "data.yaml"), epochs=args.epochs, imgsz=args.imgsz, batch=args.batch, device="cpu",
        workers=0, amp=False, plots=False, project=str(data / "runs"), name="det", exist_ok=True, seed=0,
        deterministic=False, fliplr=0.0, mosaic=1.0, close_mosaic=max(1, args.epochs // 4), hsv_h=0.3,
        hsv_s=0.6, hsv_v=0.4, translate=0.05, scale=0.25, patience=100, verbose=False, val=True,
        time=args.max_hours if args.max_hours else None,
    )
    best = data / "runs" / "det" / "weights" / "best.pt"
    if not best.is_file():
        best = data / "runs" / "det" / "weights" / "last.pt"
    trained = YOLO(str(best))
    metrics = trained.val(data=str(data / "data.yaml"), imgsz=args.imgsz, batch=args.batch, device="cpu", plots=False, verbose=False)
    onnx_file = trained.export(format="onnx", imgsz=args.imgsz, opset=17, simplify=False, dynamic=False)
    out = Path(args.model_out)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(onnx_file, out / "ui_detector.onnx")
    per_class = {}
    try:
        for i, c in enumerate(metrics.box.ap_class_index):
            per_class[DETECTOR_CLASSES[int(c)].value] = {
                "p": round(float(metrics.box.p[i]), 3), "r": round(float(metrics.box.r[i]), 3),
                "ap50": round(float(metrics.box.ap50[i]), 3)}
    except Exception as exc:  # metrics layout differs between ultralytics versions
        log.warning("per-class metrics unavailable: %s", exc)
    info = {"imgsz": args.imgsz, "epochs": args.epochs, "batch": args.batch, "minutes": round((time.time() - t0) / 60, 1),
            "val_map50": round(float(metrics.box.map50), 3), "val_map50_95": round(float(metrics.box.map), 3),
            "per_class": per_class, "train_images": len(list((data / "images" / "train").glob("*.jpg"))),
            "val_images": len(list((data / "images" / "val").glob("*.jpg")))}
    (out / "ui_detector.metrics.json").write_text(json.dumps(info, indent=1))
    print(json.dumps(info, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("data", help="render virtual-phone frames with YOLO labels")
    d.add_argument("--out", default=".work/det")
    d.add_argument("--seeds", type=int, default=40)
    d.add_argument("--steps", type=int, default=12)
    d.add_argument("--imgsz", type=int, default=640)
    d.add_argument("--rare-copies", type=int, default=3, help="copies of frames holding rare classes")
    t = sub.add_parser("train", help="train YOLOv8n and export ONNX")
    t.add_argument("--data", default=".work/det")
    t.add_argument("--model-out", default="resources/models")
    t.add_argument("--epochs", type=int, default=12)
    t.add_argument("--imgsz", type=int, default=512)
    t.add_argument("--batch", type=int, default=16)
    t.add_argument("--max-hours", type=float, default=0.0, help="ultralytics' wall-clock cap (0 = none)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    {"data": cmd_data, "train": cmd_train}[args.cmd](args)


if __name__ == "__main__":
    main()
