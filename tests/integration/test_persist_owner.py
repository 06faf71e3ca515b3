"""A persistent session's dir names its owner (docs/THREATS.md, "a session dir no container leads
to"): the supervisor, once it runs; gc removes the dir when that owner is gone and no container
carries the session, and leaves it while the supervisor lives.
"""
import json
import os
import pathlib
import signal
import subprocess
import time
import unittest

from harness import LAUNCHER, HeldAtItsSocket, SeatTest, podman, session_containers, unavailable
from test_interactive import InteractiveSeat, session_id, wait_until


class PersistentOwner(InteractiveSeat):
    def gc(self):
        out = subprocess.run([str(LAUNCHER), "gc", "--json"], capture_output=True, env=self.env(), timeout=60, check=True)
        return json.loads(out.stdout)["removed"]

    def test_a_killed_supervisors_dir_goes_at_the_next_gc_once_no_container_leads_to_it(self):
        sid = session_id("owner")
        self.start_detached(sid)
        [name] = session_containers(sid)
        labels = json.loads(podman("inspect", name).stdout)[0]["Config"]["Labels"]
        pid, started, boot = (self.session_dir(sid) / "owner").read_text().split()
        self.assertEqual((pid, started, boot), (labels["agent-sandbox.launcher-pid"], labels["agent-sandbox.started"],
                                                labels["agent-sandbox.boot-id"]))  # the supervisor, not its caller
        self.assertEqual(os.stat(self.session_dir(sid) / "owner").st_mode & 0o777, 0o600)
        self.assertEqual([r for r in self.gc() if sid in r], [])  # the supervisor lives: its session stays whole
        self.assertTrue(self.session_dir(sid).is_dir())

        os.kill(int(pid), signal.SIGKILL)
        wait_until(lambda: not os.path.exists(f"/proc/{pid}"), 10, "the supervisor to end")
        # another hand: no label leads gc to the session any more. A running container's rm -f can race
        # podman's own cleanup (it failed once, 125, in a CI run; test_warm_path meets the same): again,
        # as a hand would, and what is checked is that the container is gone.
        for _ in range(5):
            if podman("rm", "-f", name, check=False).returncode == 0:
                break
            time.sleep(0.5)
        self.assertEqual(podman("container", "exists", name, check=False).returncode, 1)
        self.assertTrue(self.session_dir(sid).is_dir())  # CONTROL: nothing but gc's owner rule removes it
        self.assertIn(f"removed the session dir of {sid}: its launcher (pid {pid}) is gone and no container carries "
                      "its session", self.gc())
        self.assertFalse(self.session_dir(sid).exists())

    def test_a_dead_sessions_dir_holding_a_seat_tmpfs_is_unmounted_then_cleared_for_the_claim(self):
        # what a killed gVisor session leaves: its HOME a tmpfs mounted in its dir, its owner gone
        sid = session_id("dead-tmpfs")
        home = self.session_dir(sid) / "tmpfs" / "0"
        home.mkdir(parents=True)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(home)]).returncode:
            unavailable(self, "cannot mount a tmpfs (root needed)")
        self.addCleanup(subprocess.run, ["umount", "-l", str(home)], capture_output=True)
        (home / "left").write_text("x")
        gone = subprocess.Popen(["true"])
        gone.wait()
        boot = pathlib.Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        (self.session_dir(sid) / "owner").write_text(f"{gone.pid} 1 {boot}\n")
        self.start_detached(sid)  # refused as "already running" when the removal stopped at the mount
        # gone: the dead one's tmpfs (a new session's own HOME may be mounted at the same path:
        # gVisor, a user namespace)
        left = [l for l in pathlib.Path("/proc/self/mountinfo").read_text().splitlines()
                if l.split()[4] == str(home) and "size=1024k" in l]
        self.assertEqual(left, [])
        self.assertFalse((home / "left").exists())


class OwnerUnwritable(SeatTest):
    """A runtime dir with no inode left for the owner (a tmpfs of 2 inodes: itself and the session
    dir), or for the attach socket (3): refused, and nothing of the session is left behind. (Mode
    0700: a runtime dir others may write is refused before anything, launcher/lifecycle/runtime_dir.h.)"""

    def launch_on_tmpfs(self, inodes, sid):
        run = self.seat.dir / "run"
        run.mkdir(exist_ok=True)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", f"nr_inodes={inodes},size=1m,mode=0700", "tmpfs", str(run)]).returncode:
            unavailable(self, "cannot mount a tmpfs (root needed)")
        self.addCleanup(subprocess.run, ["umount", "-l", str(run)])
        status = self.seat.dir / f"{sid}.json"
        proc = self.seat.run("--id", sid, "--tty", "--persist", "--timeout", "20s", "--status-file", str(status), "--", "true",
                             stdin=subprocess.DEVNULL, input=None)
        return proc, json.loads(status.read_text()), run

    def test_an_owner_that_cannot_be_written_refuses_the_session_and_leaves_no_dir(self):
        sid = session_id("no-owner")
        proc, rec, run = self.launch_on_tmpfs(2, sid)
        self.assertLauncherError(proc, rec, "internal",
                                 f"cannot write {run}/{sid}/owner: No space left on device; nothing was started")
        self.assertEqual(os.listdir(run), [])
        self.assertNoContainer(sid)

    def test_an_attach_socket_that_cannot_be_bound_leaves_no_dir(self):
        sid = session_id("no-socket")
        proc, rec, run = self.launch_on_tmpfs(3, sid)
        self.assertLauncherError(proc, rec, "internal",
                                 f"cannot bind the attach socket {run}/{sid}/attach.sock: No space left on device")
        self.assertEqual(os.listdir(run), [])  # it left the dir (and, before the owner, one gc never took)
        self.assertNoContainer(sid)


class PlainSessionOfTheId(SeatTest):
    """A persistent launch of an id a plain session holds is refused before it touches that session's
    dir: its claim took a dir whose attach socket was absent for a dead supervisor's, and removed it
    (a hostile pass: the plain session lost its seccomp socket; under gVisor its HOME was emptied)."""

    def test_a_persistent_launch_of_a_live_plain_sessions_id_is_refused_and_leaves_it_whole(self):
        sid = session_id("plain-live")
        with HeldAtItsSocket(self.seat, sid, "echo first") as first:  # where the claim removed its socket
            status = self.seat.dir / f"{sid}.json"
            proc = self.seat.run("--id", sid, "--tty", "--persist", "--timeout", "20s", "--status-file", str(status),
                                 "--", "true", stdin=subprocess.DEVNULL, input=None)
            self.assertLauncherError(proc, json.loads(status.read_text()), "usage",
                                     f"--id {sid}: a session of that id is already running on this seat (its launcher is "
                                     f"pid {first.pid}); nothing was created")
            self.assertTrue((first.session_dir / "seccomp.sock").exists())  # the first's, left alone
            out, err = first.go()
            self.assertEqual((first.proc.returncode, out), (0, b"first\n"), err)


if __name__ == "__main__":
    unittest.main()
