#!/usr/bin/env bash
# Measure the built bundle (dist/tapwise): size on disk, CLI start-up, self-test time, and
# time until the main window is mapped on an X server (a private Xvfb when one is
# installed).  Used for the figures in packaging/README.md; run after packaging/build.sh.
#
#   bash packaging/measure.sh [RUNS]     (RUNS: repetitions per figure, default 3)
#   TAPWISE_BIN=.venv/bin/tapwise bash packaging/measure.sh   the same figures for a source install
set -euo pipefail
cd "$(dirname "$0")/.."
BUNDLE=dist/tapwise
RUNS=${1:-3}
BIN=${TAPWISE_BIN:-$BUNDLE/tapwise}
[ -x "$BIN" ] || { echo "no $BIN: run packaging/build.sh first" >&2; exit 1; }
ADB="$BUNDLE/_internal/adbutils/binaries/adb"
[ -x "$ADB" ] || ADB=$(command -v adb || echo true)
FRESH=$(mktemp -d)
XVFB_PID=""
APP_PID=""
ADB_PORT=$((15000 + RANDOM % 20000))
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null || true
  "$ADB" -P "$ADB_PORT" kill-server >/dev/null 2>&1 || true
  [ -n "$XVFB_PID" ] && { kill "$XVFB_PID" 2>/dev/null; wait "$XVFB_PID" 2>/dev/null; } || true
  rm -rf "$FRESH"
}
trap cleanup EXIT
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
run_env=(env -i PATH=/usr/bin:/bin HOME="$FRESH" LANG=C.UTF-8 XDG_RUNTIME_DIR="$FRESH"
  ANDROID_ADB_SERVER_PORT="$ADB_PORT")

echo "measuring $BIN"
[ "$BIN" = "$BUNDLE/tapwise" ] && echo "size: $(du -sh "$BUNDLE" | cut -f1) ($(find "$BUNDLE" -type f | wc -l) files)"
echo "cpu: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

for i in $(seq "$RUNS"); do
  t0=$(now_ms); "${run_env[@]}" "$BIN" --version >/dev/null; echo "tapwise --version: $(( $(now_ms) - t0 )) ms"
done

SELFTEST=("$BIN" --self-test)
# a source install runs the self-test module directly (the same code as `tapwise --self-test`)
[ "$BIN" = "$BUNDLE/tapwise" ] || SELFTEST=("$(dirname "$BIN")/python" -m app.selftest)
for i in $(seq "$RUNS"); do
  t0=$(now_ms)
  "${run_env[@]}" QT_QPA_PLATFORM=offscreen "${SELFTEST[@]}" >"$FRESH/selftest.log" 2>&1 \
    || { cat "$FRESH/selftest.log"; exit 1; }
  echo "self-test pass (process start to exit): $(( $(now_ms) - t0 )) ms; $(tail -1 "$FRESH/selftest.log")"
done

if ! command -v Xvfb >/dev/null || ! command -v xwininfo >/dev/null; then
  echo "first window: skipped (needs Xvfb and xwininfo)"; exit 0
fi
DISPLAY_NUM=${MEASURE_DISPLAY:-:98}
Xvfb "$DISPLAY_NUM" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 &
XVFB_PID=$!
for _ in $(seq 50); do xwininfo -display "$DISPLAY_NUM" -root >/dev/null 2>&1 && break; sleep 0.1; done
for i in $(seq "$RUNS"); do
  t0=$(now_ms)
  "${run_env[@]}" DISPLAY="$DISPLAY_NUM" QT_QPA_PLATFORM=xcb "$BIN" --device sim >"$FRESH/gui.log" 2>&1 &
  APP_PID=$!
  shown=""
  while kill -0 "$APP_PID" 2>/dev/null && [ $(( $(now_ms) - t0 )) -lt 60000 ]; do
    # the main window: title "Tapwise", WM_CLASS ("tapwise" "Tapwise"), and mapped (viewable)
    win=$(xwininfo -display "$DISPLAY_NUM" -root -tree 2>/dev/null | grep '"Tapwise": ("tapwise" "Tapwise")' \
      | awk '{print $1}' | head -1 || true)
    if [ -n "$win" ] && xwininfo -display "$DISPLAY_NUM" -id "$win" 2>/dev/null | grep -q "IsViewable"; then
      shown=$(( $(now_ms) - t0 )); break
    fi
    sleep 0.05
  done
  kill "$APP_PID" 2>/dev/null || true; wait "$APP_PID" 2>/dev/null || true; APP_PID=""
  if [ -n "$shown" ]; then echo "first window mapped (xcb on Xvfb): $shown ms"; else
    echo "first window: not seen within 60 s"; tail -5 "$FRESH/gui.log"; exit 1; fi
done
