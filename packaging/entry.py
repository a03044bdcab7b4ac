"""Entry point of the desktop bundle: the same CLI as the `tapwise` command."""

from app.cli import main

if __name__ == "__main__":
    main()
