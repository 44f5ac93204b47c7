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

# The local base image both box-image/build and npm/test build FROM, and the older Debian
# (11, glibc 2.31) npm/test also installs into: the oldest glibc the Linux binaries support.
DEBIAN_BASE=localhost/vyre-debian-base:bookworm
DEBIAN_OLD_BASE=localhost/vyre-debian-base:bullseye

# The Debian mirror apt already uses here (deb822 or one-line sources), else deb.debian.org.
host_mirror() {
  local m
  m=$(grep -hoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
    /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | tr -d ' ' || true)
  echo "${m:-http://deb.debian.org/debian}"
}

# A local Debian base image without a registry: debootstrap minbase of SUITE (default bookworm;
# npm/test also makes bullseye) with the official slim image's apt and dpkg settings, imported as
# BASE. WORK is a scratch folder (logs, rootfs). Used by box-image/build and npm/test.
# VYRE_BOX_MIRROR and VYRE_BOX_SECURITY_MIRROR choose the mirrors.
make_base() {
  local base="$1" work="$2" suite="${3:-bookworm}"
  local mirror="${VYRE_BOX_MIRROR:-$(host_mirror)}" rootfs="$work/rootfs" t=$SECONDS
  say "local base $base: debootstrap --variant=minbase $suite from $mirror"
  debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -n 30 "$work/debootstrap.log" >&2; die "debootstrap failed"; }

  # The official slim image's apt and dpkg settings: keep no package cache, no translations,
  # no docs or man pages in later installs.
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Acquire::Languages "none";' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$rootfs/etc/apt/apt.conf.d/docker-autoremove-suggests"
  printf '%s\n' 'Acquire::GzipIndexes "true";' 'Acquire::CompressionTypes::Order:: "gz";' \
    >"$rootfs/etc/apt/apt.conf.d/docker-gzip-indexes"
  echo 'force-unsafe-io' >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
  rm -f "$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${VYRE_BOX_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # What the slim image leaves out of what debootstrap installed.
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  rm -rf "$rootfs"/usr/share/{man,info,groff,lintian,linda}/* "$rootfs"/var/lib/apt/lists/* \
    "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/log/* \
    "$rootfs"/tmp/* "$rootfs"/root/.bash_history
  find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
  : >"$rootfs/etc/machine-id"

  tar --numeric-owner -C "$rootfs" -c . \
    | podman import --change 'CMD ["bash"]' - "$base" >/dev/null
  rm -rf "$rootfs"
  say "local base made in $((SECONDS - t)) s"
}
