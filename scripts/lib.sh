# Shared settings for the project's scripts. Source it; it defines names and exports settings only.
# shellcheck shell=bash
ASBX_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Build directory (tests and demo use the executables from here).
ASBX_BUILD=${ASBX_BUILD:-$ASBX_ROOT/build}
# Machine-wide cache shared by every clone (debootstrap trees, npm downloads).
ASBX_CACHE=${ASBX_CACHE:-/var/cache/agent-sandbox}
# Runtime state of the rootful harness service (socket, pid file, logs).
ASBX_RUN=${ASBX_RUN:-/run/agent-sandbox}
ASBX_SOCKET=$ASBX_RUN/podman.sock
# containers.conf for every podman this project starts (runc: crun refuses hybrid cgroups here).
export CONTAINERS_CONF=$ASBX_ROOT/scripts/containers.conf
# Image names (override to build a variant beside the shared tags).
ASBX_BASE_IMAGE=${ASBX_BASE_IMAGE:-localhost/agent-sandbox-base:bookworm}
ASBX_TOOLCHAINS_IMAGE=${ASBX_TOOLCHAINS_IMAGE:-localhost/agent-sandbox-toolchains:bookworm}
ASBX_IMAGE=${ASBX_IMAGE:-localhost/agent-sandbox:latest}
ASBX_SEAT_IMAGE=${ASBX_SEAT_IMAGE:-localhost/agent-sandbox-seat:bookworm}  # another tag: a private seat image
# The unprivileged user used for rootless runs on this machine.
ASBX_ROOTLESS_USER=asbx-rootless

asbx_log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
asbx_die() { asbx_log "error: $*"; exit 1; }
# The script's usage: its header comment (line 2 to the first line that is not a comment), the
# comment marks taken off.
asbx_help() { sed -n '2,/^[^#]/ s/^# \{0,1\}//p' "$0"; }
# The usage on stderr, for a call the script cannot take: exit 2.
asbx_usage() { asbx_help >&2; exit 2; }

# A process this project started is recorded as "pid start-time boot-id" and signalled only while
# all three still match: a record from before a reboot (a machine restored from a disk image keeps
# /run) or a pid reused since names someone else's process.
asbx_boot_id() { cat /proc/sys/kernel/random/boot_id; }
asbx_pid_start() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; s=${s##*) }; read -ra f <<<"$s"; echo "${f[19]}"; }
asbx_pid_record() { printf '%s %s %s\n' "$1" "$(asbx_pid_start "$1")" "$(asbx_boot_id)" >"$2"; }
# Prints the recorded pid while that very process runs.
asbx_pid_alive() {
  local pid start boot now
  [[ -f $1 ]] && read -r pid start boot <"$1" && [[ -n $boot && $boot == "$(asbx_boot_id)" ]] || return 1
  now=$(asbx_pid_start "$pid") && [[ $now == "$start" ]] && echo "$pid"
}

# Podman keeps its state in a runtime dir it expects to be emptied by a reboot (tmpfs); a dir
# that outlived one (a disk image restored with /run in it) still says "running" for containers
# whose processes are gone, and podman waits on their conmon pids, which may now be anyone's. Its
# "alive" file older than this boot: remove it (and a rootless pause.pid), so that podman resets
# its state at its next call as it does after a reboot. Only files of a previous boot are touched.
asbx_podman_after_reboot() {
  local tmp=$1 btime
  btime=$(awk '/^btime/ {print $2}' /proc/stat)
  [[ -f $tmp/alive ]] && (($(stat -c %Y "$tmp/alive") < btime)) || return 0
  asbx_log "$tmp is from before this boot: podman will reset its state"
  rm -f "$tmp/alive" "$tmp/pause.pid"
}

# Drop a temporary image tag; remove the image too unless it already carries the final name.
asbx_drop_temp_tag() {
  local tmp_tag=$1 final=$2 id
  [[ -n $tmp_tag ]] || return 0
  id=$(podman image inspect --format '{{.Id}}' "$tmp_tag" 2>/dev/null) || return 0
  podman untag "$id" "$tmp_tag" >/dev/null 2>&1 || true
  [[ $(podman image inspect --format '{{.Id}}' "$final" 2>/dev/null) == "$id" ]] ||
    podman rmi "$id" >/dev/null 2>&1 || true
}

# The project's containers.conf, copied where USER's podman can read it (the clone itself may
# sit in a directory other users cannot traverse). Prints the copy's path.
asbx_user_containers_conf() {
  local user=$1 home
  home=$(getent passwd "$user" | cut -d: -f6)
  install -d -o "$user" -g "$user" "$home/.config" "$home/.config/containers"
  install -m 0644 -o "$user" -g "$user" "$CONTAINERS_CONF" "$home/.config/containers/asbx-containers.conf"
  echo "$home/.config/containers/asbx-containers.conf"
}

# Exit trap for scripts that make temporary things: asbx_trap_exit [HOOK]. On exit it runs HOOK
# (a cleanup function of the script), drops the temporary tag of an image build that did not
# finish (asbx_temp_tag) and logs a failure's exit code. INT and TERM exit 130, so the trap runs
# on them too.
asbx_tmp_tag=
asbx_tmp_final=
# shellcheck disable=SC2120  # HOOK is optional
asbx_trap_exit() {
  asbx_exit_hook=${1:-}
  trap asbx_on_exit EXIT
  trap 'exit 130' INT TERM
}
asbx_on_exit() {
  local rc=$?
  [[ -z $asbx_exit_hook ]] || "$asbx_exit_hook"
  asbx_rm_tmp_dir "$asbx_npm_tmp"
  asbx_drop_temp_tag "$asbx_tmp_tag" "$asbx_tmp_final"
  [[ $rc -eq 0 ]] || asbx_log "failed (exit $rc)"
}

# asbx_rm_tmp_dir DIR: remove a temporary directory, if DIR is set and exists.
asbx_rm_tmp_dir() {
  [[ -z $1 || ! -d $1 ]] || rm -rf --one-file-system "$1"
}

# asbx_npm_install PREFIX MESSAGE NPM_ARG...: log MESSAGE and npm install NPM_ARGs (no scripts, no
# audit; npm's output on stderr) into asbx_npm_tmp, a new directory beside PREFIX. The caller checks
# it and writes what it needs, then asbx_npm_publish renames it PREFIX; until then the exit trap
# (asbx_trap_exit) removes it, so a broken install is never reused.
asbx_npm_tmp=
asbx_npm_install() {
  local parent
  parent=$(dirname "$1")
  command -v npm >/dev/null || asbx_die "npm not found (apt-get install -y npm)"
  mkdir -p "$parent"
  asbx_npm_tmp=$(mktemp -d "$parent/.install.XXXXXX")
  asbx_log "$2"
  npm install --prefix "$asbx_npm_tmp" --no-audit --no-fund --no-save --ignore-scripts "${@:3}" >&2 ||
    asbx_die "npm install failed (is the npm registry reachable? npm config get registry: $(npm config get registry 2>/dev/null))"
}
asbx_npm_publish() {
  rm -rf --one-file-system "$1"
  mv "$asbx_npm_tmp" "$1"
  asbx_npm_tmp=
}

# --- Image builds (build-base.sh, build-toolchains.sh, build-image.sh) ---
# asbx_force_arg ARG...: the arguments of a build that takes only --force and --help; sets force
# to 1 or 0.
# shellcheck disable=SC2034  # force is for the caller
asbx_force_arg() {
  local arg
  force=0
  for arg in "$@"; do
    case $arg in
      --force) force=1 ;;
      -h|--help) asbx_help; exit 0 ;;
      *) asbx_die "unknown argument: $arg (see --help)" ;;
    esac
  done
}

# The id of IMAGE, or of its LABEL; empty when the image or the label is missing.
asbx_image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }
asbx_image_label() { podman image inspect --format "{{index .Labels \"$2\"}}" "$1" 2>/dev/null || true; }

# asbx_image_current IMAGE LABEL VALUE WHAT: true when IMAGE carries VALUE in LABEL (and says it
# is up to date); else says what it carries instead, if anything. WHAT names VALUE in the log.
asbx_image_current() {
  local image=$1 label=$2 want=$3 what=$4 have
  have=$(asbx_image_label "$image" "$label")
  if [[ $have == "$want" ]]; then
    asbx_log "$image is up to date ($what ${want:0:16})"
    return 0
  fi
  [[ -z $have ]] || asbx_log "$image has $what ${have:0:16}, want ${want:0:16}: rebuilding"
  return 1
}

# asbx_temp_tag IMAGE: set asbx_tmp_tag, the tag to make IMAGE under. Until asbx_publish_image
# names the result IMAGE, the exit trap drops it, so an interrupted build leaves no half-made IMAGE.
asbx_temp_tag() { asbx_tmp_final=$1; asbx_tmp_tag=${1%:*}-building:$$; }

# asbx_publish_image IMAGE ID LABEL VALUE: name the image ID (made under asbx_tmp_tag) IMAGE, drop
# the temporary tag, check that IMAGE is ID carrying VALUE in LABEL, and remove the image IMAGE
# named before (nameless now, it would only hold disk space; a failure means it is still in use).
asbx_publish_image() {
  local image=$1 id=$2 label=$3 value=$4 old_id got
  old_id=$(asbx_image_id "$image")
  podman tag "$id" "$image" || asbx_die "podman tag failed"
  # 'podman untag IMAGE' alone would drop every name: name the one to remove.
  podman untag "$id" "$asbx_tmp_tag" || asbx_die "podman untag $asbx_tmp_tag failed"
  asbx_tmp_tag=
  got=$(podman image inspect --format "{{.Id}} {{index .Labels \"$label\"}}" "$image") ||
    asbx_die "$image missing after tagging"
  [[ $got == "$id $value" ]] || asbx_die "$image is '$got', expected '$id $value'"
  if [[ -n $old_id && $old_id != "$id" ]]; then
    podman rmi "$old_id" >/dev/null 2>&1 || true
  fi
}

# asbx_build_image IMAGE LABEL VALUE CTX FAILURE [OPTION...]: podman build CTX/Containerfile
# with LABEL=VALUE and the OPTIONs under a temporary tag (output to stderr; FAILURE is the error
# when it fails), then publish it as IMAGE.
asbx_build_image() {
  local image=$1 label=$2 value=$3 ctx=$4 failure=$5 id start=$SECONDS
  shift 5
  asbx_temp_tag "$image"
  # --iidfile gives the id without parsing the build's output.
  podman build --pull=never --layers "$@" --label "$label=$value" --iidfile "$ctx/.iid" \
    -t "$asbx_tmp_tag" -f "$ctx/Containerfile" "$ctx" >&2 || asbx_die "$failure"
  id=$(<"$ctx/.iid"); id=${id#sha256:}
  asbx_publish_image "$image" "$id" "$label" "$value"
  asbx_log "built $image (${id:0:12}) in $((SECONDS - start)) s"
}

# The compile of the .deb (Debian's flags, BIND_NOW added, as lintian asks), which the dev build
# uses too: the tests run what ships, and through ccache the package's compile is the dev build's
# objects again (paths under the checkout made relative, the build dir left out of the hash; the
# package strips the debug info that would name it). Prints cmake arguments, one a line; run from
# $ASBX_ROOT (dpkg-buildflags maps the current directory to "." in debug info):
#   mapfile -t flags < <(asbx_cmake_flags)
export CCACHE_BASEDIR=$ASBX_ROOT CCACHE_NOHASHDIR=1
asbx_cmake_flags() {
  export DEB_BUILD_MAINT_OPTIONS=${DEB_BUILD_MAINT_OPTIONS:-hardening=+bindnow}
  command -v ccache >/dev/null && echo "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
  echo "-DCMAKE_BUILD_TYPE=None"
  echo "-DCMAKE_CXX_FLAGS=$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
  echo "-DCMAKE_EXE_LINKER_FLAGS=$(dpkg-buildflags --get LDFLAGS)"
}
