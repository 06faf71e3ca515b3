#!/usr/bin/env bash
# Fetch the two agent CLIs at pinned versions from the npm registry and put their native
# binaries into a directory (the image build context).
#
#   scripts/agent-clis.sh [--dest DIR] [--print-key]
#
#   --dest DIR     put codex and claude (mode 0755) and agent-clis.versions (versions and sha256
#                  of both binaries) into DIR
#   --print-key    print the version key (cache directory name) and exit
#
# npm install runs once per version key into $ASBX_CACHE/agent-clis/<key> (installed into a temp
# prefix and renamed when complete, so a broken install is never reused). Only the native
# binaries from the platform packages are used: neither needs node at run time.
#   codex:  @openai/codex-linux-x64  vendor/x86_64-unknown-linux-musl/bin/codex (static, musl)
#   claude: @anthropic-ai/claude-code-linux-x64  claude (glibc)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CODEX_VERSION=0.171.0
CLAUDE_VERSION=2.1.332
KEY=codex-$CODEX_VERSION+claude-$CLAUDE_VERSION

# Paths of the native binaries inside the npm prefix.
CODEX_BIN=node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
CLAUDE_BIN=node_modules/@anthropic-ai/claude-code-linux-x64/claude

dest=
while [[ $# -gt 0 ]]; do
  case $1 in
    --dest) [[ $# -ge 2 ]] || asbx_die "--dest needs a directory"; dest=$2; shift 2 ;;
    --print-key) printf '%s\n' "$KEY"; exit 0 ;;
    -h|--help) asbx_help; exit 0 ;;
    *) asbx_die "unknown argument: $1 (see --help)" ;;
  esac
done

[[ $(uname -m) == x86_64 ]] || asbx_die "only x86_64 is supported (platform packages are linux-x64)"

root=$ASBX_CACHE/agent-clis
prefix=$root/$KEY

complete() {
  [[ -f $prefix/.complete && -x $prefix/$CODEX_BIN && -x $prefix/$CLAUDE_BIN ]] &&
    grep -q '^claude.sha256=' "$prefix/.complete"
}

asbx_trap_exit

if complete; then
  asbx_log "agent CLIs cached in $prefix"
else
  # --ignore-scripts (asbx_npm_install's): we take the platform packages' binaries directly, no
  # postinstall needed. npm's own output goes to stderr so callers can keep stdout.
  asbx_npm_install "$prefix" \
    "npm install @openai/codex@$CODEX_VERSION @anthropic-ai/claude-code@$CLAUDE_VERSION into $prefix (≈ 1 min, ≈ 0.5 GB)" \
    --os=linux --cpu=x64 --libc=glibc "@openai/codex@$CODEX_VERSION" "@anthropic-ai/claude-code@$CLAUDE_VERSION"
  tmp=$asbx_npm_tmp
  for b in "$CODEX_BIN" "$CLAUDE_BIN"; do
    [[ -f $tmp/$b ]] || asbx_die "npm install did not produce $b (package layout changed?)"
    chmod 0755 "$tmp/$b"
  done
  # Provenance + content hashes, computed once here so build-image.sh can key its build on the
  # binaries' content without re-reading ~700 MB on every run.
  {
    printf 'codex=%s\nclaude=%s\n' "$CODEX_VERSION" "$CLAUDE_VERSION"
    printf 'codex.sha256=%s\n' "$(sha256sum < "$tmp/$CODEX_BIN" | cut -d' ' -f1)"
    printf 'claude.sha256=%s\n' "$(sha256sum < "$tmp/$CLAUDE_BIN" | cut -d' ' -f1)"
  } > "$tmp/.complete"
  asbx_npm_publish "$prefix"
  asbx_log "installed into $prefix"
fi

if [[ -n $dest ]]; then
  mkdir -p "$dest"
  # Hard-link when the destination is on the cache's filesystem (instant; podman build only
  # reads them), else copy via a temp name + rename so nobody sees a half-copied binary.
  put() {
    local src=$1 dst=$2
    rm -f "$dst" "$dst.part"
    if ! ln "$src" "$dst" 2>/dev/null; then
      install -m 0755 "$src" "$dst.part" && mv -f "$dst.part" "$dst"
    fi
  }
  put "$prefix/$CODEX_BIN" "$dest/codex"
  put "$prefix/$CLAUDE_BIN" "$dest/claude"
  for n in codex claude; do
    [[ -x $dest/$n ]] || asbx_die "$dest/$n is missing or not executable"
  done
  cp "$prefix/.complete" "$dest/agent-clis.versions"
  asbx_log "codex $CODEX_VERSION and claude $CLAUDE_VERSION ready in $dest"
fi
