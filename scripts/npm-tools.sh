#!/usr/bin/env bash
# Fetch pnpm and bun at pinned versions from the npm registry into a directory (the image build
# context). Neither is in Debian bookworm.
#
#   scripts/npm-tools.sh [--dest DIR]
#
#   --dest DIR   put pnpm/ (the package: bin/pnpm.cjs + dist/, run by the image's node), bun
#                (mode 0755) and npm-tools.versions (versions, npm integrity, sha256) into DIR
#
# npm install runs once per version key into $ASBX_CACHE/npm-tools/<key> (temp prefix, renamed
# when complete). npm checks each tarball against the registry's sha512 integrity.
#   pnpm: the `pnpm` package (no dependencies; needs node >= 18.12)
#   bun:  @oven/bun-linux-x64-baseline bin/bun (glibc; the baseline build also runs on CPUs
#         without AVX2)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PNPM_VERSION=10.34.9
BUN_VERSION=1.4.5
BUN_PACKAGE=@oven/bun-linux-x64-baseline
KEY=pnpm-$PNPM_VERSION+bun-$BUN_VERSION
BUN_BIN=node_modules/$BUN_PACKAGE/bin/bun
PNPM_DIR=node_modules/pnpm

dest=
while [[ $# -gt 0 ]]; do
  case $1 in
    --dest) [[ $# -ge 2 ]] || asbx_die "--dest needs a directory"; dest=$2; shift 2 ;;
    -h|--help) asbx_help; exit 0 ;;
    *) asbx_die "unknown argument: $1 (see --help)" ;;
  esac
done

root=$ASBX_CACHE/npm-tools
prefix=$root/$KEY
asbx_trap_exit

# sha256 over a directory's files (path + content), independent of mtimes and order on disk.
tree_sha256() {
  (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1
}

if [[ -f $prefix/.complete && -x $prefix/$BUN_BIN && -f $prefix/$PNPM_DIR/bin/pnpm.cjs ]]; then
  asbx_log "pnpm and bun cached in $prefix"
else
  asbx_npm_install "$prefix" "npm install pnpm@$PNPM_VERSION $BUN_PACKAGE@$BUN_VERSION into $prefix" \
    "pnpm@$PNPM_VERSION" "$BUN_PACKAGE@$BUN_VERSION"
  tmp=$asbx_npm_tmp
  [[ -f $tmp/$BUN_BIN && -f $tmp/$PNPM_DIR/bin/pnpm.cjs ]] || asbx_die "npm install did not produce $BUN_BIN and $PNPM_DIR"
  chmod 0755 "$tmp/$BUN_BIN"
  lock=$tmp/package-lock.json
  [[ -f $lock ]] || lock=$tmp/node_modules/.package-lock.json
  integrity() { jq -r --arg p "node_modules/$1" '.packages[$p].integrity' "$lock"; }
  {
    printf 'pnpm=%s\nbun=%s\nbun.package=%s\n' "$PNPM_VERSION" "$BUN_VERSION" "$BUN_PACKAGE"
    printf 'pnpm.integrity=%s\nbun.integrity=%s\n' "$(integrity pnpm)" "$(integrity "$BUN_PACKAGE")"
    printf 'pnpm.tree.sha256=%s\n' "$(tree_sha256 "$tmp/$PNPM_DIR")"
    printf 'bun.sha256=%s\n' "$(sha256sum < "$tmp/$BUN_BIN" | cut -d' ' -f1)"
  } > "$tmp/.complete"
  asbx_npm_publish "$prefix"
fi

if [[ -n $dest ]]; then
  mkdir -p "$dest"
  rm -rf "$dest/pnpm" "$dest/bun"
  # Hard links when DIR is on the cache's filesystem (podman build only reads them), else copies.
  cp -al "$prefix/$PNPM_DIR" "$dest/pnpm" 2>/dev/null || cp -a "$prefix/$PNPM_DIR" "$dest/pnpm"
  ln "$prefix/$BUN_BIN" "$dest/bun" 2>/dev/null || install -m 0755 "$prefix/$BUN_BIN" "$dest/bun"
  cp "$prefix/.complete" "$dest/npm-tools.versions"
  asbx_log "pnpm $PNPM_VERSION and bun $BUN_VERSION ready in $dest"
fi
