// The stage step, run by /bin/bash inside the container before the agent. It carries
// paths only (arguments), never content. Why a wrapper and not an entrypoint: the image
// has none and the launcher passes the full argv; the wrapper exists only in sessions
// that stage credentials, and it must outlive the agent to hash the copy at the end.
#include "credtable/credential.h"

namespace asbx {

const std::string& stage_script() {
  static const std::string script = R"SH(set -u
r=/sandbox-report
rts=() sts=() cps=()
while [ "$1" != -- ]; do
  rts+=("$1") sts+=("$2") cps+=("$3")
  if ! { mkdir -p -m 0700 -- "${3%/*}" && cp -- "$2" "$3" && chmod 0600 -- "$3"; }; then
    printf '%s\n' "$1" > "$r/stage-failed"; exit 1
  fi
  shift 3
done
shift
p=
case $1 in
  */*) p=$1 ;;
  *) IFS=:; for d in $PATH; do if [ -f "$d/$1" ]; then p=$d/$1; [ -x "$p" ] && break; fi; done; unset IFS ;;
esac
if [ -z "$p" ] || [ ! -e "$p" ]; then echo command_not_found > "$r/exec-failure"; exit 127; fi
if [ -d "$p" ] || [ ! -x "$p" ]; then echo command_not_executable > "$r/exec-failure"; exit 126; fi
exec 3<&0
( trap - INT QUIT; exec -- "$@" ) <&3 3<&- &
c=$!
exec 3<&-
s=
fwd() { s=1; kill -s "$1" "$c" 2>/dev/null; }
for sig in TERM HUP USR1 USR2; do trap "fwd $sig" "$sig"; done
if [ -t 0 ]; then trap 's=1' INT QUIT; else trap 'fwd INT' INT; trap 'fwd QUIT' QUIT; fi
while :; do
  s=; wait "$c" 2>/dev/null; rc=$?
  { [ -n "$s" ] && [ "$rc" -gt 128 ]; } || break
  kill -0 "$c" 2>/dev/null && continue
  wait "$c" 2>/dev/null; r2=$?; [ "$r2" = 127 ] || rc=$r2; break
done
for i in "${!rts[@]}"; do
  a=$(sha256sum < "${sts[$i]}"); b=missing
  [ -f "${cps[$i]}" ] && b=$(sha256sum < "${cps[$i]}")
  printf '%s %s %s\n' "${rts[$i]}" "${a%% *}" "${b%% *}"
done > "$r/refresh.tmp" && mv -- "$r/refresh.tmp" "$r/refresh"
exit "$rc"
)SH";
  return script;
}

}  // namespace asbx
