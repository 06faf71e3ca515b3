#!/usr/bin/env bash
# Boots N agent-seat hosts asbx-seat-1..N as rootful podman containers with systemd as PID 1
# (running ones are reused), waits until each answers ssh and has its user bus, provisions each
# from the Debian package with provision-seat.sh (the same script a real seat host gets), and
# writes a registry TOML. Its path is the only line on stdout; progress goes to stderr.
# `up.sh 2` then `agent-sandbox --registry <that file> -- true` runs a session on a seat.
#
# usage: up.sh N [--prefix P] [--deb PATH] [--image-archive PATH] [--seat-config FILE] [--bare]
#                [--capacity K] [--memory SIZE] [--pids-limit N] [--no-build]
#   --prefix P            name the seats P-1..N instead of asbx-seat-1..N (a test's own seats)
#   --deb PATH            the package to install (default: what scripts/package.sh builds)
#   --image-archive PATH  `podman save` tar of the agent image (default: seat-host/image-archive.sh)
#   --seat-config FILE    the seats' seat.toml (default: the image, and waive_unenforced_limits = true
#                         when this machine is not on cgroup v2, where rootless limits are ignored)
#   --bare                boot only: no package, no image, no seat config
#   --capacity K          capacity written to the registry (default 4)
#   --memory/--pids-limit ceiling of the whole seat (default 4g / 4096)
#   --no-build            do not (re)build the seat image
# State (client key, known_hosts, ssh_config, registry.toml): ${ASBX_SEAT_STATE:-/var/lib/agent-sandbox/seats}
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/../lib.sh"
. "$here/common.sh"

count=
prefix=asbx-seat
deb=
image_archive=
seat_config=
capacity=4
memory=4g
pids_limit=4096
build=1
bare=0
# slirp4netns: the published port is a userspace listener, so no iptables is needed on the host
# (this VM has none; netavark's bridge fails with "netavark: No such file or directory").
network=${ASBX_SEAT_NETWORK:-slirp4netns}
while (($#)); do
  case $1 in
    --prefix) prefix=${2:?}; shift 2 ;;
    --deb) deb=${2:?}; shift 2 ;;
    --image-archive) image_archive=${2:?}; shift 2 ;;
    --seat-config) seat_config=${2:?}; shift 2 ;;
    --capacity) capacity=${2:?}; shift 2 ;;
    --memory) memory=${2:?}; shift 2 ;;
    --pids-limit) pids_limit=${2:?}; shift 2 ;;
    --no-build) build=0; shift ;;
    --bare) bare=1; shift ;;
    -h|--help) asbx_usage ;;
    -*) asbx_log "unknown option $1"; asbx_usage ;;
    *) [[ -z $count ]] || asbx_usage; count=$1; shift ;;
  esac
done
[[ $count =~ ^[1-9][0-9]*$ ]] || asbx_usage
[[ $prefix =~ ^[a-z0-9][a-z0-9.-]*$ ]] || asbx_die "--prefix: lower-case letters, digits, '.' and '-'"
[[ $capacity =~ ^[0-9]+$ ]] || asbx_die "--capacity must be a number"
for f in "$deb" "$image_archive" "$seat_config"; do
  [[ -z $f || -f $f ]] || asbx_die "no such file: $f"
done

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

if ((build)); then
  "$here/build.sh" >&2
fi
podman image exists "$ASBX_SEAT_IMAGE" || asbx_die "$ASBX_SEAT_IMAGE missing (run build.sh)"
# The package and the image archive before the state lock: building them can take minutes.
if ((!bare)); then
  [[ -n $deb ]] || deb=$("$ASBX_ROOT/scripts/package.sh" | tail -n1)
  [[ -n $image_archive ]] || image_archive=$("$here/image-archive.sh")
fi

install -d -m 0700 "$ASBX_SEAT_STATE" "$ASBX_SEAT_STATE/ssh_config.d" "$ASBX_SEAT_STATE/containers"
# Serialise concurrent up/down runs. Every podman that leaves a process behind (conmon,
# slirp4netns, rootlessport) gets `9>&-`, or that process would hold the lock for the seat's life.
exec 9>"$ASBX_SEAT_STATE/.lock"
# Provisioning (an image load per new seat) runs under it: wait long enough for another up.sh.
flock -w 900 9 || asbx_die "another up.sh/down.sh holds $ASBX_SEAT_STATE/.lock"

if [[ ! -f $SEAT_KEY ]]; then
  ssh-keygen -q -t ed25519 -N '' -C agent-sandbox-seat-client -f "$SEAT_KEY"
fi
# Bind-mounted read-only as seat's authorized_keys (root-owned 0644 passes sshd's StrictModes).
cmp -s "$SEAT_KEY.pub" "$ASBX_SEAT_STATE/authorized_keys" ||
  install -m 0644 "$SEAT_KEY.pub" "$ASBX_SEAT_STATE/authorized_keys"
touch "$SEAT_KNOWN_HOSTS"
cat >"$SEAT_SSH_CONFIG" <<EOF
# ssh -F $SEAT_SSH_CONFIG asbx-seat-N   (one file per seat in ssh_config.d/)
Include $ASBX_SEAT_STATE/ssh_config.d/*.conf
EOF

# Lowest free loopback port from 22001 that no seat container has claimed either.
used_ports() {
  podman ps -a --format '{{.Ports}}' | grep -o '127\.0\.0\.1:[0-9]*' | cut -d: -f2 || true
}
pick_port() {
  local p used
  used=$(used_ports)
  for ((p = 22001; p < 23000; p++)); do
    grep -qx "$p" <<<"$used" && continue
    [[ -n $(ss -Hltn "sport = :$p") ]] && continue
    echo "$p"
    return
  done
  asbx_die "no free loopback port in 22001-22999"
}

port_answers() { [[ -n $1 ]] && timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

declare -A started port
names=()
for ((i = 1; i <= count; i++)); do
  name=$prefix-$i
  names+=("$name")
  status=$(podman container inspect --format '{{.State.Status}}' "$name" 2>/dev/null || true)
  [[ -z $status ]] || seat_is_ours "$name" || asbx_die "container $name exists but was not made by up.sh with this state dir"
  if [[ -n $status ]]; then
    stale=0
    [[ $(podman container inspect --format '{{.Image}}' "$name") == "$(podman image inspect --format '{{.Id}}' "$ASBX_SEAT_IMAGE")" ]] || stale=1
    if ((stale)); then
      # e.g. one without root's ssh login, which provisioning needs; the storage volume (the loaded
      # image) is kept.
      asbx_log "$name: runs an older $ASBX_SEAT_IMAGE, booting it again"
      podman rm -f --time 5 "$name" >/dev/null 9>&- || asbx_die "$name: cannot remove the old seat"
      status=
    elif [[ $status == running ]] && port_answers "$(seat_port "$name")"; then
      asbx_log "$name: running, reused"
      started[$name]=
    elif [[ $status != running ]] && podman start "$name" >/dev/null 2>&1 9>&-; then
      asbx_log "$name: was $status, started it"
      started[$name]=$(now)
    else
      # Its port forwarder or conmon died with the shell that booted it (the ssh port answers
      # nothing, or podman cannot start it again): boot it anew; the storage volume (the loaded
      # image) is kept.
      asbx_log "$name: $status but unusable, booting it again"
      podman rm -f --time 5 "$name" >/dev/null 9>&- || asbx_die "$name: cannot remove the dead seat"
      status=
    fi
  fi
  if [[ -n $status ]]; then
    port[$name]=$(seat_port "$name")
    [[ -n ${port[$name]} ]] || asbx_die "$name publishes no loopback ssh port"
    continue
  fi
  rm -f "$ASBX_SEAT_STATE/containers/$name.id"
  if podman volume exists "$name-storage"; then
    [[ $(podman volume inspect --format "{{index .Labels \"$SEAT_LABEL\"}}" "$name-storage") == 1 ]] ||
      asbx_die "volume $name-storage exists but was not made by up.sh"
  else
    podman volume create --label "$SEAT_LABEL=1" "$name-storage" >/dev/null
  fi
  p=$(pick_port)
  port[$name]=$p
  asbx_log "$name: booting on 127.0.0.1:$p"
  started[$name]=$(now)
  podman run -d --name "$name" --hostname "$name" --label "$SEAT_LABEL=1" \
    --runtime runc --privileged --cgroupns=private --systemd=false --network "$network" \
    --tmpfs /run:rw,mode=755 --tmpfs /run/lock --tmpfs /tmp:rw,mode=1777 --stop-signal SIGRTMIN+3 \
    --ulimit nofile=20000:20000 --ulimit nproc=4096:4096 -p "127.0.0.1:$p:22" \
    --memory "$memory" --pids-limit "$pids_limit" \
    -v "$name-storage:/home/seat/.local/share/containers" \
    --mount "type=bind,src=$ASBX_SEAT_STATE/authorized_keys,dst=/home/seat/.ssh/authorized_keys,ro" \
    --mount "type=bind,src=$ASBX_SEAT_STATE/authorized_keys,dst=/root/.ssh/authorized_keys,ro" \
    --cidfile "$ASBX_SEAT_STATE/containers/$name.id" \
    "$ASBX_SEAT_IMAGE" /sbin/init >/dev/null 9>&-
done

seat_ssh_opts
declare -A host_key
for name in "${names[@]}"; do
  p=${port[$name]}
  t0=${started[$name]:-$(now)}
  # The host key is made at first boot; read it through the container runtime (not the network).
  key=
  for ((n = 0; n < 300; n++)); do
    key=$(podman exec "$name" cat /etc/ssh/ssh_host_ed25519_key.pub 2>/dev/null | awk '{print $1" "$2}') || true
    [[ -n $key ]] && break
    sleep 0.1
  done
  [[ -n $key ]] || asbx_die "$name: no ssh host key after 30 s"
  host_key[$name]=$key
  grep -vF "[127.0.0.1]:$p " "$SEAT_KNOWN_HOSTS" >"$SEAT_KNOWN_HOSTS.new" || true
  echo "[127.0.0.1]:$p $key" >>"$SEAT_KNOWN_HOSTS.new"
  mv "$SEAT_KNOWN_HOSTS.new" "$SEAT_KNOWN_HOSTS"
  cat >"$ASBX_SEAT_STATE/ssh_config.d/$name.conf" <<EOF
Host $name
  HostName 127.0.0.1
  Port $p
  User seat
  IdentityFile $SEAT_KEY
  IdentitiesOnly yes
  BatchMode yes
  StrictHostKeyChecking yes
  UserKnownHostsFile $SEAT_KNOWN_HOSTS
  GlobalKnownHostsFile /dev/null
  LogLevel ERROR
EOF

  ok=0
  for ((n = 0; n < 300; n++)); do
    if ssh "${SEAT_SSH_OPTS[@]}" -p "$p" seat@127.0.0.1 true </dev/null 2>/dev/null; then ok=1; break; fi
    sleep 0.1
  done
  ((ok)) || asbx_die "$name: ssh did not answer within 30 s (podman logs $name)"
  t_ssh=$(now)
  # The lingering user manager brings up /run/user/1000/bus.
  ok=0
  for ((n = 0; n < 300; n++)); do
    if ssh "${SEAT_SSH_OPTS[@]}" -p "$p" seat@127.0.0.1 'test -S /run/user/1000/bus' </dev/null 2>/dev/null; then ok=1; break; fi
    sleep 0.1
  done
  ((ok)) || asbx_die "$name: no user bus /run/user/1000/bus within 30 s"
  t_bus=$(now)
  if [[ -n ${started[$name]} ]]; then
    asbx_log "$name: 127.0.0.1:$p ssh after $(elapsed "$t0" "$t_ssh") s, user bus after $(elapsed "$t0" "$t_bus") s"
  else
    asbx_log "$name: 127.0.0.1:$p answers ssh"
  fi
done

on_seat() { local name=$1; shift; ssh "${SEAT_SSH_OPTS[@]}" -p "${port[$name]}" seat@127.0.0.1 "$@"; }

# Every seat from the package, through the one provisioning script a real seat host gets.
if ((!bare)); then
  conf=$seat_config
  if [[ -z $conf ]]; then
    conf=$(mktemp)
    trap 'rm -f "$conf"' EXIT
    {
      echo "# written by scripts/seat-host/up.sh (seat.toml(5))"
      echo "image = \"$ASBX_IMAGE\""
      if [[ $(stat -fc %T /sys/fs/cgroup) != cgroup2fs ]]; then
        echo "# this machine is not on cgroup v2: rootless podman in the seat ignores every limit (docs/SEAT-HOSTS.md)"
        echo "waive_unenforced_limits = true"
      fi
    } >"$conf"
  fi
  for name in "${names[@]}"; do
    # Seats booted by older versions of this script got sandbox-run and the credential table copied
    # into /usr/local, which would shadow the package's files.
    podman exec "$name" rm -rf /usr/local/bin/sandbox-run /usr/local/share/agent-sandbox 9>&-
    t0=$(now)
    "$here/provision-seat.sh" --ssh-config "$SEAT_SSH_CONFIG" --seat-config "$conf" "$name" "$deb" "$image_archive" 9>&-
    # A fresh seat has no podman API service and no pause process while no container runs; tests of
    # the no-new-privileges path depend on that.
    on_seat "$name" "systemctl --user stop podman.service 2>/dev/null; $SEAT_DROP_PAUSE" </dev/null
    asbx_log "$name: provisioned in $(elapsed "$t0" "$(now)") s"
  done
fi

# One registry per prefix, so a test's own seats do not overwrite the default registry.
[[ $prefix == asbx-seat ]] || SEAT_REGISTRY=$ASBX_SEAT_STATE/registry-$prefix.toml
tmp=$(mktemp "$SEAT_REGISTRY.XXXXXX")
{
  echo "# agent-seat hosts booted by scripts/seat-host/up.sh on $(date -u +%FT%TZ)"
  for name in "${names[@]}"; do
    cat <<EOF

[[host]]
name = "$name"
address = "127.0.0.1"
port = ${port[$name]}
user = "seat"
roles = ["agent-seat"]
host_key = "${host_key[$name]}"
identity_file = "$SEAT_KEY"
capacity = $capacity
EOF
  done
} >"$tmp"
chmod 0644 "$tmp"
mv "$tmp" "$SEAT_REGISTRY"
echo "$SEAT_REGISTRY"
