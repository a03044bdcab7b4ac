#!/usr/bin/env bash
# The whole test suite, as CI runs it: lint, import contracts, types, the full pytest
# run (Qt offscreen), then the Qt-free packages' tests in a virtualenv without PySide6.
set -euo pipefail
cd "$(dirname "$0")/.."
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
export MPLCONFIGDIR=${MPLCONFIGDIR:-$PWD/.cache/mpl}
export YOLO_CONFIG_DIR=${YOLO_CONFIG_DIR:-$PWD/.cache/ultralytics}
export YOLO_OFFLINE=1 HF_HUB_OFFLINE=1
say() { printf '\n\033[1m[test]\033[0m %s\n' "$*"; }

mkdir -p .cache
say "ruff"
.venv/bin/ruff check .
say "import contracts"
.venv/bin/lint-imports
say "mypy (vision, agent, app, widgets)"
.venv/bin/mypy
say "pytest (everything, Qt offscreen)"
.venv/bin/python -m pytest -q -p no:cacheprovider --basetemp="$PWD/.cache/pytest" "$@"

say "pytest without PySide6 (vision, agent and the other Qt-free packages)"
bash scripts/setup.sh --no-qt
if .venv-noqt/bin/python -c "import PySide6" 2>/dev/null; then
  echo "PySide6 is importable in .venv-noqt: the no-Qt job would prove nothing" >&2; exit 1
fi
noqt_dirs=$(ls -d tests/core tests/vision tests/agent tests/phone_virtual tests/evaluation tests/macros tests/reliability 2>/dev/null)
.venv-noqt/bin/python -m pytest -q -p no:cacheprovider -p no:pytest-qt --basetemp="$PWD/.cache/pytest-noqt" \
  -m "not gui and not adb and not llm and not slow" $noqt_dirs
