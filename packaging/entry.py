"""Entry point of the desktop bundle: the same CLI as the `tapwise` command.

``--self-test`` is handled here before the CLI package (``app.cli``) is imported, so the
bundle's self-test starts without loading the command line's modules.
"""

import sys


def _main() -> None:
    if "--self-test" in sys.argv[1:]:
        from app.selftest import run_self_test

        sys.exit(run_self_test())
    from app.cli import main

    main()


if __name__ == "__main__":
    _main()
