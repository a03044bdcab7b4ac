"""``tapwise secrets``: the vault from the command line (``app.vault``).

``set NAME`` reads the value from standard input (without echo at a terminal, asked
twice), ``list`` shows the names and where they are kept, ``delete NAME`` removes one.
No command prints or logs a value.  Goals and macro steps refer to a secret as
``{{secret:NAME}}``.  A bad name, an empty value or an unusable vault is a clean message
and exit status 2.
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.markup import escape

secrets_app = typer.Typer(help="Named secrets (passwords, PINs) that goals and macros use as {{secret:NAME}}: "
                          "the model never sees their values.", no_args_is_help=True)


def _vault(console: Console):  # type: ignore[no-untyped-def]
    from app.vault import VaultError, open_vault

    try:
        return open_vault()
    except (VaultError, ImportError) as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from None


def _read_value(name: str, console: Console) -> str:
    """The value from standard input: asked twice without echo at a terminal, else its first line."""
    if sys.stdin.isatty():
        import getpass

        first = getpass.getpass(f"Value of {name} (not shown): ")
        if first != getpass.getpass("Once more: "):
            console.print("[red]The two values differ; nothing was kept.[/red]")
            raise typer.Exit(2)
        return first
    line = sys.stdin.readline()
    return line.rstrip("\r\n")


@secrets_app.command("set")
def set_secret(name: str = typer.Argument(..., help="The secret's name, as goals refer to it: {{secret:NAME}}.")) -> None:
    """Keep a secret: its value is read from standard input (one line), never from the command line."""
    from agent.secrets import check_name, reference
    from app.vault import VaultError

    console = Console(stderr=True, highlight=False)
    try:
        name = check_name(name)
    except ValueError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from None
    vault = _vault(console)
    value = _read_value(name, console)
    try:
        vault.set(name, value)
    except (ValueError, VaultError) as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from None
    console.print(f"kept {escape(name)} in {escape(vault.where)}; use it as {escape(reference(name))}")


@secrets_app.command("list")
def list_secrets() -> None:
    """The secrets' names (never their values) and where they are kept."""
    from app.vault import VaultError

    console = Console(highlight=False)
    vault = _vault(console)
    try:
        names = vault.names()
    except VaultError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from None
    console.print(f"kept in {escape(vault.where)}")
    for n in names:
        console.print(f"  {escape(n)}")
    if not names:
        console.print("  (none yet: `tapwise secrets set NAME` reads one from standard input)")


@secrets_app.command("delete")
def delete_secret(name: str = typer.Argument(..., help="The secret's name.")) -> None:
    """Forget a secret."""
    from app.vault import VaultError

    console = Console(highlight=False)
    vault = _vault(console)
    try:
        found = vault.delete(name.strip())
    except VaultError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from None
    if not found:
        console.print(f"[yellow]no secret named {escape(name)}[/yellow]")
        raise typer.Exit(1)
    console.print(f"deleted {escape(name)}")
