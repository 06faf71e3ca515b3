#!/usr/bin/env bash
# Builds the Debian package agent-sandbox_VERSION-1_ARCH.deb and prints its path as the last line
# of stdout (progress on stderr). Its own build directory (default build-deb/, or $ASBX_DEB_BUILD):
# prefix /usr, Debian's build flags (dpkg-buildflags: hardening, reproducible paths), only the
# installed targets; CPack packs exactly what `cmake --install` installs (packaging/install.cmake).
# Nothing changed since the last .deb: the same file is printed again, not re-packed (so a seat
# provisioned from it is not re-installed). docs/INSTALL.md.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=${ASBX_DEB_BUILD:-$ASBX_ROOT/build-deb}
for tool in cmake ninja cpack dpkg-buildflags dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || asbx_die "$tool is missing (scripts/setup.sh installs it)"
done
mkdir -p "$out"
exec 9>"$out/.package.lock"
flock -w 1800 9 || asbx_die "another package.sh holds $out/.package.lock"

cd "$ASBX_ROOT"  # dpkg-buildflags maps this directory to "." in debug info
# Debian's defaults plus BIND_NOW (only LDFLAGS change: -Wl,-z,now), as lintian asks; the dev
# build's flags too (scripts/lib.sh), so ccache hands this compile the dev build's objects.
mapfile -t flags < <(asbx_cmake_flags)
cmake -S "$ASBX_ROOT" -B "$out" -G Ninja "${flags[@]}" \
  -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON >&2
ninja -C "$out" ${ASBX_JOBS:+-j "$ASBX_JOBS"} agent-sandbox sandbox-run agent-sandbox-unsafe gvisor-compat asbx-docs asbx-python >&2

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$out/CMakeCache.txt")
release=$(sed -n '1s/^agent-sandbox ([^-]*-\([^)]*\)).*/\1/p' "$ASBX_ROOT/packaging/changelog")
[[ $(sed -n '1s/^agent-sandbox (\([^-]*\)-.*/\1/p' "$ASBX_ROOT/packaging/changelog") == "$version" ]] ||
  asbx_die "packaging/changelog's first entry is not version $version (project() in CMakeLists.txt)"
deb=$out/agent-sandbox_${version}-${release}_$(dpkg --print-architecture).deb

# Re-pack only when something that goes into the package is newer than the .deb.
inputs=("$out"/{agent-sandbox,sandbox-run,agent-sandbox-unsafe,changelog.Debian.gz} "$out"/man/*.gz "$out"/systemd
        "$out"/python/agent_sandbox
        "$ASBX_ROOT"/packaging "$ASBX_ROOT"/scripts/systemd "$ASBX_ROOT"/scripts/containers-runsc.conf "$out"/runsc
        "$ASBX_ROOT"/credtable/credtable.toml "$out"/CPackConfig.cmake)
if [[ -f $deb && -z $(find "${inputs[@]}" -newer "$deb" -print -quit) ]]; then
  asbx_log "$deb is up to date"
else
  rm -f "$deb"
  (cd "$out" && cpack -G DEB) >&2
  [[ -f $deb ]] || asbx_die "cpack did not write $deb"
  asbx_log "wrote $deb"
fi
echo "$deb"
