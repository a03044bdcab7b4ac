"""``tapwise parse``: parse one screenshot (and optionally its uiautomator dump) from the shell.

A typer sub-app; ``app.cli`` mounts it.  Prints the per-stage timings, and on request
the LLM-facing description, a JSON dump of the parse (through ``agent.codec`` when it
knows the type, else plain dataclass fields) and a set-of-marks overlay image.  A tree
file that is not UTF-8, or nests deeper than ``MAX_TREE_DEPTH``, is a clear error.
"""

from __future__ import annotations

import dataclasses
import json
from enum import Enum
from pathlib import Path
from typing import Any

import typer

app = typer.Typer(help="Parse a screenshot into elements, text and blocks.", no_args_is_help=True)

#: The deepest nesting accepted in a tree file (real Android trees stay well below 200 levels).
MAX_TREE_DEPTH = 1_000


def _read_tree(path: Path) -> str:
    """The tree file's text; ``typer.Exit(2)`` with a message when it cannot be used."""
    from agent.codec import nesting_depth

    def fail(message: str) -> typer.Exit:
        typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
        return typer.Exit(2)

    if not path.is_file():
        raise fail(f"no such dump: {path}")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"{path} is not UTF-8 text (byte {exc.start}: {exc.reason}); save the tree as UTF-8") from None
    except OSError as exc:
        raise fail(f"cannot read {path}: {exc.strerror}") from None
    if text.lstrip()[:1] in ("{", "[") and nesting_depth(text) > MAX_TREE_DEPTH:
        raise fail(f"{path} nests more than {MAX_TREE_DEPTH} levels deep: not a screen's tree")
    return text


def _plain(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, (list, tuple)):
        return [_plain(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    return obj


def _to_json(parse: Any) -> str:
    try:
        from agent import codec

        return codec.dumps(parse)
    except Exception:  # the codec may not cover ScreenParse; plain fields always work
        return json.dumps(_plain(parse), ensure_ascii=False, indent=1)


@app.command("parse")
def parse_cmd(
    image: Path = typer.Argument(..., help="screenshot (PNG/JPEG)"),
    xml: Path | None = typer.Option(None, "--xml", "--hierarchy",
                                    help="tree taken with the screenshot: uiautomator dump or Appium page source "
                                         "(XML), Rico or DroidBot state (JSON)"),
    json_out: Path | None = typer.Option(None, "--json", help="write the parse as JSON here"),
    overlay: Path | None = typer.Option(None, "--overlay", help="write a set-of-marks PNG here"),
    describe: bool = typer.Option(False, "--describe", help="print the LLM-facing description"),
    mode: str = typer.Option("auto", "--mode", help="auto | vision | tree | fusion"),
    detector: str = typer.Option("auto", "--detector", help="auto | hybrid | yolo | cv | none"),
    min_conf: float = typer.Option(0.95, "--ocr-min-confidence", help="OCR confidence bar"),
) -> None:
    """Parse IMAGE and print per-stage timings."""
    from vision.config import PipelineConfig
    from vision.errors import VisionError
    from vision.imageio import load_rgb
    from vision.pipeline import ScreenParser
    from vision.types import Screen

    try:
        rgb = load_rgb(image)
    except VisionError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from exc
    xml_text = _read_tree(xml) if xml is not None else None
    try:
        config = PipelineConfig(mode=mode, detector=detector, ocr_min_confidence=min_conf)  # type: ignore[arg-type]
    except ValueError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from exc
    parser = ScreenParser(config)
    try:
        result = parser.parse(Screen(rgb, hierarchy_xml=xml_text))
    except VisionError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1) from exc
    except (RecursionError, ValueError) as exc:  # a tree the readers could not take apart
        typer.secho(f"error: cannot read the tree: {type(exc).__name__}: {str(exc)[:200]}", fg=typer.colors.RED,
                    err=True)
        raise typer.Exit(2) from None
    typer.echo(f"{image.name}: {result.screen_size}, {len(result.elements)} elements, {len(result.blocks)} blocks, "
               f"{len(result.text_spans)} text spans, detector={parser.detector_name or '-'}")
    for t in result.timings:
        typer.echo(f"  {t.stage:<16} {t.ms:8.1f} ms")
    for w in result.warnings:
        typer.secho(f"warning: {w}", fg=typer.colors.YELLOW, err=True)
    if result.disagreements:
        typer.echo(f"{len(result.disagreements)} tree/vision disagreements")
    if describe:
        typer.echo(result.description)
    if json_out is not None:
        json_out.write_text(_to_json(result), encoding="utf-8")
        typer.echo(f"wrote {json_out}")
    if overlay is not None:
        from PIL import Image

        from vision.marks import set_of_marks

        Image.fromarray(set_of_marks(rgb, result.elements, blocks=result.blocks)).save(overlay)
        typer.echo(f"wrote {overlay}")


if __name__ == "__main__":  # pragma: no cover
    app()
