#!/usr/bin/env bash
# Build the agent image $ASBX_IMAGE from Containerfile on top of the toolchain image.
#
#   scripts/build-image.sh [--force] [--rootless-user USER]
#
#   --force               rebuild even when the input hash matches
#   --rootless-user USER  also copy the image into USER's rootless podman storage
#                         (podman save | runuser -u USER -- podman load) when missing or stale
#
# Steps: build-toolchains.sh (debootstrap base + pinned Debian toolchains), npm-tools.sh (pnpm,
# bun) and agent-clis.sh (codex + claude binaries) into a minimal build context (a temp dir
# holding only the Containerfile inputs, never the repo), then podman build. The build is
# skipped when the input hash — Containerfile + agent-clis.versions + npm-tools.versions +
# toolchain image id — equals the label org.agent-sandbox.input-hash on the existing image. The
# image is built under a temporary tag and tagged only when complete. This build runs with
# --network none: the toolchain image and the context hold everything its steps need.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HASH_LABEL=org.agent-sandbox.input-hash

force=0
rootless_user=
while [[ $# -gt 0 ]]; do
  case $1 in
    --force) force=1; shift ;;
    --rootless-user)
      [[ $# -ge 2 && -n $2 ]] || asbx_die "--rootless-user needs a user name"
      rootless_user=$2; shift 2 ;;
    -h|--help) asbx_help; exit 0 ;;
    *) asbx_die "unknown argument: $1 (see --help)" ;;
  esac
done

[[ $(id -u) -eq 0 ]] || asbx_die "must run as root (rootful podman storage)"
command -v podman >/dev/null || asbx_die "podman not found"
[[ -f $ASBX_ROOT/Containerfile ]] || asbx_die "missing $ASBX_ROOT/Containerfile"
if [[ -n $rootless_user ]]; then
  id -u "$rootless_user" >/dev/null 2>&1 || asbx_die "--rootless-user: no such user '$rootless_user'"
  [[ $(id -u "$rootless_user") -ne 0 ]] || asbx_die "--rootless-user must not be root"
fi

ctx=
cleanup() { asbx_rm_tmp_dir "$ctx"; }
asbx_trap_exit cleanup

# 1. Base + toolchain images (their own caches; < 1 s when up to date). Output goes to stderr.
"$ASBX_ROOT/scripts/build-toolchains.sh" >&2 || asbx_die "build-toolchains.sh failed"
base_id=$(podman image inspect --format '{{.Id}}' "$ASBX_TOOLCHAINS_IMAGE") ||
  asbx_die "toolchain image $ASBX_TOOLCHAINS_IMAGE missing after build-toolchains.sh"

# 2. Minimal build context on the cache's filesystem (the CLI binaries are hard-linked in).
mkdir -p "$ASBX_CACHE"
ctx=$(mktemp -d "$ASBX_CACHE/.build-ctx.XXXXXX")
"$ASBX_ROOT/scripts/agent-clis.sh" --dest "$ctx" >&2 || asbx_die "agent-clis.sh failed"
"$ASBX_ROOT/scripts/npm-tools.sh" --dest "$ctx" >&2 || asbx_die "npm-tools.sh failed"
cp "$ASBX_ROOT/Containerfile" "$ctx/Containerfile"

# 3. Input hash; skip when the image already carries it.
input_hash=$(
  {
    printf 'containerfile %s\n' "$(sha256sum < "$ctx/Containerfile" | cut -d' ' -f1)"
    printf 'agent-clis %s\n' "$(sha256sum < "$ctx/agent-clis.versions" | cut -d' ' -f1)"
    printf 'npm-tools %s\n' "$(sha256sum < "$ctx/npm-tools.versions" | cut -d' ' -f1)"
    printf 'base %s\n' "$base_id"
  } | sha256sum | cut -d' ' -f1
)
if [[ $force -eq 1 ]] || ! asbx_image_current "$ASBX_IMAGE" "$HASH_LABEL" "$input_hash" "input hash"; then
  asbx_log "podman build $ASBX_IMAGE (base $ASBX_TOOLCHAINS_IMAGE ${base_id:0:12})"
  asbx_build_image "$ASBX_IMAGE" "$HASH_LABEL" "$input_hash" "$ctx" "podman build failed" \
    --network=none --build-arg "BASE=$ASBX_TOOLCHAINS_IMAGE"
fi
rm -rf --one-file-system "$ctx"; ctx=

# 4. Optional copy into a user's rootless storage.
if [[ -n $rootless_user ]]; then
  uid=$(id -u "$rootless_user")
  home=$(getent passwd "$rootless_user" | cut -d: -f6)
  user_conf=$(asbx_user_containers_conf "$rootless_user")
  as_user() {
    # Run in the user's home with the env rootless podman expects; keep our containers.conf.
    local env=(HOME="$home" USER="$rootless_user" LOGNAME="$rootless_user" PATH=/usr/local/bin:/usr/bin:/bin)
    [[ -d /run/user/$uid ]] && env+=(XDG_RUNTIME_DIR="/run/user/$uid")
    env+=(CONTAINERS_CONF="$user_conf")
    (cd / && runuser -u "$rootless_user" -- env -i "${env[@]}" "$@")
  }
  [[ -n $home && -d $home ]] || asbx_die "--rootless-user: $rootless_user has no home directory"
  theirs=$(as_user podman image inspect --format "{{index .Labels \"$HASH_LABEL\"}}" "$ASBX_IMAGE" 2>/dev/null || true)
  if [[ $theirs == "$input_hash" ]]; then
    asbx_log "$ASBX_IMAGE is up to date in $rootless_user's rootless storage"
  else
    grep -q "^$rootless_user:" /etc/subuid 2>/dev/null ||
      asbx_log "warning: $rootless_user has no /etc/subuid range; loading files owned by uid 1000 may fail"
    asbx_log "copying $ASBX_IMAGE into $rootless_user's rootless storage (${theirs:+stale, }podman save | podman load)"
    start=$SECONDS
    their_old=$(as_user podman image inspect --format '{{.Id}}' "$ASBX_IMAGE" 2>/dev/null || true)
    if ! podman save "$ASBX_IMAGE" | as_user podman load >&2; then
      asbx_die "copy into $rootless_user's storage failed (check /etc/subuid and /etc/subgid for $rootless_user)"
    fi
    theirs=$(as_user podman image inspect --format "{{index .Labels \"$HASH_LABEL\"}}" "$ASBX_IMAGE" 2>/dev/null || true)
    [[ $theirs == "$input_hash" ]] ||
      asbx_die "$ASBX_IMAGE in $rootless_user's storage does not carry input hash ${input_hash:0:16} after load"
    their_new=$(as_user podman image inspect --format '{{.Id}}' "$ASBX_IMAGE" 2>/dev/null || true)
    if [[ -n $their_old && $their_old != "$their_new" ]]; then
      as_user podman rmi "$their_old" >/dev/null 2>&1 || true
    fi
    asbx_log "copied into $rootless_user's storage in $((SECONDS - start)) s"
  fi
fi
