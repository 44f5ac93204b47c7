# Shared by box-image/build and box-image/test (sourced, not run).

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# podman and what the local base needs, from Debian, when missing (about 10 s).
need_podman() {
  local missing=()
  command -v podman >/dev/null 2>&1 || missing+=(podman uidmap fuse-overlayfs slirp4netns)
  command -v runc >/dev/null 2>&1 || missing+=(runc)
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || die "needs ${missing[*]} (apt-get install, as root)"
  say "apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# A containers.conf with this kind of machine's workarounds, in a temp dir, unless the caller
# already set CONTAINERS_CONF: runc (crun refuses a hybrid cgroup layout), and default ulimits
# (podman cannot raise rlimits here, so it must not try to set them to its own defaults).
podman_conf() {
  [ -n "${CONTAINERS_CONF:-}" ] && return 0
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/vyre-box-conf.XXXXXX")
  cat >"$dir/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
EOF
  export CONTAINERS_CONF="$dir/containers.conf"
  BOX_CONF_DIR="$dir"
}
