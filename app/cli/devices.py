"""Command line for phones: ``tapwise devices [list]``, ``devices connect HOST:PORT``,
``devices disconnect`` and ``devices screenshot``.  Serving the virtual phone lives in
``app.cli.sim`` so the device layer never imports the virtual phone.

``devices_app`` is a typer sub-app the main CLI mounts.  Heavy imports stay inside the
commands; every failure prints what to do and exits non-zero instead of a traceback.
"""

from __future__ import annotations

import logging
from pathlib import Path

import typer

devices_app = typer.Typer(help="Phones over adb: list, connect, screenshot.", invoke_without_command=True)
log = logging.getLogger(__name__)


def _fail(exc: Exception) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(2)


@devices_app.callback()
def _default(ctx: typer.Context) -> None:
    """Without a subcommand, list devices."""
    if ctx.invoked_subcommand is None:
        list_devices()


@devices_app.command("list")
def list_devices() -> None:
    """List phones adb can see, with model, Android version, size and what to fix."""
    from rich.console import Console
    from rich.table import Table

    from agent.device import DeviceError
    from phone.adb.discovery import list_devices as discover

    try:
        infos = discover()
    except DeviceError as exc:
        raise _fail(exc) from None
    console = Console()
    if not infos:
        console.print("No devices. Plug a phone in with USB debugging on, run `tapwise devices connect HOST:PORT`, "
                      "or serve the virtual phone with `tapwise sim --serve`.")
        return
    table = Table()
    for col in ("serial", "state", "model", "android", "size", "dpi", "what to do"):
        table.add_column(col, overflow="fold")
    for i in infos:
        table.add_row(i.serial, i.state, i.model + (" (virtual)" if i.is_virtual else ""), i.android_version,
                      str(i.size or ""), str(i.density_dpi or ""), i.problem)
    console.print(table)


@devices_app.command()
def connect(address: str = typer.Argument(..., help="host:port of a network phone (port 5555 if omitted).")) -> None:
    """Attach a phone over the network (`adb connect`)."""
    from agent.device import DeviceError
    from phone.adb.discovery import connect as do_connect

    try:
        serial = do_connect(address)
    except DeviceError as exc:
        raise _fail(exc) from None
    typer.echo(f"connected to {serial}")


@devices_app.command()
def disconnect(address: str = typer.Argument(..., help="host:port to detach.")) -> None:
    """Detach a network phone (`adb disconnect`)."""
    from phone.adb.discovery import disconnect as do_disconnect

    do_disconnect(address if ":" in address else f"{address}:5555")
    typer.echo(f"disconnected {address}")


@devices_app.command()
def screenshot(
    out: Path = typer.Argument(Path("screen.png"), help="PNG file to write."),
    serial: str = typer.Option("", "--serial", "-s", help="Device serial (default: the only device)."),
) -> None:
    """Save the phone's screen as PNG (raw framebuffer fast path)."""
    from PIL import Image

    from agent.device import DeviceError
    from phone.adb.adb_device import AdbDevice
    from phone.adb.discovery import list_devices as discover

    try:
        if not serial:
            ready = [i.serial for i in discover() if i.state == "device"]
            if len(ready) != 1:
                raise DeviceError(f"{len(ready)} usable devices", "pick one with --serial")
            serial = ready[0]
        image = AdbDevice(serial).screenshot_image()
    except DeviceError as exc:
        raise _fail(exc) from None
    Image.fromarray(image).save(out)
    typer.echo(f"wrote {out} ({image.shape[1]}x{image.shape[0]})")
