"""Entry point of the desktop bundle: the same CLI as the `tapwise` command.

``--virtual-phone-process`` (how the window starts the virtual phone in a process of its
own when the bundle has no Python interpreter to run ``-m phone.virtual.serve``) and
``--self-test`` are handled here before the CLI package (``app.cli``) is imported, so the
bundle's self-test starts without loading the command line's modules.
"""

import sys


def _main() -> None:
    if sys.argv[1:2] == ["--virtual-phone-process"]:  # the window's served virtual phone (phone.virtual.launcher)
        from phone.virtual.serve import main as serve

        sys.exit(serve(sys.argv[2:]))
    if "--self-test" in sys.argv[1:]:
        from app.selftest import run_self_test

        sys.exit(run_self_test())
    from app.cli import main

    main()


if __name__ == "__main__":
    _main()
