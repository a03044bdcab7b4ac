"""``python -m app.cli``: the same as the ``tapwise`` console script."""

from app.cli import main

main()
