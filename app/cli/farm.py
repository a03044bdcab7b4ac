"""``tapwise farm serve``: this host's phones in a Ray cluster (see ``evaluation.farm.serve``).

Prints what it started and what to run on the other hosts; every failure says what to do
and exits non-zero instead of a traceback.
"""

from __future__ import annotations

import typer

farm_app = typer.Typer(help="Device farm: phones on several hosts for `bench online --ray` (needs the farm extra).",
                       no_args_is_help=True)


@farm_app.command("serve")
def serve(
    phones: int = typer.Option(2, "--phones", min=0, help="Virtual phones to serve on this host (separate processes)."),
    address: str = typer.Option("", "--address", help="Join the Ray cluster at HOST:PORT instead of starting a head."),
    port: int = typer.Option(6379, "--port", help="Port of the Ray head this command starts."),
    base_port: int = typer.Option(5600, "--base-port", help="The virtual phones listen on 127.0.0.1 from this port up (0: free ports)."),
    loopback: bool = typer.Option(False, "--loopback", help="A one-machine cluster on loopback only (nothing listens on the network)."),
    adb_phones: bool = typer.Option(True, "--adb-phones/--no-adb-phones", help="Also advertise the real phones adb lists."),
    model_url: str = typer.Option("", "--model-url", help="The model server cells on this host use (default: the driver's)."),
    model_backend: str = typer.Option("", "--model-backend", help="'ollama' or 'openai' for --model-url (default: guessed)."),
    model: str = typer.Option("", "--model", help="Model name on --model-url (default: the driver's)."),
    num_cpus: int = typer.Option(-1, "--num-cpus", help="CPUs this node offers Ray (-1: all)."),
) -> None:
    """Serve virtual phones here and advertise them (and real phones) to Ray; Ctrl+C stops all."""
    from agent.device import DeviceError
    from evaluation.farm.driver import FarmError
    from evaluation.farm.serve import FarmNodeOptions, run_until_stopped, start_node

    opts = FarmNodeOptions(
        phones=phones, address=address or None, ray_port=port, base_port=base_port, loopback=loopback,
        include_adb_phones=adb_phones, model_url=model_url, model_backend=model_backend, model=model,
        num_cpus=None if num_cpus < 0 else num_cpus,
    )
    try:
        node = start_node(opts, typer.echo)
    except (FarmError, DeviceError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for slot in node.slots:
        typer.echo(f"  advertises {slot.resource}")
    if not address:
        typer.echo(f"farm ready: head at {node.address}. Other hosts: tapwise farm serve --address {node.address}; "
                   f"driver: tapwise bench online --ray-address {node.address} …  (Ctrl+C stops)")
    else:
        typer.echo(f"farm ready: joined {address}  (Ctrl+C stops)")
    raise typer.Exit(run_until_stopped(node, typer.echo))
