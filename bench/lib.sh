# Shared by the bench scripts: source it in place of ../scripts/lib.sh (it sources that one).
# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR source=../scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

# The limits the launcher is given in the side-by-side rows, and the podman flags that give the
# container what the launcher's create body gives it
# (compare with `agent-sandbox --dry-run`): keep the two in step.
# shellcheck disable=SC2034  # used by the scripts that source this one
LIMITS=(--memory 2g --pids 256 --cpus 2)
# shellcheck disable=SC2034
PODMAN_FLAGS="--rm --cap-drop ALL --security-opt no-new-privileges --read-only --init --network none \
 --hostname agent-sandbox --user 1000:1000 --memory 2g --memory-swap 2g --pids-limit 256 \
 --cpu-period 100000 --cpu-quota 200000 --cpu-shares 256 --ulimit nofile=8192:8192 --ulimit nproc=4096:4096 \
 --tmpfs /tmp:rw,size=512m,nosuid,nodev,mode=1777 --tmpfs /sandbox/home:rw,size=512m,nosuid,nodev,mode=0700,U \
 --workdir /sandbox/home -e HOME=/sandbox/home -e LANG=C.UTF-8 -e LC_ALL=C -e USER=agent -e TERM=xterm-256color"

# bench_seat_toml CONFIG_HOME [KEY=VALUE...]: a seat config for the local seat (the harness
# service's socket, the shared image) in CONFIG_HOME/agent-sandbox/seat.toml, then each KEY = "VALUE".
bench_seat_toml() {
  local dir=$1/agent-sandbox kv
  shift
  mkdir -p "$dir"
  {
    printf 'socket = "%s"\nimage = "%s"\n' "$ASBX_SOCKET" "$ASBX_IMAGE"
    for kv in "$@"; do printf '%s = "%s"\n' "${kv%%=*}" "${kv#*=}"; done
  } >"$dir/seat.toml"
}

# bench_ready_members RUNTIME_DIR: how many members a claim could take now — a ready file
# (RUNTIME_DIR/pool-*/ready) whose member no claim file names. podman's state cannot say it: a
# member is running from its fill on, claimed or not.
bench_ready_members() {
  local n=0 f id
  for f in "$1"/pool-*/ready; do
    [[ -f $f ]] && id=$(jq -r .id "$f" 2>/dev/null) || continue
    [[ -e $1/.pool/$id.claim ]] || n=$((n + 1))
  done
  echo "$n"
}

# bench_files DIR FILES: FILES empty files (rounded up to a thousand) under DIR, 1000 a directory:
# d0/f0 ... d0/f999, d1/f0 ...
bench_files() {
  local d
  for ((d = 0; d < ($2 + 999) / 1000; d++)); do
    mkdir "$1/d$d" && (cd "$1/d$d" && seq -f "f%g" 0 999 | xargs touch)
  done
}
