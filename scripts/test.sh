#!/usr/bin/env bash
# The second README command: the whole suite (unit + integration against real podman,
# real seat hosts and the real agent CLIs). Installs and starts what it needs.
#   scripts/test.sh            everything
#   scripts/test.sh -R REGEX   only the ctest tests matching REGEX (e.g. -R unit)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$ASBX_ROOT/scripts/setup.sh"
for prep in "$ASBX_ROOT"/scripts/test-prep.d/*.sh; do
  [ -e "$prep" ] && "$prep"
done
export ASBX_MUST_WORK=${ASBX_MUST_WORK:-1}
ctest --test-dir "$ASBX_BUILD" --output-on-failure --timeout 1500 "$@"
