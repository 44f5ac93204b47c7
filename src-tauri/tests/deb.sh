#!/usr/bin/env bash
# The desktop app's .deb, end to end, in a clean Debian bookworm container (rootful podman, a
# local debootstrap base as box-image/test): apt installs the .deb with the dependencies it
# declares from the Debian mirror (nothing else of Vyre's is in the image), then, as a normal
# user under Xvfb with a session bus and gnome-keyring (what a Linux desktop has):
#
#   the package holds /usr/bin/vyre-app, /usr/bin/vyre, the web app and the harness under
#   /usr/share/vyre and a desktop entry, and every library the app links is there (ldd);
#   `vyre-app` starts the embedded vyred in Local role; its window maps and signs in as a device
#   (a screenshot is saved); /v1/health says the version `vyre --version` says (Cargo.toml's);
#   /app/ serves the web app from /usr/share/vyre/ui; `vyre harness install` finds the plugin at
#   /usr/share/vyre/harness (a stand-in `claude` records what it is asked); the vault's key goes
#   into the keychain; SIGTERM (the menu's Quit) stops the app and the daemon; `apt-get remove`
#   leaves nothing of the package behind and keeps the person's VYRE_HOME.
#
# Usage: src-tauri/tests/deb.sh DEB      (DEB: from src-tauri/bundle)
# A release .deb's sizes are written to bench/results/desktop-sizes.txt.
# Needs root and podman (.ci/run installs them) and the Debian mirror apt uses here; skips,
# saying so, without podman. The screenshot lands in src-tauri/tests/screenshots/deb-window.png.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

if ! command -v podman >/dev/null 2>&1; then
  echo "skipped the .deb test: podman is not installed (apt-get install podman runc; .ci/run installs it)"
  exit 0
fi
# shellcheck source=../../box-image/lib.sh
. "$repo/box-image/lib.sh"
deb="${1:-}"
[ -f "$deb" ] || die "usage: src-tauri/tests/deb.sh DEB (make one with src-tauri/bundle)"
[ "$(id -u)" = 0 ] || die "run as root (rootful podman)"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml" | head -n1)

tag="${VYRE_DEB_TEST_TAG:-localhost/vyre-deb-test:bookworm}"
name="vyre-deb-test-$$"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/vyre-deb-test.XXXXXX")
cleanup() {
  local rc=$?
  podman rm -f -t 0 "$name" >/dev/null 2>&1 || true
  rm -rf "$scratch"
  [ -n "${BOX_CONF_DIR:-}" ] && rm -rf "$BOX_CONF_DIR"
  exit "$rc"
}
trap cleanup EXIT
need_podman
podman_conf
trap 'printf "FAIL src-tauri/tests/deb.sh line %s: %s\n" "$LINENO" "$BASH_COMMAND" >&2' ERR
checks=0
ok() { checks=$((checks + 1)); printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*" >&2; exit 1; }
start=$SECONDS

# The test image: the Debian base and what the test itself drives (an X server, a session bus,
# a secrets daemon, X tools, curl), never anything of Vyre's or the app's own libraries.
t=$SECONDS
if ! podman image exists "$DEBIAN_BASE"; then
  mkdir -p "$scratch/base"
  make_base "$DEBIAN_BASE" "$scratch/base" bookworm
fi
mkdir -p "$scratch/ctx"
cat >"$scratch/ctx/Containerfile" <<EOF
FROM $DEBIAN_BASE
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\
    xvfb xauth dbus dbus-x11 gnome-keyring x11-utils x11-apps curl ca-certificates procps \\
 && rm -rf /var/lib/apt/lists/* && useradd --create-home --shell /bin/bash person
EOF
podman build --format docker -t "$tag" -f "$scratch/ctx/Containerfile" "$scratch/ctx" >"$scratch/build.log" 2>&1 \
  || { tail -n 40 "$scratch/build.log" >&2; die "podman build of the test image failed"; }
mkdir -p "$scratch/in" "$scratch/out"
cp "$deb" "$scratch/in/vyre.deb"
chmod -R a+rX "$scratch/in"; chmod 777 "$scratch/out"
podman run -d --name "$name" -v "$scratch/in:/in:ro" -v "$scratch/out:/out" "$tag" sleep infinity \
  2> >(grep -v 'systemd connection' >&2) >/dev/null
as_root() { podman exec "$name" "$@"; }
as_person() { podman exec --user person -e HOME=/home/person -w /home/person "$name" "$@"; }
if as_root sh -c 'command -v vyre || command -v vyre-app || ldconfig -p | grep -q libwebkit2gtk-4.1'; then
  fail "the clean image already has vyre or WebKitGTK"
fi
ok "a clean Debian bookworm container (image ready in $((SECONDS - t)) s), without WebKitGTK or Vyre"

# --- apt install the .deb, with what it declares ------------------------------------------------
t=$SECONDS
as_root sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends /in/vyre.deb' \
  >"$scratch/install.log" 2>&1 || { tail -n 40 "$scratch/install.log" >&2; fail "apt-get install ./vyre.deb failed"; }
pulled=$(grep -oE '[0-9]+ newly installed' "$scratch/install.log" | cut -d' ' -f1 || echo "?")
depends=$(as_root dpkg-query -W -f '${Depends}' vyre)
for d in libwebkit2gtk-4.1-0 libgtk-3-0 bubblewrap; do
  grep -q "$d" <<<"$depends" || fail "the package does not depend on $d: $depends"
done
ok "apt-get install ./vyre.deb ($(du -h "$deb" | cut -f1)) in $((SECONDS - t)) s: $pulled packages; Depends: $(cut -c1-100 <<<"$depends")..."

for f in /usr/bin/vyre-app /usr/bin/vyre; do
  as_root sh -c "test -x $f && head -c 4 $f | od -An -c | grep -q 'E   L   F'" || fail "no executable ELF at $f"
done
as_root test -f /usr/share/vyre/ui/index.html || fail "no web app at /usr/share/vyre/ui"
as_root test -f /usr/share/vyre/harness/.claude-plugin/plugin.json || fail "no harness at /usr/share/vyre/harness"
as_root test -f /usr/share/vyre/harness/.mcp.json || fail "the harness lost its .mcp.json"
as_root test -f /usr/share/vyre/harness/hosted/.claude-plugin/plugin.json || fail "the harness lost the part sessions load (hosted/)"
desktop=$(as_root sh -c 'grep -l "^Exec=vyre-app" /usr/share/applications/*.desktop') || fail "no desktop entry runs vyre-app"
missing=$(as_root sh -c 'ldd /usr/bin/vyre-app /usr/bin/vyre | grep "not found" || true')
[ -z "$missing" ] || fail "libraries the app links are missing: $missing"
said=$(as_person vyre --version)
[ "$said" = "vyre $version" ] || fail "vyre --version said \"$said\", not \"vyre $version\" (Cargo.toml)"
ok "the package holds /usr/bin/vyre-app and vyre ($said), /usr/share/vyre/{ui,harness} and $desktop; ldd finds every library"

# The sizes (bench/README.md): the .deb, what it installs, and its parts.
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
installed_kib=$(as_root dpkg-query -W -f '${Installed-Size}' vyre)
sizes=$(as_root sh -c 'stat -c %s /usr/bin/vyre-app /usr/bin/vyre; du -sb /usr/share/vyre/ui /usr/share/vyre/harness | cut -f1' | tr '\n' ' ')
read -r app_b vyre_b ui_b harness_b <<<"$sizes"
# Only a release .deb's figures are what a person downloads; a dev one's are printed, not kept.
sizes_file=/dev/null
case "$deb" in */release/bundle/*) sizes_file="$repo/bench/results/desktop-sizes.txt" ;; esac
{
  echo "# The desktop .deb of vyre $version, made by src-tauri/bundle (release)"
  echo "# at commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?') on $(date -u +%Y-%m-%d); MB = 10^6 bytes."
  echo "deb file        $(mb "$(stat -c %s "$deb")")"
  echo "installed       $(mb $((installed_kib * 1024)))"
  echo "/usr/bin/vyre-app  $(mb "$app_b")"
  echo "/usr/bin/vyre      $(mb "$vyre_b")"
  echo "web app (ui)    $(mb "$ui_b")"
  echo "harness         $(mb "$harness_b")"
  echo "dependencies apt pulled into a minimal Debian 12: $pulled packages"
} >"$sizes_file"
ok "sizes: the .deb $(mb "$(stat -c %s "$deb")"), vyre-app $(mb "$app_b"), vyre $(mb "$vyre_b")${sizes_file#/dev/null}"

# --- the app, as a person on a desktop -----------------------------------------------------------
# The app runs under Xvfb on display :99 with its own session bus and an unlocked gnome-keyring;
# the checks below reach the same display (XAUTHORITY) from podman exec.
as_person sh -c 'mkdir -p bin && cat >bin/claude <<"EOF"
#!/bin/sh
echo "$*" >>"$HOME/claude-calls"
[ "$1" = --version ] && echo "2.1.328 (Claude Code)"
exit 0
EOF
chmod +x bin/claude'
podman exec -d --user person -e HOME=/home/person -w /home/person "$name" \
  xvfb-run -n 99 -f /home/person/.Xauthority -s "-screen 0 1400x900x24" dbus-run-session -- sh -c '
    printf test | gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
    sleep 1
    RUST_LOG=info vyre-app >"$HOME/app.log" 2>&1 &
    echo $! >"$HOME/app.pid"
    wait' >/dev/null
on_display() { podman exec --user person -e HOME=/home/person -e DISPLAY=:99 -e XAUTHORITY=/home/person/.Xauthority "$name" "$@"; }
wait_for() { # wait_for SECONDS COMMAND...
  local n=$(($1 * 5)); shift
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}
t=$SECONDS
wait_for 90 as_person vyre status || { as_person cat app.log >&2 || true; fail "the app's embedded vyred did not answer"; }
status=$(as_person vyre status)
grep -q "role local" <<<"$status" || fail "vyred is not in Local role: $status"
pid=$(as_person cat app.pid)
ok "vyre-app (pid $pid) started the embedded vyred in $((SECONDS - t)) s: $(head -n1 <<<"$status")"

wait_for 30 on_display xwininfo -name Vyre || { as_person cat app.log >&2 || true; fail "no window named Vyre on the display"; }
signed_in() { as_person vyre devices list | grep -q onboarding; }
wait_for 30 signed_in || fail "the window did not sign in as a device"
sleep 4
on_display sh -c 'xwd -root -silent >/out/window.xwd' || fail "xwd failed"
mkdir -p "$here/screenshots"
if command -v convert >/dev/null 2>&1; then
  convert "xwd:$scratch/out/window.xwd" "$here/screenshots/deb-window.png"
  shot="$here/screenshots/deb-window.png"
else
  cp "$scratch/out/window.xwd" "$here/screenshots/deb-window.xwd"
  shot="$here/screenshots/deb-window.xwd"
fi
ok "the window maps and signs in as a device (screenshot: ${shot#"$repo"/})"

addr=$(as_person cat .vyre/vyred.addr)
health=$(as_person curl -fsS "http://$addr/v1/health") || fail "/v1/health did not answer at $addr"
grep -q "\"version\":\"$version\"" <<<"$health" || fail "/v1/health does not say version $version: $health"
page=$(as_person curl -fsS "http://$addr/app/") || fail "/app/ did not answer"
asset=$(grep -m1 -oE '/app/assets/[^"]+\.js' <<<"$page" || true)
[ -n "$asset" ] || fail "/app/ is not the web app: $(cut -c1-200 <<<"$page")"
as_person curl -fsS -o /dev/null "http://$addr$asset" || fail "$asset did not answer 200"
ok "/v1/health says $version as vyre --version does; /app/ serves the web app from /usr/share/vyre/ui ($asset)"

harness=$(as_person sh -c 'PATH=$HOME/bin:$PATH vyre harness install' 2>&1) || fail "vyre harness install failed: $harness"
calls=$(as_person cat claude-calls)
grep -qx "plugin marketplace add /usr/share/vyre/harness" <<<"$calls" \
  || fail "vyre harness install did not add the packaged plugin: $calls / $harness"
ok "vyre harness install finds the plugin at /usr/share/vyre/harness"

printf 'value-for-the-deb-test' | podman exec -i --user person -e HOME=/home/person -w /home/person "$name" \
  vyre vault put deb-item >/dev/null || fail "vyre vault put failed"
vault=$(as_person vyre vault status)
grep -q keychain <<<"$vault" || fail "the vault's key is not in the keychain: $vault"
as_person test ! -e .vyre/vault/master.key || fail "a key file was written beside the keychain"
ok "the vault's key went into the desktop's keychain (no key file)"

as_person kill -TERM "$pid"
gone() { ! as_person kill -0 "$pid"; }
wait_for 30 gone || fail "the app did not quit on SIGTERM"
if as_person vyre status >/dev/null 2>&1; then fail "vyred still answers after the app quit"; fi
as_person test ! -e .vyre/vyred.sock || fail "the socket is still there"
ok "SIGTERM (the menu's Quit) stopped the app and its vyred"

# --- remove ------------------------------------------------------------------------------------
as_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get remove -y vyre' >"$scratch/remove.log" 2>&1 \
  || { cat "$scratch/remove.log" >&2; fail "apt-get remove vyre failed"; }
left=$(as_root sh -c 'ls -d /usr/bin/vyre /usr/bin/vyre-app /usr/share/vyre /usr/share/applications/*yre*.desktop 2>/dev/null || true')
[ -z "$left" ] || fail "apt-get remove left: $left"
as_person test -f .vyre/vyre.db || fail "the person's VYRE_HOME did not survive the removal"
ok "apt-get remove vyre removes the app, vyre and /usr/share/vyre, and keeps ~/.vyre"

echo "src-tauri/tests/deb.sh: $checks checks passed in $((SECONDS - start)) s"
