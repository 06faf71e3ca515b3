"""gc and a seat that is gone (docs/DECISIONS.md "A seat whose config file was deleted"): every
container carries its seat config file's path, so once that file is gone any seat's gc takes the
seat's orphans and its idle members. What gc then finds of the gone seat on disk is not trusted:
a runtime dir someone else could have put back is never acted in, and no removal crosses a mount.
Met as the seat's owner meets it: the files beside, the mounts, the ledger.
"""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time

from harness import LAUNCHER, TEST_POOL, Seat, SeatTest, podman, session_containers
from test_userns_range import RangeSeatTest

NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]


def ledger_ids(seat):
    return [json.loads(l)["id"] for l in seat.ledger.read_text().splitlines()] if seat.ledger.exists() else []


class DeletedSeat(SeatTest):
    def setUp(self):
        super().setUp()
        if TEST_POOL:
            self.skipTest("orphans of cold sessions; a deleted seat's members have their own test")
        self.other = Seat()
        self.addCleanup(self.other.cleanup)

    def orphan(self, sid, seat):
        """A session whose launcher was SIGKILLed while its agent runs."""
        p = subprocess.Popen([str(LAUNCHER), "--id", sid, "--", "sleep", "300"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=seat.env())
        until = time.monotonic() + 60
        while not session_containers(sid, settle=0) and time.monotonic() < until:
            time.sleep(0.1)
        time.sleep(1)  # past start
        p.kill()
        p.wait()
        self.assertEqual(len(session_containers(sid, settle=0)), 1)

    def test_a_runtime_dir_another_user_put_back_is_never_acted_in(self):
        """The seat was taken down (its dir removed); an unprivileged user made its path again, with
        its runtime dir a link to a dir holding a dir of the orphan's id. gc removes the container, and
        nothing through the link."""
        sid = "gc-link-back"
        self.orphan(sid, self.other)
        victim = pathlib.Path(tempfile.mkdtemp(prefix="asbx-victim-"))
        self.addCleanup(shutil.rmtree, victim, True)
        (victim / sid).mkdir()
        (victim / sid / "work.c").write_text("the owner's\n")
        for d in (self.other.dir / "run" / sid / "tmpfs").glob("*"):  # taken down: its mounts, then its dir
            subprocess.run(["umount", "-l", str(d)], capture_output=True)
        shutil.rmtree(self.other.dir)
        subprocess.run(NOBODY + ["mkdir", str(self.other.dir)], check=True)
        subprocess.run(NOBODY + ["ln", "-s", str(victim), str(self.other.dir / "run")], check=True)
        gc = self.seat.run("gc")
        self.assertEqual(gc.returncode, 0, gc.stderr)
        self.assertIn(f"removed asbx-{sid} (session {sid}): its launcher (pid ".encode(), gc.stdout)
        self.assertIn(f"; its runtime dir {self.other.dir}/run is left to its owner".encode(), gc.stdout)
        self.assertEqual(session_containers(sid, settle=0), [])
        self.assertEqual((victim / sid / "work.c").read_text(), "the owner's\n")
        self.assertEqual(ledger_ids(self.seat), [sid])

    def test_a_dangling_link_for_a_seat_config_is_a_deleted_config(self):
        """A dotfile manager's link left pointing at nothing: the launcher reads no file (the default
        seat's), so that seat has no gc of its own left."""
        sid = "gc-dangling"
        dotfile = self.other.dir / "dotfiles" / "seat.toml"
        dotfile.parent.mkdir()
        shutil.move(self.other.config_file, dotfile)
        self.other.config_file.symlink_to(dotfile)
        self.orphan(sid, self.other)
        gc = self.seat.run("gc")
        self.assertEqual((gc.returncode, gc.stdout), (0, b""), gc.stderr)  # CONTROL: its config is there
        text = dotfile.read_text()
        dotfile.unlink()
        self.addCleanup(self.other.run, "gc")  # its own gc takes its session dir and HOME's mount
        self.addCleanup(dotfile.write_text, text)
        gc = self.seat.run("gc")
        self.assertIn(f"removed asbx-{sid} (session {sid}): its launcher (pid ".encode(), gc.stdout)
        self.assertEqual(session_containers(sid, settle=0), [])

    def test_a_session_dir_with_a_mount_beneath_is_never_removed_across_it(self):
        sid = "gc-mount-beneath"
        self.orphan(sid, self.seat)
        elsewhere = pathlib.Path(tempfile.mkdtemp(prefix="asbx-owner-ws-"))
        self.addCleanup(shutil.rmtree, elsewhere, True)
        (elsewhere / "code.c").write_text("the owner's\n")
        at = self.seat.dir / "run" / sid / "data"
        at.mkdir()
        subprocess.run(["mount", "--bind", str(elsewhere), str(at)], check=True)
        self.addCleanup(subprocess.run, ["umount", "-l", str(at)], check=False)
        gc = self.seat.run("gc")
        self.assertEqual(gc.returncode, 0, gc.stderr)
        self.assertEqual(session_containers(sid, settle=0), [])
        self.assertEqual((elsewhere / "code.c").read_text(), "the owner's\n")
        self.assertTrue(at.is_dir(), "the session dir was removed across a mount")

    def test_a_mount_on_a_stale_session_dir_itself_is_never_swept(self):
        """A dir of the runtime dir that looks like a gone launcher's session dir, itself a mount."""
        at = self.seat.dir / "run" / "gc-mounted-dir"
        at.mkdir(parents=True)
        subprocess.run(["mount", "-t", "tmpfs", "asbx-test", str(at)], check=True)
        self.addCleanup(subprocess.run, ["umount", "-l", str(at)], check=False)
        (at / "tmpfs").mkdir()
        gone = subprocess.Popen(["true"])  # a pid no launcher has any more
        gone.wait()
        boot = pathlib.Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        (at / "tmpfs" / "owner").write_text(f"{gone.pid} {int(time.time())} {boot}\n")
        (at / "precious").write_text("kept\n")
        gc = self.seat.run("gc")
        self.assertEqual(gc.returncode, 0, gc.stderr)
        self.assertEqual((at / "precious").read_text(), "kept\n")

    def test_two_gcs_at_once_write_one_orphan_line(self):
        """podman answers 200 to both removals of one container; only the first line is kept."""
        sids = [f"gc-twice-{i}" for i in range(3)]
        for sid in sids:
            self.orphan(sid, self.seat)
        gcs = [subprocess.Popen([str(LAUNCHER), "gc"], env=self.seat.env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE) for _ in range(2)]
        for p in gcs:
            p.communicate(timeout=120)
        self.assertEqual(sorted(ledger_ids(self.seat)), sids)
        for sid in sids:
            self.assertEqual(session_containers(sid, settle=0), [])


class DeletedPoolSeat(SeatTest):
    def test_the_idle_members_of_a_deleted_seat_are_removed_with_their_keepers(self):
        if os.geteuid() != 0:
            self.skipTest("the pool is for rootful seats")
        other = Seat()
        self.addCleanup(other.cleanup)
        other.config_file.write_text("pool_size = 1\n" + "".join(
            l for l in other.config_file.read_text().splitlines(True) if not l.startswith("pool_")))
        self.assertEqual(other.run("pool", "fill").returncode, 0)
        label = "label=agent-sandbox.pool-runtime-dir=" + str(other.dir / "run")
        ids = podman("ps", "-aq", "--no-trunc", "--filter", label).stdout.split()
        self.assertEqual(len(ids), 1)
        keeper = int(podman("inspect", "--format", '{{index .Config.Labels "agent-sandbox.launcher-pid"}}', ids[0])
                     .stdout.strip())
        os.kill(keeper, 0)
        gc = self.seat.run("gc")
        self.assertEqual(podman("ps", "-aq", "--no-trunc", "--filter", label).stdout.split(), ids)  # CONTROL
        text = other.config_file.read_text()
        other.config_file.unlink()
        self.addCleanup(other.run, "gc")  # its own gc takes the member's session dir and mounts, left to it
        self.addCleanup(other.config_file.write_text, text)
        gc = self.seat.run("gc")
        self.assertEqual(gc.returncode, 0, gc.stderr)
        self.assertIn(f"its seat config {other.config_file} is gone".encode(), gc.stdout)
        self.assertEqual(podman("ps", "-aq", "--no-trunc", "--filter", label).stdout.split(), [])
        until = time.monotonic() + 10
        while time.monotonic() < until and pathlib.Path(f"/proc/{keeper}").exists():
            time.sleep(0.1)
        self.assertFalse(pathlib.Path(f"/proc/{keeper}").exists(), "its keeper lives on")
        gc = self.seat.run("gc")  # another seat's runtime dir: nothing in it is acted on
        self.assertEqual((gc.returncode, gc.stdout), (0, b""), gc.stderr)


class DeletedRangeSeat(RangeSeatTest):
    """A range seat's session keeps its HOME tmpfs mounted in its runtime dir when its launcher is
    SIGKILLed: the dir outlives the seat's config file."""

    def killed_while_running(self, sid):
        """A launcher SIGKILLed while its agent runs: its seat tmpfs (HOME) stays mounted."""
        ready = self.ws / "ready"
        p = subprocess.Popen([str(LAUNCHER), "--id", sid, "--workspace", str(self.ws), "--", "sh", "-c",
                              "touch ready; sleep 300"], env=self.seat.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            until = time.monotonic() + 60
            while not ready.exists() and p.poll() is None and time.monotonic() < until:
                time.sleep(0.05)
            self.assertTrue(ready.exists(), "the agent did not start")
            os.kill(p.pid, signal.SIGKILL)
        finally:
            p.communicate()
        ready.unlink()

    def tmpfs_mounts_under(self, run):
        return [l.split()[4] for l in pathlib.Path("/proc/self/mountinfo").read_text().splitlines()
                if l.split()[4].startswith(str(run) + "/")]

    def test_a_deleted_seats_orphan_kept_mounted_by_its_tmpfs_is_taken_by_another_seats_gc(self):
        """The runtime dir stays (the orphan's seat tmpfs is mounted in it) after its seat config file is
        deleted: no gc of its own is left, so another seat's takes it (labelled with the config's path)."""
        sid, run = "ur-deleted-seat", self.seat.dir / "run"
        other = Seat()
        self.addCleanup(other.cleanup)
        self.killed_while_running(sid)
        self.assertNotEqual(self.tmpfs_mounts_under(run), [], "no seat tmpfs was left mounted")
        gc = other.run("gc")  # CONTROL: its seat config is there, its gc judges it
        self.assertEqual((gc.returncode, gc.stdout), (0, b""), gc.stderr)
        self.assertEqual(len(session_containers(sid)), 1, "another seat's gc took a standing seat's session")
        text = self.seat.config_file.read_text()
        self.seat.config_file.unlink()
        self.addCleanup(self.seat.config_file.write_text, text)
        gc = other.run("gc")
        self.assertEqual(gc.returncode, 0, gc.stderr)
        self.assertIn(f"removed asbx-{sid} (session {sid}): its launcher (pid ".encode(), gc.stdout)
        self.assertIn(f"; its runtime dir {run} is left to its owner".encode(), gc.stdout)
        self.assertNoContainer(sid)
        # another seat's dir is never acted in (someone else may have made it again): its owner's gc takes it
        self.assertNotEqual(self.tmpfs_mounts_under(run), [])
        self.seat.config_file.write_text(text)
        gc = self.seat.run("gc")
        self.assertIn(f"removed the session dir of {sid}".encode(), gc.stdout)
        self.assertEqual(self.tmpfs_mounts_under(run), [])
        self.assertFalse((run / sid).exists())
        self.assertEqual([json.loads(l)["id"] for l in other.ledger.read_text().splitlines()], [sid])
        self.assertEqual((self.ws / "sentinel").read_text(), "the owner's\n")
