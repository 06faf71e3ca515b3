# Shared by the bench scripts: source it in place of ../scripts/lib.sh (it sources that one).
# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR source=../scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

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

# bench_files DIR FILES: FILES empty files (rounded up to a thousand) under DIR, 1000 a directory:
# d0/f0 ... d0/f999, d1/f0 ...
bench_files() {
  local d
  for ((d = 0; d < ($2 + 999) / 1000; d++)); do
    mkdir "$1/d$d" && (cd "$1/d$d" && seq -f "f%g" 0 999 | xargs touch)
  done
}
