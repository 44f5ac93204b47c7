#!/usr/bin/env bash
# The Mac app's smoke test, on Linux under Xvfb with a session bus and gnome-keyring (what the
# Mac has natively): the app starts the embedded vyred, its window renders the web app (a
# screenshot is saved), Alt+Space toggles Lumen, the vault's key goes into the keychain and is
# read back by the next start, and quitting stops the daemon.
#
# Needs: the built `vyre-app` and `vyre` (VYRE_APP_BIN, VYRE_BIN), the built ui (ui/dist),
# xvfb-run, dbus-run-session, gnome-keyring-daemon, xdotool, xwininfo, imagemagick's `import`.
# Screenshots land in src-tauri/tests/screenshots/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
app="${VYRE_APP_BIN:-$target/debug/vyre-app}"
vyre="${VYRE_BIN:-$target/debug/vyre}"
shots="$here/screenshots"
rm -rf "$shots"; mkdir -p "$shots"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch/home" VYRE_HOME="$scratch/vyre" XDG_RUNTIME_DIR="$scratch/run" \
  XDG_DATA_HOME="$scratch/data" XDG_CONFIG_HOME="$scratch/config" XDG_CACHE_HOME="$scratch/cache" \
  VYRE_UI_DIR="$root/ui/dist" VYRE_PORT=0 RUST_LOG=info APP="$app" VYRE="$vyre" SHOTS="$shots"
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

xvfb-run -a -s "-screen 0 1400x900x24" dbus-run-session -- bash -euo pipefail -c '
  printf "test" | gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
  sleep 1
  say() { printf "smoke: %s\n" "$*"; }
  wait_for() { # wait_for <seconds> <command...>
    local n=$(( $1 * 10 )); shift
    for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
    return 1
  }
  start_app() {
    "$APP" > "$VYRE_HOME/app-$1.log" 2>&1 &
    echo $! > "$VYRE_HOME/app.pid"
    wait_for 60 "$VYRE" status || { cat "$VYRE_HOME/app-$1.log"; say "the embedded vyred did not answer"; exit 1; }
  }

  mkdir -p "$VYRE_HOME"
  start_app 1
  pid=$(cat "$VYRE_HOME/app.pid")
  "$VYRE" status | grep -q "role local" || { say "vyred is not in Local role"; exit 1; }
  say "the embedded vyred answers (role local)"

  # The window shows the web app once it is signed in (the onboarding, with no owner yet).
  wait_for 30 xwininfo -name Vyre || { say "no main window"; exit 1; }
  wait_for 10 sh -c "\"$VYRE\" devices list | grep -q onboarding" || { "$VYRE" devices list; say "the window did not sign in"; exit 1; }
  # The page got its key (ADR 0009): its calls carry cookie and key, so the device was seen.
  app_devices() { "$VYRE" devices list | python3 -c "import json,sys; print(*sorted(d[\"id\"] + (\":seen\" if d[\"last_seen_at\"] else \"\") for d in json.load(sys.stdin) if d[\"kind\"] in (\"onboarding\", \"browser\") and not d[\"revoked_at\"]))"; }
  app_seen() { app_devices | grep -q :seen; }
  wait_for 20 app_seen || { "$VYRE" devices list; say "the page did not reach vyred with its cookie and key"; exit 1; }
  first_device=$(app_devices | cut -d: -f1)
  sleep 5
  import -window root "$SHOTS/main-window.png"
  say "the window signed in as a device and shows the app with its key (screenshot saved)"

  # Alt+Space shows Lumen, and again hides it.
  xdotool key alt+space; sleep 1.5
  xwininfo -name Lumen | grep -q "IsViewable" || { xwininfo -name Lumen || true; say "Lumen did not show"; exit 1; }
  import -window root "$SHOTS/lumen.png"
  xdotool key alt+space; sleep 1
  xwininfo -name Lumen | grep -q "IsUnMapped" || { say "Lumen did not hide"; exit 1; }
  say "Alt+Space shows and hides Lumen"

  # The vault key goes into the keychain (Local role), and the next start reads it back.
  printf "value-for-the-smoke-test" | "$VYRE" vault put smoke-item >/dev/null
  "$VYRE" vault status | grep -q "keychain" || { "$VYRE" vault status; say "the vault key is not in the keychain"; exit 1; }
  [ ! -e "$VYRE_HOME/vault/master.key" ] || { say "a key file was written"; exit 1; }

  # Quitting (SIGTERM, as the menu'"'"'s Quit) stops the daemon: the socket goes, the lock frees.
  kill -TERM "$pid"
  wait_for 30 sh -c "! kill -0 $pid" || { say "the app did not quit"; exit 1; }
  [ ! -e "$VYRE_HOME/vyred.sock" ] || { say "the socket is still there"; exit 1; }
  ! "$VYRE" status >/dev/null 2>&1 || { say "vyred still answers"; exit 1; }
  say "quitting stopped the embedded vyred"

  start_app 2
  pid=$(cat "$VYRE_HOME/app.pid")
  "$VYRE" vault status | grep -q "unlocked" || { "$VYRE" vault status; say "the vault did not open from the keychain"; exit 1; }
  "$VYRE" vault list | grep -q smoke-item || { say "the item is gone"; exit 1; }
  say "the next start opened the vault with the key from the keychain"

  # The next start signs the windows in again and revokes the device of the first: one device.
  # Wait for the renewed state itself: the new device is created a moment before the old one
  # is revoked, so "some device was seen" can still be the first one.
  renewed() { d=$(app_devices); [ "$(echo $d | wc -w)" = 1 ] && [ "${d%%:*}" != "$first_device" ] && [ "${d#*:}" = seen ]; }
  wait_for 20 renewed || {
    "$VYRE" devices list
    [ "$(app_devices | wc -w)" = 1 ] || { say "the app holds more than one device"; exit 1; }
    say "the window did not sign in again with a renewed device"; exit 1
  }
  say "the next start signed the window in again and revoked the old device"

  # A second app for the same home attaches instead of starting another vyred.
  "$APP" > "$VYRE_HOME/app-3.log" 2>&1 &
  second=$!
  sleep 5
  grep -q "attached to the running vyred" "$VYRE_HOME/app-3.log" "$VYRE_HOME"/logs/* 2>/dev/null || { say "the second app did not attach"; cat "$VYRE_HOME/app-3.log"; exit 1; }
  kill -TERM "$second"; wait_for 20 sh -c "! kill -0 $second"
  "$VYRE" status >/dev/null || { say "quitting an attached app stopped the daemon"; exit 1; }
  say "a second app attaches, and quitting it leaves the daemon running"
  kill -TERM "$pid"; wait_for 30 sh -c "! kill -0 $pid"
'
echo "smoke: passed; screenshots in $shots"
