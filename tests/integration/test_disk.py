"""The disk: a session's budget (bytes, inodes, the git dirs), the seat's floor, and no copy of the
agent's output in podman's storage (docs/RESOURCES.md "Disk", docs/THREATS.md).

Each test makes its own small ext4 on a loop device as the seat's workspace root: this kernel has no
quotas, so the launcher's watcher is what stops the writer, and a small filesystem shows it.
"""
import os
import pathlib
import subprocess
import tempfile
import threading
import time
import unittest

from harness import CODES, SOCKET, IMAGE, SeatTest, podman, session_containers, unavailable

AGENT_UID = 1000
MiB = 1 << 20
# What a writer at full speed may add past its budget: one 20 ms tick at page-cache speed plus the
# watcher's scheduling delay on a loaded seat (86 MiB seen at load 28). Stated in docs/RESOURCES.md "Disk".
OVERSHOOT = 128 * MiB
INODE_OVERSHOOT = 5000
FULL_SPEED = "dd if=/dev/zero of=big bs=1M count={n} status=none; echo wrote"
# One write(2) of 400 MiB: the kill interrupts it between pages, long after the watcher's last read
# of the filesystem (the ticks end with the verdict).
ONE_WRITE = ("python3 -c 'import os\nfd = os.open(\"big\", os.O_CREAT | os.O_WRONLY)\nos.write(fd, bytes(400 << 20))'; "
             "sleep 5; echo wrote")
INODE_FLOOD = "mkdir flood && cd flood && seq 1 {n} | xargs touch; echo wrote"


class LoopFs:
    """mkfs.ext4 on a file, mounted with -o loop in a temp dir; removed at cleanup."""

    def __init__(self, size_mib, inodes=None):
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="asbx-disk-"))
        self.image = self.dir / "fs.img"
        self.mount = self.dir / "mnt"
        self.mount.mkdir()
        subprocess.run(["truncate", "-s", f"{size_mib}M", str(self.image)], check=True)
        more = ["-N", str(inodes)] if inodes else []
        subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", *more, str(self.image)], check=True, capture_output=True)
        subprocess.run(["mount", "-o", "loop", str(self.image), str(self.mount)], check=True)

    def free(self):
        v = os.statvfs(self.mount)
        return v.f_bavail * v.f_frsize, v.f_favail

    def cleanup(self):
        subprocess.run(["umount", "-l", str(self.mount)], capture_output=True)
        subprocess.run(["rm", "-rf", str(self.dir)])


class DiskSeatTest(SeatTest):
    FS_MIB = 1024
    LIMITS = 'disk = "8g"\ndisk_floor = "64m"\ndisk_floor_inodes = 1000\n'

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            unavailable(self, "loop mounts need root")
        try:
            self.fs = LoopFs(self.FS_MIB)
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            unavailable(self, f"cannot make a loop-mounted ext4: {e}")
        self.addCleanup(self.fs.cleanup)
        self.root = self.fs.mount / "workspaces"
        self.root.mkdir()
        self.configure(self.LIMITS)

    def configure(self, limits):
        self.seat.write(f'socket = "{SOCKET}"\nimage = "{IMAGE}"\nworkspace_root = "{self.root}"\n'
                        f'runtime_dir = "{self.seat.dir}/run"\n[limits]\n' + limits)

    def workspace(self, name):
        ws = self.root / name
        ws.mkdir()
        os.chown(ws, AGENT_UID, AGENT_UID)
        return ws

    def session(self, sid, ws, script, *flags, timeout=300):
        return self.seat.status("--id", sid, "--workspace", str(ws), *flags, "--", "bash", "-c", script, timeout=timeout)

    def assertKilledDisk(self, proc, rec, ended):
        self.assertEqual(proc.returncode, CODES["killed_disk"], proc.stderr.decode(errors="replace"))
        self.assertEqual((rec["outcome"], rec["cause"], rec["error_kind"]), ("killed", "disk", "killed_disk"))
        self.assertEqual(rec["disk"]["ended"], ended)
        self.assertTrue(rec["container_removed"])
        self.assertEqual(session_containers(rec["id"]), [])
        self.assertNotIn("wrote", proc.stdout.decode())


class Budget(DiskSeatTest):
    def test_full_speed_writer_is_ended_at_its_budget(self):
        ws = self.workspace("w1")
        proc, rec = self.session("disk-budget", ws, FULL_SPEED.format(n=600), "--disk", "100m")
        self.assertKilledDisk(proc, rec, "budget")
        d = rec["disk"]
        self.assertEqual((d["budget_bytes"], rec["limits"]["disk_bytes"]), (100 * MiB, 100 * MiB))
        self.assertGreaterEqual(d["peak_bytes"], 100 * MiB)
        self.assertLess(d["peak_bytes"], 100 * MiB + OVERSHOOT, d)
        written = (ws / "big").stat().st_size
        self.assertLess(written, 100 * MiB + OVERSHOOT)
        self.assertGreaterEqual(d["frozen_walks"], 1)
        self.assertEqual(d["tick_priority"], "SCHED_FIFO 1")  # a root launcher: its ticks are not late on a loaded seat
        self.assertIn("reached its disk budget of 100m", rec["message"])

    def test_control_the_same_writer_under_its_budget_runs_to_its_end(self):
        ws = self.workspace("w2")
        proc, rec = self.session("disk-control", ws, FULL_SPEED.format(n=150), "--disk", "400m")
        self.assertEqual((proc.returncode, rec["outcome"], rec["disk"]["ended"]), (0, "exited", None), proc.stderr)
        self.assertGreaterEqual(rec["disk"]["added_bytes"], 150 * MiB)

    def test_a_write_the_kill_followed_is_in_the_recorded_free_minimum(self):
        """A write in flight goes on after the watcher's last read of the filesystem until the kill stops
        it: the record's lowest free figure is where the write left the filesystem (without the read
        after the container is gone: 907 MiB recorded, 787-810 MiB free after, three runs of three)."""
        ws = self.workspace("w-inflight")
        proc, rec = self.session("disk-inflight", ws, ONE_WRITE, "--disk", "50m")
        self.assertKilledDisk(proc, rec, "budget")
        self.assertLessEqual(rec["disk"]["filesystems"][0]["free_bytes_min"], self.fs.free()[0], rec["disk"])

    def test_inode_flood_is_ended_at_its_budget(self):
        ws = self.workspace("w3")
        proc, rec = self.session("disk-inodes", ws, INODE_FLOOD.format(n=60000), "--disk-inodes", "3000")
        self.assertKilledDisk(proc, rec, "budget")
        self.assertGreaterEqual(rec["disk"]["peak_inodes"], 3000)
        files = len(os.listdir(ws / "flood"))
        self.assertLess(files, 3000 + INODE_OVERSHOOT)

    def test_the_git_dirs_count(self):
        ws = self.workspace("w4")
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
        (ws / ".git" / "logs").mkdir()
        for root, dirs, files in os.walk(ws):
            for n in dirs + files:
                os.lchown(os.path.join(root, n), AGENT_UID, AGENT_UID)
        script = "dd if=/dev/zero of=.git/objects/pack/junk bs=1M count=600 status=none; echo wrote"
        proc, rec = self.session("disk-git", ws, script, "--disk", "100m")
        self.assertKilledDisk(proc, rec, "budget")
        self.assertLess((ws / ".git" / "objects" / "pack" / "junk").stat().st_size, 100 * MiB + OVERSHOOT)

    def test_more_than_the_seat_allows_is_refused(self):
        ws = self.workspace("w5")
        proc, rec = self.session("disk-over", ws, "true", "--disk", "9g")
        self.assertLauncherError(proc, rec, "usage", f"--disk: 9g is above the seat's 8g ([limits] disk in {self.seat.config_file})")


class Floor(DiskSeatTest):
    FS_MIB = 700
    LIMITS = 'disk_floor = "256m"\ndisk_floor_inodes = 1000\n'

    def test_full_speed_writer_is_ended_at_the_floor_and_a_quiet_neighbour_is_not(self):
        quiet_ws, loud_ws = self.workspace("quiet"), self.workspace("loud")
        quiet = {}
        t = threading.Thread(target=lambda: quiet.update(
            zip(("proc", "rec"), self.session("disk-quiet", quiet_ws, "sleep 8; echo fine")))
        )
        t.start()
        time.sleep(3)
        proc, rec = self.session("disk-loud", loud_ws, FULL_SPEED.format(n=2000))
        t.join()
        self.assertKilledDisk(proc, rec, "floor")
        self.assertIn(f"wrote on '{loud_ws}' near the seat's disk floor of 256m", rec["message"])
        free, _ = self.fs.free()
        self.assertGreaterEqual(free, 256 * MiB, "the floor was crossed")
        self.assertGreaterEqual(rec["disk"]["filesystems"][0]["free_bytes_min"], 256 * MiB)
        self.assertEqual((quiet["proc"].returncode, quiet["rec"]["outcome"]), (0, "exited"), quiet["proc"].stderr)
        self.assertEqual(quiet["proc"].stdout, b"fine\n")
        self.assertIsNone(quiet["rec"]["disk"]["ended"])

    def test_no_session_starts_below_the_floor(self):
        ws = self.workspace("late")
        free, _ = self.fs.free()
        filler = self.fs.mount / "filler"
        subprocess.run(["fallocate", "-l", str(free - 200 * MiB), str(filler)], check=True)
        proc, rec = self.session("disk-below", ws, "echo ran")
        left, _ = self.fs.free()
        self.assertLauncherError(proc, rec, "disk_floor",
                                 f"the filesystem holding '{ws}' has {left >> 20}m free, below the seat's disk floor of 256m "
                                 f"([limits] disk_floor in {self.seat.config_file}); nothing was created")
        self.assertEqual(proc.returncode, 232)
        self.assertEqual(proc.stdout, b"")
        self.assertNoContainer("disk-below")
        filler.unlink()  # CONTROL: above the floor the same session runs
        proc, rec = self.session("disk-above", ws, "echo ran")
        self.assertEqual((proc.returncode, proc.stdout), (0, b"ran\n"), proc.stderr)


class Output(SeatTest):
    def test_printing_far_more_than_the_seat_could_store_leaves_no_file(self):
        sid = "disk-print"
        p = subprocess.Popen([str(self.seat_launcher()), "--id", sid, "--", "bash", "-c", "yes | head -c 2G"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.seat.env())
        static = None
        for _ in range(200):
            r = podman("inspect", "asbx-" + sid, "--format", "{{.StaticDir}} {{.HostConfig.LogConfig.Type}}", check=False)
            if r.returncode == 0:
                static, driver = r.stdout.split()
                break
            time.sleep(0.05)
        got = 0
        while chunk := p.stdout.read(1 << 20):
            got += len(chunk)
            if static and got > (256 << 20) and got < (260 << 20):
                sizes = {f: os.path.getsize(os.path.join(static, f)) for f in os.listdir(static)}
                self.assertLess(max(sizes.values(), default=0), 1 << 20, sizes)
        p.wait()
        self.assertEqual((p.returncode, got), (0, 2 << 30), p.stderr.read())
        self.assertIsNotNone(static, "the container was never seen")
        self.assertEqual(driver, "none")

    def test_control_podman_default_driver_copies_the_output(self):
        name = "asbx-disk-print-control"
        podman("rm", "-f", name, check=False)
        self.addCleanup(podman, "rm", "-f", name, check=False)
        podman("run", "-d", "--name", name, "--network", "none", "--log-driver", "k8s-file", IMAGE,
               "bash", "-c", "yes | head -c 20M")
        podman("wait", name)
        log = podman("inspect", name, "--format", "{{.HostConfig.LogConfig.Path}}").stdout.strip()
        self.assertGreater(os.path.getsize(log), 20 << 20)

    def test_the_capture_log_keeps_its_bound_and_says_what_it_left_out(self):
        log = self.seat.dir / "out.log"
        proc, rec = self.seat.status("--id", "disk-capture", "--capture-log", str(log), "--capture-log-max", "1m",
                                     "--", "bash", "-c", "head -c 5M /dev/zero")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(log.stat().st_size, 1 << 20)
        self.assertEqual(rec["capture_log_truncated_bytes"], 4 << 20)
        self.assertIn("the capture log reached its bound of 1m", proc.stderr.decode())

    def seat_launcher(self):
        from harness import LAUNCHER
        return LAUNCHER


if __name__ == "__main__":
    unittest.main()
