#!/usr/bin/env bash
# Makes a systemd host an agent seat, over ssh, from the package: installs the .deb with apt,
# enables linger and podman.socket (and the gc timer) for the seat user, loads the agent image,
# writes the seat config, and runs `sandbox-run doctor` as the seat user — failing if it fails.
# Idempotent: the same .deb is not re-installed, an image already present is not re-loaded.
#
# usage: provision-seat.sh [options] HOST DEB IMAGE_ARCHIVE
#   HOST                 what ssh connects to (a Host of --ssh-config, a name or an address)
#   DEB                  agent-sandbox_*.deb (scripts/package.sh prints its path)
#   IMAGE_ARCHIVE        `podman save` archive of the agent image (scripts/seat-host/image-archive.sh)
#   --user U             the seat user (default seat); must exist, with /etc/subuid and /etc/subgid ranges
#   --admin A            who installs the package and enables linger (default root; ssh A@HOST)
#   --seat-config FILE   copied to ~U/.config/agent-sandbox/seat.toml (default: a file naming the image,
#                        written only when the seat has none)
#   --ssh-config FILE    ssh -F FILE (keys, ports and known hosts of the seats)
#   -o OPTION            one more ssh -o option (repeatable)
# ssh runs with BatchMode=yes: keys only, and the host key must already be known.
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/../lib.sh"

user=seat admin=root seat_config= ssh_opts=(-o BatchMode=yes) args=()
while (($#)); do
  case $1 in
    --user) user=${2:?}; shift 2 ;;
    --admin) admin=${2:?}; shift 2 ;;
    --seat-config) seat_config=${2:?}; shift 2 ;;
    --ssh-config) ssh_opts+=(-F "${2:?}"); shift 2 ;;
    -o) ssh_opts+=(-o "${2:?}"); shift 2 ;;
    -h|--help) asbx_usage ;;
    -*) asbx_log "unknown option $1"; asbx_usage ;;
    *) args+=("$1"); shift ;;
  esac
done
((${#args[@]} == 3)) || asbx_usage
host=${args[0]} deb=${args[1]} archive=${args[2]}
[[ $user =~ ^[a-z_][a-z0-9_-]*$ ]] || asbx_die "--user: not a user name: $user"
for f in "$deb" "$archive" ${seat_config:+"$seat_config"}; do [[ -f $f ]] || asbx_die "no such file: $f"; done
[[ $deb == *.deb ]] || asbx_die "not a .deb: $deb"
log() { asbx_log "$host: $*"; }
as_admin() { ssh "${ssh_opts[@]}" "$admin@$host" "$@"; }
as_seat() { ssh "${ssh_opts[@]}" "$user@$host" "$@"; }

# ---- as the admin: systemd host, seat user, the package, linger ------------------------------------
as_admin "test -d /run/systemd/system" </dev/null ||
  asbx_die "$host: systemd is not running as PID 1 there (a seat needs a systemd host), or ssh $admin@$host failed"
uid=$(as_admin "id -u $user" </dev/null 2>/dev/null) ||
  asbx_die "$host: no user $user (useradd -m $user && usermod --add-subuids 100000-165535 --add-subgids 100000-165535 $user)"

sha=$(sha256sum <"$deb" | cut -d' ' -f1)
stamp=/var/lib/agent-sandbox/package.sha256
name=$(basename "$deb")
if [[ $(as_admin "cat $stamp 2>/dev/null; dpkg-query -W -f='\${Status}' agent-sandbox 2>/dev/null" </dev/null) == "$sha"$'\n'"install ok installed" ]]; then
  log "$name already installed"
else
  t0=$SECONDS
  # apt resolves Depends from the host's own sources; a seat that has them all needs no network.
  as_admin "set -e; install -d -m 0755 /var/cache/agent-sandbox /var/lib/agent-sandbox
    cat >/var/cache/agent-sandbox/$name; chmod 0644 /var/cache/agent-sandbox/$name
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall --allow-downgrades \
      -o Dpkg::Options::=--force-confnew /var/cache/agent-sandbox/$name >/var/log/agent-sandbox-install.log 2>&1 ||
      { tail -n 20 /var/log/agent-sandbox-install.log >&2; exit 1; }
    echo $sha >$stamp" <"$deb" || asbx_die "$host: apt-get install $name failed (above)"
  log "installed $name with apt in $((SECONDS - t0)) s"
fi
as_admin "loginctl enable-linger $user" </dev/null || asbx_die "$host: loginctl enable-linger $user failed"
# The lingering user manager brings up the user bus.
for ((n = 0; n < 300; n++)); do
  as_admin "test -S /run/user/$uid/bus" </dev/null && break
  sleep 0.2
done
as_admin "test -S /run/user/$uid/bus" </dev/null || asbx_die "$host: no user bus /run/user/$uid/bus after linger"

# ---- as the seat user: units, image, config, doctor ---------------------------------------------------
where=$(as_seat 'command -v sandbox-run' </dev/null || true)
[[ $where == /usr/bin/sandbox-run ]] ||
  asbx_die "$host: sandbox-run on $user's PATH is '${where:-missing}', not the package's /usr/bin/sandbox-run"
out=$(as_seat 'systemctl --user daemon-reload && systemctl --user enable --now podman.socket agent-sandbox-gc.timer' \
  </dev/null 2>&1) || { printf '%s\n' "$out" >&2; asbx_die "$host: systemctl --user enable --now podman.socket agent-sandbox-gc.timer failed"; }
log "linger, podman.socket and agent-sandbox-gc.timer enabled for $user"

# docker-archive (podman save's default): manifest.json names the config blob <Id>.json
archive_id=$(tar -xOf "$archive" manifest.json 2>/dev/null |
  grep -o '"Config":"[^"]*"' | head -n1 | sed 's/.*"\(sha256:\)\{0,1\}\([0-9a-f]\{64\}\)\.json"$/\2/;t;d' || true)
if [[ -n $archive_id ]] && as_seat "podman image exists $archive_id" </dev/null; then
  log "image ${archive_id:0:12} already loaded"
else
  t0=$SECONDS
  as_seat 'podman load -q' <"$archive" >&2 || asbx_die "$host: podman load failed"
  log "loaded $(basename "$archive") in $((SECONDS - t0)) s"
fi

conf='~/.config/agent-sandbox/seat.toml'
if [[ -n $seat_config ]]; then
  as_seat "mkdir -p ~/.config/agent-sandbox && cat >$conf.new && mv $conf.new $conf" <"$seat_config"
  log "wrote $conf from $seat_config"
elif as_seat "test -e $conf" </dev/null; then
  log "keeping the seat's own $conf"
else
  printf '# written by provision-seat.sh (seat.toml(5))\nimage = "%s"\n' "$ASBX_IMAGE" |
    as_seat "mkdir -p ~/.config/agent-sandbox && cat >$conf"
  log "wrote a default $conf"
fi

if ! report=$(as_seat 'sandbox-run doctor' </dev/null 2>&1); then
  printf '%s\n' "$report" >&2
  asbx_die "$host: sandbox-run doctor failed (above); the seat is not ready"
fi
log "sandbox-run doctor: $(tail -n1 <<<"$report")"
