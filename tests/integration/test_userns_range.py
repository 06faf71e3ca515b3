"""A rootful session in a user namespace of its own (seat `user_namespace = "range"`, docs/DECISIONS.md
issue 34), through the launcher itself: every container id on 0x70000000 + id (owning nothing on the
host), every bind an idmapped clone the launcher stages before create and detaches after init, HOME
and the git tmpfs seat tmpfs owned by the agent's range ids. Met as the host user and the workspace's
owner meet it: the owner's keyring, the files the agent leaves, the mounts on the seat, a killed
launcher's stagings (a recursive removal across one would delete the owner's workspace).
"""
import json
import os
import pathlib
import secrets
import signal
import subprocess
import time

from harness import LAUNCHER, RUNSC_DIR, SEAT_RUN, SeatTest, session_containers, unavailable

ROOT = pathlib.Path(__file__).resolve().parent
AGENT_UID = 1000
RANGE = 0x70000000
AS_HOST_USER = ["setpriv", "--reuid", str(AGENT_UID), "--regid", str(AGENT_UID), "--clear-groups"]


def staged_mounts(seat):
    """The seat's mounts that are a user namespace's idmapped stagings (SESSION_DIR/tmpfs/idmap-N)."""
    return [line.split()[4] for line in pathlib.Path("/proc/self/mountinfo").read_text().splitlines()
            if line.split()[4].startswith(str(seat.dir) + "/") and "/tmpfs/idmap-" in line.split()[4]]


class RangeSeatTest(SeatTest):
    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            unavailable(self, "a rootful seat's user namespace: its tests run as root")
        text = self.seat.config_file.read_text()
        if "\nuser_namespace = " not in "\n" + text:
            self.seat.config_file.write_text('user_namespace = "range"\n' + text)
        self.ws = self.seat.workspaces / "ws"
        self.ws.mkdir()
        (self.ws / "sentinel").write_text("the owner's\n")
        for p in (self.ws, self.ws / "sentinel"):
            os.chown(p, AGENT_UID, AGENT_UID)

    def session(self, sid, *argv, **kw):
        return self.seat.status("--id", sid, "--workspace", str(self.ws), "--", *argv, **kw)

    def fuse_mount(self, at):
        """A directory on fuse-overlayfs (a filesystem the kernel cannot idmap), unmounted at cleanup."""
        parts = [self.seat.dir / n for n in ("lower", "upper", "work")]
        for d in parts + [at]:
            d.mkdir()
        opts = "lowerdir={},upperdir={},workdir={}".format(*parts)
        subprocess.run(["fuse-overlayfs", "-o", opts, str(at)], check=True, capture_output=True)
        self.addCleanup(subprocess.run, ["umount", "-l", str(at)], check=False)
        return at

    def assertNothingStaged(self, sid):
        self.assertEqual(staged_mounts(self.seat), [])
        self.assertFalse((self.seat.dir / "run" / sid).exists(), "a session dir was left")


class RangeSeat(RangeSeatTest):
    def test_the_agent_owns_nothing_on_the_host_and_its_writes_land_as_the_owner(self):
        proc, rec = self.session("ur-basic", "sh", "-c", 'cat /proc/self/uid_map; id -u; touch written; mkdir made; '
                                 'echo x > "$HOME/h"; stat -c "%u" "$HOME/h" /usr/bin/ls sentinel; cat sentinel; '
                                 'git init -q repo && git -C repo -c user.name=a -c user.email=a@b commit -q '
                                 '--allow-empty -m one && echo committed')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.decode().splitlines()
        self.assertEqual(lines[0].split(), ["0", str(RANGE), "65536"])
        self.assertEqual(lines[1:], ["1000", "1000", "0", "1000", "the owner's", "committed"])
        for made in ("written", "made", "repo/.git/HEAD", "repo/.git/objects"):
            st = (self.ws / made).stat()
            self.assertEqual((st.st_uid, st.st_gid), (AGENT_UID, AGENT_UID), made)
        self.assertEqual(rec["isolation"]["user_namespace"], "range")
        self.assertTrue(rec["container_removed"])
        self.assertNothingStaged("ur-basic")

    def test_the_host_users_keyring_is_out_of_reach(self):
        probe = self.ws / "keyring"
        subprocess.run(["gcc", "-static", "-O1", "-o", str(probe), str(ROOT / "probes" / "keyring.c")], check=True)
        os.chown(probe, AGENT_UID, AGENT_UID)
        host = lambda *a: subprocess.run(AS_HOST_USER + [str(probe), *a], capture_output=True, text=True,
                                         check=True).stdout
        name, value = "asbx-ur-" + secrets.token_hex(4), "host-secret-" + secrets.token_hex(4)
        serial = host("host-add", name, value).split("user_keyring=")[1].strip()
        self.addCleanup(host, "host-remove", name)
        proc, rec = self.session("ur-keyring", "./keyring", "probe", name, serial)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn(value, proc.stdout.decode())
        self.assertNotIn(" ok", "".join(l for l in proc.stdout.decode().splitlines(True) if not l.startswith("uid_map")))
        self.assertEqual(host("host-read", name), value + "\n")
        self.assertGreater(rec["seccomp"]["calls"].get("keyctl", 0), 0)  # refused by the profile too, on record

    def test_no_staging_stays_mounted_once_the_container_runs(self):
        ready = self.ws / "ready"
        p = subprocess.Popen([str(LAUNCHER), "--id", "ur-live", "--workspace", str(self.ws), "--", "sh", "-c",
                              "touch ready; sleep 30"], env=self.seat.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            until = time.monotonic() + 60
            while not ready.exists() and p.poll() is None and time.monotonic() < until:
                time.sleep(0.05)
            self.assertTrue(ready.exists(), p.stderr.read() if p.poll() is not None else "no ready file")
            self.assertEqual(staged_mounts(self.seat), [])
        finally:
            p.send_signal(signal.SIGTERM)
            p.communicate(timeout=60)
        self.assertEqual(session_containers("ur-live"), [])

    def test_a_launcher_killed_with_its_binds_staged_leaves_gc_nothing_to_harm(self):
        sid = "ur-killed"
        session_dir = self.seat.dir / "run" / sid
        p = subprocess.Popen([str(LAUNCHER), "--id", sid, "--workspace", str(self.ws), "--", "true"],
                             env=self.seat.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            for _ in range(40000):  # the stagings are mounted from before create until after init
                if (session_dir / "seccomp.sock").exists() or p.poll() is not None:
                    break
                time.sleep(0.0005)
            os.kill(p.pid, signal.SIGKILL)
        finally:
            p.communicate()
        self.assertNotEqual(staged_mounts(self.seat), [], "the launcher was not caught with its binds staged")
        gc = self.seat.run("gc")
        self.assertEqual(gc.returncode, 0, gc.stderr)
        self.assertEqual((self.ws / "sentinel").read_text(), "the owner's\n")
        self.assertEqual(staged_mounts(self.seat), [])
        self.assertFalse(session_dir.exists())
        # A create the launcher sent before the kill is finished by podman and may be listed only after
        # gc's list (seen once in a full run): the next gc, any launch's or the timer's, takes it.
        time.sleep(2)
        self.assertEqual(self.seat.run("gc").returncode, 0)
        self.assertNoContainer(sid)

    def test_a_workspace_writable_only_by_its_mode_is_refused_before_start(self):
        """An idmapped bind maps the agent's own uid and gid only, and the kernel refuses every write to
        an inode whose owner it cannot map (EACCES, whatever the mode). A root-owned 0777 workspace
        would fail the agent's first write: refused up front instead."""
        shared = self.seat.workspaces / "shared"
        shared.mkdir()
        shared.chmod(0o777)
        proc, rec = self.seat.status("--id", "ur-shared", "--workspace", str(shared), "--", "touch", "x")
        self.assertLauncherError(proc, rec, "workspace_rejected",
                                 f"workspace '{shared}' is not writable by the container user in its user namespace "
                                 "(owner 0:0, mode 0777): there it writes only what its own uid and gid own; the agent "
                                 f"runs as 1000:1000: chown -R 1000:1000 '{shared}' (or make it writable for that user); "
                                 "nothing was started")
        self.assertFalse((shared / "x").exists())
        self.assertNoContainer("ur-shared")
        self.assertNothingStaged("ur-shared")
        # CONTROL: a seat without the user namespace lets the mode decide, and the agent writes.
        self.seat.config_file.write_text(self.seat.config_file.read_text().replace('user_namespace = "range"\n',
                                                                                   'user_namespace = "host"\n'))
        proc, rec = self.seat.status("--id", "ur-shared-host", "--workspace", str(shared), "--", "touch", "x")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue((shared / "x").exists())

    def test_a_workspace_that_cannot_be_idmapped_is_refused_and_nothing_is_created(self):
        fuse = self.fuse_mount(self.seat.workspaces / "fuse")
        os.chown(fuse, AGENT_UID, AGENT_UID)
        proc, rec = self.seat.status("--id", "ur-fuse", "--workspace", str(fuse), "--", "true")
        self.assertLauncherError(proc, rec, "isolation_unavailable",
                                 f"user namespace (user_namespace = \"range\"): the bind of '{fuse}': its filesystem "
                                 "cannot be idmapped (mount_setattr): Invalid argument; nothing was started "
                                 f"(user_namespace = \"host\" in {self.seat.config_file} runs such workspaces without "
                                 "a user namespace of their own)")
        self.assertNoContainer("ur-fuse")
        self.assertNothingStaged("ur-fuse")

    def test_a_joined_network_namespace_gets_no_view_of_the_seats_sys(self):
        """A namespace podman did not make is the seat's user namespace's: runc binds the seat's /sys in
        (its interfaces, every cgroup hierarchy); the launcher masks /sys whole there."""
        name = "asbx-ur-" + secrets.token_hex(3)
        subprocess.run(["ip", "netns", "add", name], check=True)
        self.addCleanup(subprocess.run, ["ip", "netns", "del", name], check=False)
        probe = "ls -A /sys; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; ls /sys/class/net 2>&1 >/dev/null | wc -l"
        proc, rec = self.seat.status("--id", "ur-netns", "--network", "ns:/run/netns/" + name, "--", "sh", "-c", probe)
        self.assertEqual((proc.returncode, proc.stdout), (0, b"lo\n1\n"), proc.stderr)  # /sys empty, only lo
        # CONTROL: the same session in a namespace of its own (podman's) has a sysfs of its own
        proc, rec = self.seat.status("--id", "ur-ownns", "--", "sh", "-c", "ls /sys/class/net")
        self.assertEqual((proc.returncode, proc.stdout), (0, b"lo\ntripwire0\n"), proc.stderr)

    def test_gvisor_in_it_is_refused_before_anything_is_created(self):
        self.seat.config_file.write_text(f'runsc_dir = "{RUNSC_DIR}"\n' + self.seat.config_file.read_text())
        proc, rec = self.seat.status("--id", "ur-gvisor", "--isolation", "gvisor", "--workspace", str(self.ws), "--", "true")
        self.assertLauncherError(proc, rec, "isolation_unavailable",
                                 f"gVisor (runsc): user_namespace = \"range\" in {self.seat.config_file}: the sandbox "
                                 "does not start in a user namespace on this seat (runsc: \"error setting up chroot\"); "
                                 "nothing was created")
        self.assertNoContainer("ur-gvisor")
        self.assertNothingStaged("ur-gvisor")


HOARD = """
import os, socket, time
a, b = socket.socketpair()
fd = os.open("/dev/null", os.O_RDONLY)
for _ in range(6):
    socket.send_fds(a, [b"x"], [fd] * 250)  # 1 500 files in flight, never received
open("ready", "w").close()
time.sleep(60)
"""
SEND_ONE = ("import os, socket; a, b = socket.socketpair(); "
            "socket.send_fds(a, [b'x'], [os.open('/dev/null', os.O_RDONLY)]); print('sent')")


class KernelAccounts(RangeSeatTest):
    """Per-user kernel accounts the seat's uid 1000 shares with an agent whose kernel uid is 1000
    (docs/THREATS.md): files in flight over unix sockets count against the *user*, and past the
    sender's RLIMIT_NOFILE every SCM_RIGHTS send of that user fails (ETOOMANYREFS)."""

    def host_user_sends_a_file_while_the_agent_hoards(self, sid):
        ready = self.ws / "ready"
        p = subprocess.Popen([str(LAUNCHER), "--id", sid, "--workspace", str(self.ws), "--", "python3", "-c", HOARD],
                             env=self.seat.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            until = time.monotonic() + 60
            while not ready.exists() and p.poll() is None and time.monotonic() < until:
                time.sleep(0.05)
            self.assertTrue(ready.exists(), "the hoard did not start")
            return subprocess.run(AS_HOST_USER + ["sh", "-c", 'ulimit -n 1024; exec python3 -c "$0"', SEND_ONE],
                                  capture_output=True, text=True)
        finally:
            p.send_signal(signal.SIGTERM)
            p.communicate(timeout=60)

    def test_an_agent_in_a_range_does_not_spend_the_host_users_files_in_flight(self):
        sent = self.host_user_sends_a_file_while_the_agent_hoards("ur-inflight")
        self.assertEqual((sent.returncode, sent.stdout), (0, "sent\n"), sent.stderr)

    def test_control_an_agent_that_is_host_uid_1000_does(self):
        self.seat.config_file.write_text('user_namespace = "host"\n' +
                                         self.seat.config_file.read_text().replace('user_namespace = "range"\n', ""))
        sent = self.host_user_sends_a_file_while_the_agent_hoards("ur-inflight-control")
        self.assertNotEqual(sent.returncode, 0)
        self.assertIn("Too many references", sent.stderr)


class ConcurrentRanges(RangeSeatTest):
    """Each live session has a range of its own (launcher/lifecycle/range_claim.h): a concurrent
    session is hostile too, and the kernel keeps some accounts per uid (docs/THREATS.md)."""

    def as_kernel_uid(self, uid, *argv):
        return ["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups", *argv]

    def test_a_concurrent_session_has_another_range_and_its_own_files_in_flight(self):
        ready = self.ws / "ready"
        hoard = HOARD.replace('open("ready", "w").close()',
                              'open("map", "w").write(open("/proc/self/uid_map").read()); open("ready", "w").close()')
        p = subprocess.Popen([str(LAUNCHER), "--id", "ur-hoard", "--workspace", str(self.ws), "--", "python3", "-c", hoard],
                             env=self.seat.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(lambda: p.poll() is None and (p.send_signal(signal.SIGTERM), p.communicate(timeout=60)))
        until = time.monotonic() + 60
        while not ready.exists() and p.poll() is None and time.monotonic() < until:
            time.sleep(0.05)
        self.assertTrue(ready.exists(), "the hoard did not start")
        first = int((self.ws / "map").read_text().split()[1])
        other = self.seat.workspaces / "other"  # one session per workspace
        other.mkdir()
        os.chown(other, AGENT_UID, AGENT_UID)
        proc, rec = self.seat.status("--id", "ur-second", "--workspace", str(other), "--", "sh", "-c",
                                     'cat /proc/self/uid_map; ulimit -n 1024; exec python3 -c "$0"', SEND_ONE)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.decode().splitlines()
        second = int(lines[0].split()[1])
        self.assertNotEqual(first, second)
        self.assertEqual({first, second}, {RANGE, RANGE + 65536})  # the lowest free ones
        self.assertEqual(lines[-1], "sent")
        # CONTROL: a process that is the hoarding agent's kernel uid, under the same limit, cannot send.
        sent = subprocess.run(self.as_kernel_uid(first + 1000, "sh", "-c", 'ulimit -n 1024; exec python3 -c "$0"', SEND_ONE),
                              capture_output=True, text=True)
        self.assertNotEqual(sent.returncode, 0)
        self.assertIn("Too many references", sent.stderr)

    def test_a_range_a_live_process_has_is_never_handed_out(self):
        """An orphan whose launcher was SIGKILLed runs on in its range until gc removes it: a host
        process of the first range's agent uid stands in for it."""
        holder = subprocess.Popen(self.as_kernel_uid(RANGE + 1000, "sleep", "60"))
        self.addCleanup(lambda: (holder.kill(), holder.wait()))
        proc, rec = self.session("ur-skip", "cat", "/proc/self/uid_map")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode().split(), ["0", str(RANGE + 65536), "65536"])
        holder.kill()
        holder.wait()
        proc, rec = self.session("ur-skip-after", "cat", "/proc/self/uid_map")
        self.assertEqual(proc.stdout.decode().split(), ["0", str(RANGE), "65536"])  # CONTROL: free again


class Doctor(RangeSeatTest):
    """`doctor` says, per workspace root and git root, whether binds there can be idmapped (a range
    session on a root that cannot is refused with 231), and the remedy where they cannot."""

    def user_namespace_lines(self):
        proc = self.seat.run("doctor", "--json", exe=SEAT_RUN)
        return [c for c in json.loads(proc.stdout)["checks"] if c["name"] == "user_namespace"]

    def test_a_root_on_fuse_fails_with_the_remedy_and_a_host_seat_says_it_chose(self):
        fuse = self.fuse_mount(self.seat.dir / "fuse-root")
        config = self.seat.config_file
        config.write_text(config.read_text() + f'workspace_roots = ["{self.seat.workspaces}", "{fuse}"]\ngit_roots = []\n')
        self.assertEqual(self.user_namespace_lines(), [
            {"name": "user_namespace", "ok": True, "remedy": None,
             "detail": f"{self.seat.workspaces}: binds are idmapped; each agent is a host uid that owns nothing "
                       "(1879049192, 65536 on per concurrent session)"},
            {"name": "user_namespace", "ok": False,
             "detail": f"{fuse}: its filesystem cannot be idmapped (mount_setattr): Invalid argument",
             "remedy": f'user_namespace = "host" in {config} (rootful agents are then host uid 1000), or move the '
                       "root to a filesystem with idmapped mounts"}])
        config.write_text(config.read_text().replace('user_namespace = "range"\n', 'user_namespace = "host"\n'))
        self.assertEqual(self.user_namespace_lines(), [
            {"name": "user_namespace", "ok": True, "remedy": None,
             "detail": f"host ({config}'s choice): rootful agents are host uid 1000"}])
