#!/usr/bin/env bash
# Builds the agent-seat host image ($ASBX_SEAT_IMAGE): a Debian bookworm rootfs with systemd as
# PID 1, sshd, a lingering user `seat` (uid 1000) and rootless podman. See docs/SEAT-HOSTS.md.
#
# Two cached stages:
#   1. debootstrap tarball  $ASBX_CACHE/seat/rootfs-<key>.tar  (key: include list + SEAT_BASE_VERSION)
#   2. the image, labelled asbx.seat.key=<key of 1 + this script's hash>; rebuilt only when it differs.
# A second run with nothing changed takes about a second. Usage: build.sh [--force]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# Bump when the debootstrap stage must be redone with the same include list.
SEAT_BASE_VERSION=1
INCLUDE=(
  # systemd host with a user bus and logind sessions
  systemd systemd-sysv dbus dbus-user-session libpam-systemd
  openssh-server
  # rootless podman; netavark..catatonit are named because debootstrap cannot resolve the
  # virtual package container-network-stack that podman depends on
  podman runc uidmap slirp4netns fuse-overlayfs netavark aardvark-dns conmon catatonit
  iproute2 procps util-linux ca-certificates curl
  # runtime libraries of sandbox-run
  libssh-4 libcpp-httplib0.11 libtomlplusplus3 libstdc++6
  bash coreutils git
  # `man agent-sandbox` on a seat (the package ships man pages)
  man-db
  # the package's caller library (import agent_sandbox; Recommends: python3), which
  # test_dispatched_capture.InstalledPackage imports on a seat
  python3
  # gVisor for a rootful seat installed from the package (its Recommends; test_package_gvisor)
  runsc
)

force=0
[[ ${1:-} == --force ]] && force=1

include=$(IFS=,; echo "${INCLUDE[*]}")
base_key=$(printf 'v%s\n%s\n' "$SEAT_BASE_VERSION" "$include" | sha256sum | cut -c1-16)
image_key=$(cat <(echo "$base_key") "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)

have_key=$(podman image inspect --format '{{index .Labels "asbx.seat.key"}}' "$ASBX_SEAT_IMAGE" 2>/dev/null || true)
if [[ $force == 0 && $have_key == "$image_key" ]]; then
  asbx_log "$ASBX_SEAT_IMAGE is up to date (key $image_key)"
  exit 0
fi

cache=$ASBX_CACHE/seat
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock -w 600 9 || asbx_die "another build.sh holds $cache/.lock"
# Someone else may have built it while we waited for the lock.
have_key=$(podman image inspect --format '{{index .Labels "asbx.seat.key"}}' "$ASBX_SEAT_IMAGE" 2>/dev/null || true)
if [[ $force == 0 && $have_key == "$image_key" ]]; then
  asbx_log "$ASBX_SEAT_IMAGE is up to date (key $image_key)"
  exit 0
fi

work=$(mktemp -d "$cache/work.XXXXXX")
tmp_image=localhost/agent-sandbox-seat:building-$$
cleanup() {
  rm -rf --one-file-system "$work"
  rm -f "$cache/rootfs-$base_key.tar.part"
  podman rmi "$tmp_image" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# ---- stage 1: debootstrap (cached) -------------------------------------------------------------
tarball=$cache/rootfs-$base_key.tar
root=$work/rootfs
if [[ ! -s $tarball ]]; then
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  mirror=${mirror:-http://deb.debian.org/debian}
  asbx_log "debootstrap bookworm from $mirror (about a minute)"
  t0=$SECONDS
  debootstrap --variant=minbase --include="$include" bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -n 30 "$work/debootstrap.log" >&2
    asbx_die "debootstrap failed"
  }
  rm -f "$root"/var/cache/apt/archives/*.deb
  tar --numeric-owner --xattrs -C "$root" -cf "$tarball.part" .
  mv "$tarball.part" "$tarball"
  # Tarballs of other keys go once nobody used them for a week (another clone may still need one).
  find "$cache" -maxdepth 1 -name 'rootfs-*.tar' ! -name "rootfs-$base_key.tar" -mtime +7 -delete
  asbx_log "debootstrap done in $((SECONDS - t0)) s -> $tarball"
else
  mkdir -p "$root"
  tar --numeric-owner --xattrs -C "$root" -xf "$tarball"
fi

# ---- stage 2: configure the rootfs --------------------------------------------------------------
asbx_log "configuring rootfs"
in_root() { chroot "$root" "$@"; }

# user seat (uid 1000) with subordinate id ranges for rootless podman
if ! in_root getent passwd seat >/dev/null; then
  in_root useradd --create-home --uid 1000 --user-group --shell /bin/bash seat
fi
echo 'seat:100000:65536' >"$root/etc/subuid"
echo 'seat:100000:65536' >"$root/etc/subgid"
install -d -m 0700 -o 1000 -g 1000 "$root/home/seat/.ssh"
install -d -m 0700 "$root/root/.ssh"
install -d -m 0755 -o 1000 -g 1000 "$root/home/seat/.config" "$root/home/seat/.config/agent-sandbox" \
  "$root/home/seat/.local" "$root/home/seat/.local/share"
install -d -m 0700 -o 1000 -g 1000 "$root/home/seat/.local/share/containers"
# The user manager starts at boot and stays.
install -d -m 0755 "$root/var/lib/systemd/linger"
: >"$root/var/lib/systemd/linger/seat"

# One machine id per boot; no inherited host keys (each seat makes its own at first boot).
: >"$root/etc/machine-id"
rm -f "$root/var/lib/dbus/machine-id"
ln -s /etc/machine-id "$root/var/lib/dbus/machine-id"
rm -f "$root"/etc/ssh/ssh_host_*
echo 'agent-seat' >"$root/etc/hostname"

# key-only sshd; unix-socket forwarding for the podman API
cat >"$root/etc/ssh/sshd_config.d/agent-sandbox.conf" <<'EOF'
# agent-sandbox seat host
HostKey /etc/ssh/ssh_host_ed25519_key
PasswordAuthentication no
KbdInteractiveAuthentication no
# root logs in by key only: provision-seat.sh installs the package and enables linger as root
PermitRootLogin prohibit-password
AllowUsers seat root
UsePAM yes
AllowStreamLocalForwarding yes
StreamLocalBindUnlink yes
# "no" would also refuse -L to unix sockets (sshd ties streamlocal to the TCP admin switch)
AllowTcpForwarding local
X11Forwarding no
PrintMotd no
# a caller gone without a FIN or RST (a partition, a dead NAT) ends its session within 45 s
ClientAliveInterval 15
ClientAliveCountMax 3
EOF
cat >"$root/etc/systemd/system/asbx-ssh-hostkey.service" <<'EOF'
[Unit]
Description=Generate this seat's ssh host key
DefaultDependencies=no
Before=ssh.service
ConditionPathExists=!/etc/ssh/ssh_host_ed25519_key

[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -q -t ed25519 -N "" -C "" -f /etc/ssh/ssh_host_ed25519_key

[Install]
WantedBy=ssh.service
EOF

# rootless podman wants / shared
cat >"$root/etc/systemd/system/asbx-make-rshared.service" <<'EOF'
[Unit]
Description=Make / a shared mount (rootless podman)
DefaultDependencies=no
Before=sysinit.target local-fs.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/mount --make-rshared /

[Install]
WantedBy=sysinit.target
EOF

install -d "$root/etc/systemd/system/sysinit.target.wants" "$root/etc/systemd/system/ssh.service.wants"
ln -sfn ../asbx-make-rshared.service "$root/etc/systemd/system/sysinit.target.wants/asbx-make-rshared.service"
ln -sfn ../asbx-ssh-hostkey.service "$root/etc/systemd/system/ssh.service.wants/asbx-ssh-hostkey.service"
in_root systemctl enable ssh.service >/dev/null 2>&1 || true

# The VM has no udev: /dev/fuse and /dev/net/tun arrive 0600. Inside the seat only.
cat >"$root/etc/tmpfiles.d/agent-sandbox.conf" <<'EOF'
z /dev/fuse    0666 - - -
z /dev/net/tun 0666 - - -
d /home/seat/.local/share/containers 0700 seat seat -
EOF

# Units that touch global kernel state (sysctl, modules, binfmt, debugfs...) or only add noise.
for unit in systemd-sysctl.service systemd-modules-load.service modprobe@.service \
  systemd-binfmt.service proc-sys-fs-binfmt_misc.automount proc-sys-fs-binfmt_misc.mount \
  sys-kernel-debug.mount sys-kernel-tracing.mount sys-kernel-config.mount dev-hugepages.mount \
  sys-fs-fuse-connections.mount systemd-firstboot.service \
  apt-daily.timer apt-daily-upgrade.timer fstrim.timer e2scrub_all.timer e2scrub_reap.service \
  dpkg-db-backup.timer getty@tty1.service console-getty.service \
  podman-auto-update.timer podman-auto-update.service podman-restart.service; do
  ln -sfn /dev/null "$root/etc/systemd/system/$unit"
done

# The VM's kernel log is not the seat's business; pam_env wants this file to exist.
install -d "$root/etc/systemd/journald.conf.d"
printf '[Journal]\nReadKMsg=no\n' >"$root/etc/systemd/journald.conf.d/agent-sandbox.conf"
[[ -e $root/etc/default/locale ]] || : >"$root/etc/default/locale"

# podman inside the seat
install -d "$root/etc/containers"
cat >"$root/etc/containers/storage.conf" <<'EOF'
# Debian ships none, and without it rootless podman silently uses vfs.
[storage]
driver = "overlay"
runroot = "/run/containers/storage"
graphroot = "/var/lib/containers/storage"
EOF
cat >"$root/etc/containers/containers.conf" <<'EOF'
[engine]
runtime = "runc"
EOF

install -d -m 0755 "$root/etc/agent-sandbox"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/log/*.log "$root"/tmp/* "$root"/root/.bash_history

# ---- import ---------------------------------------------------------------------------------------
asbx_log "importing $ASBX_SEAT_IMAGE"
t0=$SECONDS
tar --numeric-owner --xattrs -C "$root" -c . |
  podman import --quiet --change 'CMD ["/sbin/init"]' --change 'STOPSIGNAL SIGRTMIN+3' \
    --change "LABEL asbx.seat.key=$image_key" - "$tmp_image" >/dev/null 9>&-
old_id=$(podman image inspect --format '{{.Id}}' "$ASBX_SEAT_IMAGE" 2>/dev/null || true)
podman tag "$tmp_image" "$ASBX_SEAT_IMAGE"
podman untag "$tmp_image" "$tmp_image"
# Older seat images go unless seats still run them (down.sh removes them later).
for id in $old_id $(podman images --filter dangling=true --filter label=asbx.seat.key --format '{{.ID}}'); do
  [[ $id == "$(podman image inspect --format '{{.Id}}' "$ASBX_SEAT_IMAGE")" ]] ||
    podman rmi "$id" >/dev/null 2>&1 || true
done
asbx_log "imported in $((SECONDS - t0)) s: $ASBX_SEAT_IMAGE (key $image_key)"
