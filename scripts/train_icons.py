"""Train the icon classifier on rendered Material Design Icons glyphs and export it to ONNX.

Run from the repository root with the training venv (torch is not a core dependency):

    python3 -m venv .venv-train
    .venv-train/bin/pip install torch==2.14.1 torchvision==0.29.1 ultralytics onnx
    .venv-train/bin/pip install --no-deps qtawesome   # only for its font files
    PYTHONPATH=. .venv-train/bin/python scripts/train_icons.py --out resources/models

The glyphs come from the MDI font inside the qtawesome wheel (found with
importlib.util.find_spec; qtawesome is never imported).  Each sample is the glyph drawn
in random colours on a random background, sometimes inside a filled circle or rounded
rectangle, with blur, noise, jitter and low-resolution resampling; it then goes through
``vision.icons.normalize_icon`` exactly as at run time.  CPU only; about 10 minutes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from vision.icon_vocab import ICON_FUNCTIONS
from vision.icons import ICON_INPUT, normalize_icon

MDI_FONT = "materialdesignicons6-webfont-6.9.96.ttf"
MDI_CHARMAP = "materialdesignicons6-webfont-charmap-6.9.96.json"


def mdi_files() -> tuple[Path, dict[str, str]]:
    spec = importlib.util.find_spec("qtawesome")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("qtawesome is not installed in this environment (it carries the MDI font)")
    fonts = Path(list(spec.submodule_search_locations)[0]) / "fonts"
    charmap = json.loads((fonts / MDI_CHARMAP).read_text(encoding="utf-8"))
    return fonts / MDI_FONT, {k: chr(int(v, 16)) for k, v in charmap.items()}


def _colour(rng: random.Random) -> tuple[int, int, int]:
    return (rng.randrange(256), rng.randrange(256), rng.randrange(256))


def _contrasting(rng: random.Random, base: tuple[int, int, int]) -> tuple[int, int, int]:
    for _ in range(50):
        c = _colour(rng) if rng.random() < 0.6 else ((20, 20, 20) if sum(base) > 380 else (245, 245, 245))
        if sum(abs(a - b) for a, b in zip(c, base, strict=True)) > 160:
            return c
    return (0, 0, 0) if sum(base) > 380 else (255, 255, 255)


_font_cache: dict[int, ImageFont.FreeTypeFont] = {}


def render(char: str, font_path: Path, rng: random.Random) -> np.ndarray:
    """One augmented icon crop (RGB uint8)."""
    px = rng.randint(18, 72)
    font = _font_cache.get(px) or _font_cache.setdefault(px, ImageFont.truetype(str(font_path), px))
    pad = rng.uniform(1.05, 1.9)
    w = int(px * pad * rng.uniform(0.9, 1.15))
    h = int(px * pad * rng.uniform(0.9, 1.15))
    bg = _colour(rng) if rng.random() < 0.5 else rng.choice([(255, 255, 255), (250, 250, 250), (33, 33, 33), (18, 18, 18), (240, 244, 250)])
    im = Image.new("RGB", (w, h), bg)
    d = ImageDraw.Draw(im)
    field = bg
    r = rng.random()
    if r < 0.2:  # filled circle container (FAB-like)
        field = _contrasting(rng, bg)
        m = int(min(w, h) * rng.uniform(0.0, 0.06))
        d.ellipse([m, m, w - 1 - m, h - 1 - m], fill=field)
    elif r < 0.3:  # rounded rectangle container
        field = _contrasting(rng, bg)
        d.rounded_rectangle([0, 0, w - 1, h - 1], radius=int(min(w, h) * 0.25), fill=field)
    fg = _contrasting(rng, field)
    cx = w / 2 + rng.uniform(-0.08, 0.08) * w
    cy = h / 2 + rng.uniform(-0.08, 0.08) * h
    d.text((cx, cy), char, font=font, fill=fg, anchor="mm")
    if rng.random() < 0.3:
        im = im.rotate(rng.uniform(-6, 6), resample=Image.BILINEAR, fillcolor=bg)
    if rng.random() < 0.3:
        im = im.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.2)))
    if rng.random() < 0.3:
        s = rng.uniform(0.35, 0.7)
        small = im.resize((max(4, int(w * s)), max(4, int(h * s))), Image.BILINEAR)
        im = small.resize((w, h), Image.BILINEAR)
    arr = np.asarray(im, dtype=np.int16)
    if rng.random() < 0.4:
        arr = arr + np.random.default_rng(rng.randrange(1 << 30)).normal(0, rng.uniform(2, 10), arr.shape).astype(np.int16)
    return np.clip(arr, 0, 255).astype(np.uint8)


def build_set(per_class: int, seed: int, font_path: Path, chars: dict[str, str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    rng = random.Random(seed)
    xs, ys, labels = [], [], []
    for ci, (label, glyphs) in enumerate(ICON_FUNCTIONS):
        labels.append(label)
        names = [g for g in glyphs if g in chars]
        if not names:
            raise SystemExit(f"no glyph in the font for {label!r}")
        for _ in range(per_class):
            xs.append(normalize_icon(render(chars[rng.choice(names)], font_path, rng)))
            ys.append(ci)
    return np.stack(xs)[:, None].astype(np.float32), np.asarray(ys, np.int64), labels


def make_model(n_classes: int):
    import torch.nn as nn

    def block(i: int, o: int) -> list:
        return [nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

    return nn.Sequential(
        *block(1, 32), nn.MaxPool2d(2),  # 16
        *block(32, 64), nn.MaxPool2d(2),  # 8
        *block(64, 128), nn.MaxPool2d(2),  # 4
        *block(128, 160),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(160, n_classes),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="resources/models")
    ap.add_argument("--per-class", type=int, default=220)
    ap.add_argument("--val-per-class", type=int, default=30)
    ap.add_argument("--epochs", type=int, default=14)
    ap.add_argument("--max-minutes", type=float, default=12.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    font_path, chars = mdi_files()
    t0 = time.time()
    xtr, ytr, labels = build_set(args.per_class, args.seed, font_path, chars)
    xva, yva, _ = build_set(args.val_per_class, args.seed + 1000, font_path, chars)
    print(f"rendered {len(xtr)} train / {len(xva)} val glyphs in {time.time() - t0:.0f}s")
    model = make_model(len(labels))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    steps_per_epoch = (len(xtr) + 255) // 256
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=args.epochs * steps_per_epoch)
    xt, yt = torch.from_numpy(xtr), torch.from_numpy(ytr)
    xv, yv = torch.from_numpy(xva), torch.from_numpy(yva)
    deadline = t0 + args.max_minutes * 60
    val_acc = 0.0
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(xt))
        total = 0.0
        for s in range(steps_per_epoch):
            idx = perm[s * 256 : (s + 1) * 256]
            xb = xt[idx]
            # cheap on-line jitter: shift by up to 2 px, random gain
            dx, dy = np.random.randint(-2, 3, size=2)
            xb = torch.roll(xb, shifts=(int(dy), int(dx)), dims=(2, 3)) * torch.empty(len(xb), 1, 1, 1).uniform_(0.7, 1.1)
            loss = F.cross_entropy(model(xb), yt[idx], label_smoothing=0.05)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss)
        model.eval()
        with torch.no_grad():
            pred = torch.cat([model(xv[i : i + 512]).argmax(1) for i in range(0, len(xv), 512)])
        val_acc = float((pred == yv).float().mean())
        print(f"epoch {epoch + 1}: loss {total / steps_per_epoch:.3f} val top-1 {val_acc:.3f} ({time.time() - t0:.0f}s)")
        if time.time() > deadline:
            print("time budget reached; stopping early")
            break
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, 1, ICON_INPUT, ICON_INPUT)
    onnx_path = out / "icon_classifier.onnx"
    torch.onnx.export(
        model, dummy, str(onnx_path), input_names=["glyph"], output_names=["logits"],
        dynamic_axes={"glyph": {0: "n"}, "logits": {0: "n"}}, opset_version=17, dynamo=False,
    )
    (out / "icon_classifier.labels.json").write_text(json.dumps(labels, indent=0), encoding="utf-8")
    (out / "icon_classifier.metrics.json").write_text(
        json.dumps({"val_top1": round(val_acc, 4), "classes": len(labels), "train_samples": len(xtr),
                    "val_samples": len(xva), "epochs_run": epoch + 1, "minutes": round((time.time() - t0) / 60, 1),
                    "seed": args.seed}, indent=1), encoding="utf-8")
    print(f"wrote {onnx_path} ({onnx_path.stat().st_size / 1e6:.2f} MB), val top-1 {val_acc:.3f}")


if __name__ == "__main__":
    main()
