#!/usr/bin/env bash
# The Kubernetes schema check for `agent-sandbox kube` manifests (docs/KUBERNETES.md).
#
#   scripts/kube-validator.sh install          install (once per version key) and print its dir
#   scripts/kube-validator.sh check FILE.json  check a JSON array of manifest documents
#
# Two checks from the npm registry, pinned:
#   kubernetes-models  models generated from the Kubernetes OpenAPI spec; validate() runs the
#                      spec's JSON schemas (types, required fields, enums, quantity formats)
#   typescript         tsc against the same models' interfaces: an object literal with a field
#                      the API does not have is an error (what the API server's strict field
#                      validation refuses, and what the JSON schemas alone let through)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MODELS_VERSION=4.5.1   # node >= 14 (5.x needs node 22; Debian's is 18)
TS_VERSION=5.9.3
KEY=kubernetes-models-$MODELS_VERSION+typescript-$TS_VERSION
prefix=$ASBX_CACHE/kube-validator/$KEY

install() {
  [[ -f $prefix/.complete ]] && return 0
  asbx_trap_exit
  asbx_npm_install "$prefix" "npm install kubernetes-models@$MODELS_VERSION typescript@$TS_VERSION into $prefix" \
    "kubernetes-models@$MODELS_VERSION" "typescript@$TS_VERSION"
  touch "$asbx_npm_tmp/.complete"
  asbx_npm_publish "$prefix"
}

case ${1:-} in
  install) install; printf '%s\n' "$prefix" ;;
  check)
    [[ $# -eq 2 ]] || asbx_die "usage: $0 check FILE.json"
    install
    exec node "$ASBX_ROOT/scripts/kube-validate.js" "$prefix" "$2" ;;
  *) asbx_help; exit 2 ;;
esac
