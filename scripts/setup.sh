#!/usr/bin/env bash
# Prepare this machine as a local seat: packages, build, image, podman API service,
# and the seat config at the default path. Idempotent; a second run takes seconds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PACKAGES=(cmake ninja-build g++ pkg-config curl jq python3 git time
          libcpp-httplib-dev libssh-dev nlohmann-json3-dev libtomlplusplus-dev libcli11-dev doctest-dev
          libssl-dev  # launcher/wall/tls.cc: the session CA and both TLS legs of inject mode
          zstd  # tests/mock_model/server.py: codex in ChatGPT mode sends its bodies zstd-compressed
          openssl  # tests/mock_model/test_ca.py, bench/inject.py: the test CA the TLS mock and the bench serve with
          zlib1g-dev  # gitscan/objects.cc: the loose git objects a session wrote (docs/DECISIONS.md)
          gdb  # tests/integration/test_warm_orphan.py: a launch held between its look at the seat and its lock
          podman runc runsc conmon catatonit uidmap slirp4netns fuse-overlayfs netavark aardvark-dns
          debootstrap hyperfine openssh-client npm iproute2 python3-yaml
          ccache  # the .deb's compile reuses the dev build's objects (scripts/lib.sh asbx_cmake_flags)
          tmux  # tests/integration/test_interactive.py: terminals a person would use
          dpkg-dev lintian man-db  # scripts/package.sh (dpkg-buildflags, dpkg-shlibdeps), the .deb's checks
          clang libclang-rt-dev llvm)  # fuzz/ (libFuzzer, sanitizer runtimes, llvm-symbolizer)

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  # nodesource's nodejs provides npm itself; do not fight it.
  if command -v npm >/dev/null 2>&1; then missing=("${missing[@]/npm}"); fi
  local wanted=(); for p in "${missing[@]}"; do [ -n "$p" ] && wanted+=("$p"); done
  [ ${#wanted[@]} -eq 0 ] && return 0
  asbx_log "installing: ${wanted[*]}"
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${wanted[@]}" >&2
}

build() {
  local flags; mapfile -t flags < <(cd "$ASBX_ROOT" && asbx_cmake_flags)
  cmake -S "$ASBX_ROOT" -B "$ASBX_BUILD" -G Ninja "${flags[@]}" >/dev/null || return
  ninja -C "$ASBX_BUILD" >&2
}

# The embedded local seat: the default config path of the user running this.
write_seat_config() {
  local dir=${XDG_CONFIG_HOME:-$HOME/.config}/agent-sandbox
  local file=$dir/seat.toml
  mkdir -p "$dir"
  if [ -f "$file" ] && ! grep -q '^# written by scripts/setup.sh' "$file"; then
    asbx_log "keeping your own $file"
    return 0
  fi
  cat >"$file" <<CONF
# written by scripts/setup.sh: the local seat (this machine's rootful podman service)
socket = "$ASBX_SOCKET"
image = "$ASBX_IMAGE"
CONF
  # --isolation gvisor: the build tree's runsc wrappers unless the package's are installed
  [ -x /usr/libexec/agent-sandbox/runsc-ptrace ] ||
    printf 'runsc_dir = "%s"\n' "$ASBX_BUILD/libexec/agent-sandbox" >>"$file"
}

[ "$(id -u)" -eq 0 ] || asbx_die "run as root (it installs packages and starts the podman service)"
install_packages
asbx_podman_after_reboot /run/libpod
# The image build (debootstrap, apt, npm: mostly waiting on the mirrors) runs beside the compile.
"$ASBX_ROOT/scripts/build-image.sh" >&2 &
image_pid=$!
build_rc=0 image_rc=0
build || build_rc=$?
wait "$image_pid" || image_rc=$?
[ "$build_rc" -eq 0 ] || asbx_die "the build failed (above)"
[ "$image_rc" -eq 0 ] || asbx_die "scripts/build-image.sh failed (above)"
"$ASBX_ROOT/scripts/podman-service.sh" start
write_seat_config
