"""``tapwise parse``: parse one screenshot (and optionally its uiautomator dump) from the shell.

A typer sub-app; ``app.cli`` mounts it.  Prints the per-stage timings, and on request
the LLM-facing description, a JSON dump of the parse (through ``agent.codec`` when it
knows the type, else plain dataclass fields) and a set-of-marks overlay image.
"""

from __future__ import annotations

import dataclasses
import json
from enum import Enum
from pathlib import Path
from typing import Any

import typer

app = typer.Typer(help="Parse a screenshot into elements, text and blocks.", no_args_is_help=True)


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
    xml_text = None
    if xml is not None:
        if not xml.is_file():
            typer.secho(f"error: no such dump: {xml}", fg=typer.colors.RED, err=True)
            raise typer.Exit(2)
        xml_text = xml.read_text(encoding="utf-8", errors="replace")
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
