"""The warm pool's binding mechanism, proved on podman 4.3 + runc before a pool is built on it.

A pool member is created and initialised with no identity in it; what is the session's is bound
at claim through one staging directory per member, bound into the member with `rslave`
propagation from a host mount made shared for it. These tests show, against the real service:
  - a bind made on the host under the staging dir after init appears inside (into the container);
  - CONTROL: the same with a private bind (podman's default) never appears inside;
  - a mount made in the container's mount namespace never appears on the host (never back);
  - a bind made read-only before it is moved under the staging dir is read-only inside; CONTROL: a
    read-only remount after the bind is not propagated (the member's copy stays writable);
  - `podman rename` cannot be the claim: a rename by the id another claimer resolved still wins.
Levers: the create body's `volatile` and `cgroups_mode` are applied (read live, with a CONTROL).
docs/DECISIONS.md "Warm pool" says what a pool needs beyond this and why it is not built yet.
"""
import os
import pathlib
import shutil
import subprocess
import tempfile
import time
import uuid

from harness import CONTAINERS_CONF, IMAGE, LAUNCHER, SOCKET, SeatTest, podman


def sh(*args, check=True):
    return subprocess.run(list(args), capture_output=True, text=True, check=check)


class Propagation(SeatTest):
    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.skipTest("binds on the host side need root (the rootful seat)")
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="asbx-warm-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.stage = self.tmp / "stage"
        self.stage.mkdir()
        self.work = self.tmp / "workspace"
        self.work.mkdir()
        (self.work / "marker").write_text("the session's workspace\n")
        self.mounts = []  # host mounts this test made, unmounted last-first

    def tearDown(self):
        for m in reversed(self.mounts):
            sh("umount", "-l", m, check=False)

    def host_mount(self, *args):
        sh("mount", *args)
        self.mounts.append(args[-1])

    def member(self, propagation):
        """A container created and initialised with only the staging dir bound; returns its PID."""
        if propagation != "private":  # the host side of the staging dir must be a shared mount
            self.host_mount("--bind", str(self.stage), str(self.stage))
            sh("mount", "--make-shared", str(self.stage))
        name = "asbx-warmtest-" + uuid.uuid4().hex[:10]
        opts = "" if propagation == "private" else f",bind-propagation={propagation}"
        podman("create", "--name", name, "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
               "--read-only", "--init", "--network", "none", "--user", "1000:1000",
               "--mount", f"type=bind,src={self.stage},dst=/sandbox/stage{opts}", IMAGE, "true")
        self.addCleanup(podman, "rm", "-f", name, check=False)
        podman("init", name)
        pid = int(podman("inspect", "--format", "{{.State.Pid}}", name).stdout.strip())
        self.assertGreater(pid, 0)
        return pid

    def inside(self, pid, rel):
        return pathlib.Path(f"/proc/{pid}/root/sandbox/stage") / rel

    def test_bind_after_init_appears_inside(self):
        pid = self.member("rslave")
        (self.stage / "ws").mkdir()
        self.host_mount("--bind", str(self.work), str(self.stage / "ws"))
        self.assertEqual(self.inside(pid, "ws/marker").read_text(), "the session's workspace\n")

    def test_control_private_bind_never_sees_it(self):
        pid = self.member("private")
        (self.stage / "ws").mkdir()
        self.host_mount("--bind", str(self.work), str(self.stage / "ws"))
        self.assertTrue(self.inside(pid, "ws").is_dir())
        self.assertFalse(self.inside(pid, "ws/marker").exists(), "a private bind saw a later host mount")

    def test_mount_inside_never_reaches_host(self):
        pid = self.member("rslave")
        (self.stage / "up").mkdir()
        # What an agent could do if it could mount (it cannot: no capability); root does it for it.
        sh("nsenter", "-t", str(pid), "-m", "mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", "/sandbox/stage/up")
        sh("nsenter", "-t", str(pid), "-m", "touch", "/sandbox/stage/up/planted")
        self.assertTrue(self.inside(pid, "up/planted").exists())
        self.assertFalse((self.stage / "up" / "planted").exists(), "a mount inside propagated to the host")
        self.assertNotIn(str(self.stage / "up"), pathlib.Path("/proc/self/mountinfo").read_text())

    def test_read_only_bind_stays_read_only_inside(self):
        """A bind made read-only where it is not yet shared, then moved under the staging dir: the
        copy the member receives is read-only. (A remount after the move would not propagate.)"""
        pid = self.member("rslave")
        (self.stage / "ro").mkdir()
        private = self.tmp / "private-ro"
        private.mkdir()
        self.host_mount("--bind", "-o", "ro", str(self.work), str(private))
        sh("mount", "--move", str(private), str(self.stage / "ro"))
        self.mounts[-1] = str(self.stage / "ro")
        self.assertEqual(self.inside(pid, "ro/marker").read_text(), "the session's workspace\n")
        proc = sh("nsenter", "-t", str(pid), "-m", "touch", "/sandbox/stage/ro/new", check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("Read-only file system", proc.stderr)

    def test_control_read_only_remount_after_the_bind_does_not_reach_inside(self):
        """Why the order matters: the read-only flag belongs to each mount, and a remount is not
        propagated, so a bind made writable under the staging dir and remounted read-only on the
        host stays writable inside the member."""
        pid = self.member("rslave")
        (self.stage / "late").mkdir()
        self.host_mount("--bind", str(self.work), str(self.stage / "late"))
        sh("mount", "-o", "remount,bind,ro", str(self.stage / "late"))
        sh("nsenter", "-t", str(pid), "-m", "touch", "/sandbox/stage/late/written-inside")
        self.assertTrue((self.work / "written-inside").exists())


class Levers(SeatTest):
    """The create body's cheap levers are really applied (podman ignores unknown fields silently)."""

    def test_root_is_volatile(self):
        proc = self.seat.run("--", "cat", "/proc/self/mountinfo")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        root = [l for l in proc.stdout.decode().splitlines() if l.split()[4] == "/"]
        self.assertEqual(len(root), 1, proc.stdout)
        options = root[0].split(" - ")[1].split(",")
        # the kernel says "volatile" (5.10) or "fsync=volatile" (6.x)
        self.assertTrue({"volatile", "fsync=volatile"} & set(options), root[0])

    def conmon_cgroups(self, name):
        conmon = int(podman("inspect", "--format", "{{.State.ConmonPid}}", name).stdout.strip())
        return pathlib.Path(f"/proc/{conmon}/cgroup").read_text()

    def test_conmon_has_no_cgroup_of_its_own_and_limits_hold(self):
        sid = "warm-lever-" + uuid.uuid4().hex[:8]
        launcher = subprocess.Popen([str(LAUNCHER), "--id", sid, "--memory", "256m", "--pids", "64",
                                     "--", "sleep", "30"], env=self.seat.env(), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        self.addCleanup(launcher.wait)
        self.addCleanup(launcher.terminate)
        name = "asbx-" + sid
        state = []
        for _ in range(600):
            state = podman("inspect", "--format", "{{.State.Status}} {{.State.Pid}}", name, check=False).stdout.split()
            if state and state[0] == "running":
                break
            time.sleep(0.1)
        self.assertEqual(state[:1], ["running"])
        self.assertNotIn("conmon", self.conmon_cgroups(name))
        # The container's own cgroup still carries the limits (the limits check reads the same).
        cg = [l.split(":", 2) for l in pathlib.Path(f"/proc/{state[1]}/cgroup").read_text().splitlines()]
        if pathlib.Path("/sys/fs/cgroup/memory").is_dir():  # v1 (this project's standard machine)
            mem = next(p for _, c, p in cg if "memory" in c.split(","))
            limit = pathlib.Path(f"/sys/fs/cgroup/memory{mem}/memory.limit_in_bytes").read_text().strip()
        else:
            mem = next(p for h, _, p in cg if h == "0")
            limit = pathlib.Path(f"/sys/fs/cgroup{mem}/memory.max").read_text().strip()
        self.assertEqual(limit, str(256 * 1024 * 1024))

    def test_control_default_mode_gives_conmon_a_cgroup(self):
        name = "asbx-warmtest-" + uuid.uuid4().hex[:10]
        podman("create", "--name", name, "--network", "none", IMAGE, "sleep", "30")
        self.addCleanup(podman, "rm", "-f", "-t", "0", name, check=False)
        podman("start", name)
        self.assertIn("conmon", self.conmon_cgroups(name))


class ClaimPrimitive(SeatTest):
    """Why `podman rename` is not the pool's claim: the service turns the name into the container
    id once and renames by id, so a second claimer that resolved the member before the first
    renamed it renames it again, and succeeds (CI saw 3 of 8 concurrent renames win). The claim is
    a file linked into the pool dir (launcher/podman/pool_claim.cc, tests/unit/test_pool_claim.cc)."""

    def test_a_rename_by_id_after_another_claimers_rename_succeeds(self):
        member = "asbx-warmtest-member-" + uuid.uuid4().hex[:8]
        first, second = member + "-first", member + "-second"
        for name in (member, first, second):
            self.addCleanup(podman, "rm", "-f", name, check=False)
        cid = podman("create", "--name", member, "--network", "none", IMAGE, "true").stdout.strip()
        podman("rename", member, first)
        # CONTROL: by the old name the second claim fails, as a claim should...
        self.assertNotEqual(podman("rename", member, second, check=False).returncode, 0)
        # ...but by the id both resolved it to, it wins too: the first claimer's name is gone.
        podman("rename", cid, second)
        names = podman("ps", "-a", "--filter", "id=" + cid, "--format", "{{.Names}}").stdout.split()
        self.assertEqual(names, [second])