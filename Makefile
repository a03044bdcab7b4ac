# Two commands do all set-up on a fresh machine:
#   make run    set up (if needed) and open the workbench (virtual phone when no phone is connected)
#   make test   set up (if needed, including llama.cpp + SmolLM2 for the real-model tests) and run
#               the whole test suite, as CI does
# Both are safe and fast to run again.

.PHONY: run test setup lint

setup:
	@bash scripts/setup.sh

run: setup
	.venv/bin/tapwise $(ARGS)

test:
	@bash scripts/setup.sh --test
	@bash scripts/test.sh $(ARGS)

lint: setup
	.venv/bin/ruff check . && .venv/bin/lint-imports && .venv/bin/mypy
