"""The holes a hostile pass found in the disk wall (docs/THREATS.md, "The disk"): files held open
without a name, a walk that cannot finish, a slow walk's gap, the verdict at the end, and the git
files copied back after the watcher stopped. Each on a loop-mounted ext4 the test makes
(test_disk.LoopFs); each with a control showing the trap is real.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import threading
import time
import unittest

from test_disk import AGENT_UID, FULL_SPEED, MiB, OVERSHOOT, DiskSeatTest

# Writes into a file that no longer has a name: the walk of the binds finds nothing.
HIDDEN = "exec 3>big; rm big; dd if=/dev/zero bs=1M count={n} status=none >&3; ls -A; sleep {hold}; echo held"
# Files written under the budget (and under what a session may add near the floor), passed over a unix
# socket nobody reads, closed and unlinked: in no name and no task's fd table; only the filesystem's
# counters see them.
IN_FLIGHT = """python3 - <<'EOF'
import array, os, socket
pairs = []  # a fresh pair every 100 files: a full send buffer would block
chunk = bytes({kib} << 10)
for i in range({n}):
    if i % 100 == 0:
        pairs.append(socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM))
    fd = os.open("f", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    os.write(fd, chunk)
    os.fsync(fd)
    pairs[-1][0].sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
    os.close(fd)
    os.unlink("f")
print("wrote", flush=True)
EOF"""
DEEP = "p=.; for i in $(seq {n}); do p=$p/d; done; mkdir -p $p && touch $p/f && echo made"


class Hidden(DiskSeatTest):
    def test_a_file_deleted_while_open_counts_against_the_budget(self):
        ws = self.workspace("h1")
        proc, rec = self.session("disk-hidden", ws, HIDDEN.format(n=600, hold=5), "--disk", "100m")
        self.assertKilledDisk(proc, rec, "budget")
        d = rec["disk"]
        self.assertGreaterEqual(d["hidden_peak_bytes"], 100 * MiB, d)
        self.assertLess(d["peak_bytes"], 100 * MiB + OVERSHOOT, d)
        self.assertIn("of it held open without a name (deleted files or dirs, O_TMPFILE files)", rec["message"])
        # CONTROL: no name was ever there to walk (what the watcher alone saw before: nothing added)
        self.assertEqual(proc.stdout, b"")
        self.assertEqual(os.listdir(ws), [])
        self.assertEqual(d["added_bytes"], 0)  # at the end (the container gone, the file with it)

    def test_control_a_hidden_file_under_the_budget_runs_to_its_end_and_is_counted(self):
        ws = self.workspace("h2")
        free0, _ = self.fs.free()
        seen = []
        t = threading.Thread(target=lambda: seen.append(self._lowest_free(8)))
        t.start()
        proc, rec = self.session("disk-hidden-ok", ws, HIDDEN.format(n=150, hold=3), "--disk", "400m")
        t.join()
        self.assertEqual((proc.returncode, proc.stdout), (0, b"held\n"), proc.stderr)
        self.assertGreaterEqual(free0 - seen[0], 150 * MiB)  # the disk really held it, nameless
        self.assertGreaterEqual(rec["disk"]["hidden_peak_bytes"], 0)
        self.assertIsNone(rec["disk"]["ended"])

    def _lowest_free(self, seconds):
        lowest, until = self.fs.free()[0], time.monotonic() + seconds
        while time.monotonic() < until:
            lowest = min(lowest, self.fs.free()[0])
            time.sleep(0.05)
        return lowest


class HiddenFloor(DiskSeatTest):
    FS_MIB = 700
    LIMITS = 'disk_floor = "256m"\ndisk_floor_inodes = 1000\n'

    def test_the_floor_ends_the_hidden_writer_not_the_honest_one(self):
        hidden_ws, honest_ws = self.workspace("hidden"), self.workspace("honest")
        hidden = {}
        t = threading.Thread(target=lambda: hidden.update(
            zip(("proc", "rec"), self.session("disk-hider", hidden_ws, HIDDEN.format(n=2000, hold=15)))))
        t.start()
        time.sleep(4)
        proc, rec = self.session("disk-honest", honest_ws, "sleep 2; head -c 5M /dev/zero > out; echo fine")
        t.join()
        self.assertKilledDisk(hidden["proc"], hidden["rec"], "floor")
        self.assertRegex(hidden["rec"]["message"],
                         rf"^killed: the session wrote on '{hidden_ws}' near the seat's disk floor of 256m / 1000 inodes "
                         r"\(it had added \d+[kmg]? in \d+ inodes, \d+[kmg]? of it held open without a name \(deleted files or dirs, O_TMPFILE files\); "
                         rf"\[limits\] disk_floor in {self.seat.config_file}\)$")
        self.assertEqual((proc.returncode, proc.stdout, rec["disk"]["ended"]), (0, b"fine\n", None), proc.stderr)
        self.assertGreaterEqual(self.fs.free()[0], 256 * MiB)


class InFlight(DiskSeatTest):
    LIMITS = 'disk = "8g"\ndisk_floor = "256m"\ndisk_floor_inodes = 1000\n'

    def test_files_in_flight_over_a_socket_end_the_session_below_the_floor(self):
        ws = self.workspace("inflight")
        free0, _ = self.fs.free()
        proc, rec = self.session("disk-inflight", ws, IN_FLIGHT.format(n=900, kib=960), "--disk", "100m")
        self.assertKilledDisk(proc, rec, "below_floor")
        self.assertRegex(rec["message"],
                         rf"^killed: the filesystem holding '{ws}' fell below the seat's disk floor of 256m / 1000 inodes "
                         r"while the session could write there \(its own files: \d+[kmg]? in \d+ inodes; the rest is what "
                         rf"no walk sees, or another writer's; \[limits\] disk_floor in {self.seat.config_file}\)$")
        d = rec["disk"]
        low = d["filesystems"][0]["free_bytes_min"]
        print(f"\nin flight: free {free0 >> 20} MiB before, {low >> 20} MiB at the lowest, peak_bytes {d['peak_bytes']}, "
              f"walks {d['walks']} ({d['frozen_walks']} frozen)", file=sys.stderr)
        # CONTROL: the walks never saw what filled the disk (no file was ever past the budget)
        self.assertLess(d["peak_bytes"], 100 * MiB, d)
        self.assertGreater(free0 - low, 400 * MiB, d)
        self.assertGreater(low, 256 * MiB - OVERSHOOT, d)  # the disk never filled
        self.assertGreater(self.fs.free()[0], free0 - 10 * MiB)  # freed with the session's processes

    def test_control_above_the_floor_the_same_files_in_flight_run_to_the_end(self):
        ws = self.workspace("inflight-ok")
        proc, rec = self.session("disk-inflight-ok", ws, IN_FLIGHT.format(n=100, kib=960), "--disk", "100m")
        self.assertEqual((proc.returncode, proc.stdout), (0, b"wrote\n"), proc.stderr)
        self.assertIsNone(rec["disk"]["ended"])


class Unmeasured(DiskSeatTest):
    def test_a_tree_deeper_than_the_walk_ends_the_session_after_the_fact(self):
        ws = self.workspace("deep")
        proc, rec = self.session("disk-deep", ws, DEEP.format(n=135))
        self.assertEqual(proc.returncode, 229, proc.stderr)
        self.assertEqual((rec["cause"], rec["error_kind"], rec["disk"]["ended"]), ("disk", "killed_disk", "unmeasured"))
        self.assertEqual(rec["disk"]["ended_after_exit"], True)
        self.assertEqual(rec["message"],
                         f"after the agent ended: the workspace could not be measured: '{ws}" + "/d" * 128 +
                         "': deeper than 128 levels: not walked; its disk use counts as over the budget of 8g")
        self.assertEqual(proc.stdout, b"made\n")

    def test_control_a_tree_within_the_walk_exits(self):
        ws = self.workspace("shallow")
        proc, rec = self.session("disk-shallow", ws, DEEP.format(n=100))
        self.assertEqual((proc.returncode, proc.stdout, rec["disk"]["ended"]), (0, b"made\n", None), proc.stderr)
        self.assertIsNone(rec["disk"]["walk_stopped"])

    def test_a_workspace_that_cannot_be_measured_is_not_started(self):
        ws = self.workspace("deep-before")
        subprocess.run(["bash", "-c", DEEP.format(n=135)], cwd=ws, check=True, capture_output=True)
        proc, rec = self.session("disk-deep-before", ws, "echo ran")
        self.assertLauncherError(proc, rec, "workspace_rejected",
                                 f"the workspace could not be measured: '{ws}" + "/d" * 128 + "': deeper than 128 levels: "
                                 "not walked; the session was not started (its disk budget could not be kept)")
        self.assertEqual(proc.stdout, b"")
        self.assertNoContainer("disk-deep-before")


class SlowWalk(DiskSeatTest):
    FS_MIB = 2048

    def test_a_slow_walk_leaves_no_gap_for_a_writer(self):
        ws = self.workspace("slow")
        many = ws / "many"
        many.mkdir()
        for i in range(110_000):
            (many / str(i)).touch()
        # past the first periodic walk (10 s): the old watcher then waited 5 x its length
        proc, rec = self.session("disk-slow", ws, "sleep 10.5; dd if=/dev/zero of=big bs=1M count=1500 status=none; echo wrote",
                                 "--disk", "100m")
        self.assertKilledDisk(proc, rec, "budget")
        self.assertLess((ws / "big").stat().st_size, 100 * MiB + OVERSHOOT, rec["disk"])
        self.assertLess(rec["disk"]["peak_bytes"], 100 * MiB + OVERSHOOT, rec["disk"])


class ManyOpenFiles(DiskSeatTest):
    """Hundreds of threads holding thousands of fds made the count of files held open without a
    name take 13-29 s, unfrozen and unchecked: 1.3 GiB were written against a 100m budget, the
    floor crossed, exit 0 and `peak_bytes` 0. Threads sharing their process's fd table are now read
    once, and the count itself is interrupted (and redone frozen) when the disk counters press."""
    FS_MIB = 2048

    def test_a_writer_hidden_behind_a_slow_count_is_still_stopped_at_its_budget(self):
        if not shutil.which("gcc"):
            self.skipTest("gcc is missing")
        ws = self.workspace("fds")
        source = pathlib.Path(__file__).parent / "probes" / "fd_hoard.c"
        subprocess.run(["gcc", "-static", "-O1", "-o", str(ws / "fd_hoard"), str(source), "-lpthread"], check=True)
        os.chown(ws / "fd_hoard", AGENT_UID, AGENT_UID)
        # past the first periodic walk (10 s), 450 threads x 8000 fds
        proc, rec = self.session("disk-fds", ws, "ulimit -n 8192; ./fd_hoard 450 11 1300 big; echo exited $?",
                                 "--disk", "100m")
        self.assertKilledDisk(proc, rec, "budget")
        self.assertLess(rec["disk"]["peak_bytes"], 100 * MiB + OVERSHOOT, rec["disk"])


class CopyBack(DiskSeatTest):
    PACKED = ("(echo '# pack-refs with: peeled fully-peeled sorted'; "
              "seq -f 'b%07g' 1 {n} | sed 's|^|0123456789012345678901234567890123456789 refs/heads/|') > .git/packed-refs; echo made")

    def git_workspace(self, name):
        ws = self.workspace(name)
        git = ["git", "-c", "safe.directory=*", "-c", "user.name=o", "-c", "user.email=o@x", "-C", str(ws)]
        subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "first"], check=True)
        subprocess.run([*git, "pack-refs", "--all"], check=True)
        for root, dirs, files in os.walk(ws):
            for n in dirs + files:
                os.lchown(os.path.join(root, n), AGENT_UID, AGENT_UID)
        return ws

    def test_a_packed_refs_past_what_is_left_of_the_budget_stays_inside(self):
        ws = self.git_workspace("cb1")
        proc, rec = self.session("disk-copyback", ws, self.PACKED.format(n=600_000), "--disk", "20m")
        self.assertEqual((proc.returncode, proc.stdout), (0, b"made\n"), proc.stderr)
        self.assertNotIn("packed-refs", rec["git"]["copied_back"])
        [why] = [w for w in rec["git"]["not_copied_back"] if w.startswith("packed-refs")]
        self.assertRegex(why, r"^packed-refs: it would grow the host's gitdir by \d+ bytes, past what is left of the "
                              r"session's disk budget \(\d+ bytes\); the host's is kept$")
        self.assertLess((ws / ".git" / "packed-refs").stat().st_size, 4096)

    def test_control_within_the_budget_it_comes_back(self):
        ws = self.git_workspace("cb2")
        proc, rec = self.session("disk-copyback-ok", ws, self.PACKED.format(n=600_000), "--disk", "200m")
        self.assertEqual((proc.returncode, proc.stdout), (0, b"made\n"), proc.stderr)
        self.assertIn("packed-refs", rec["git"]["copied_back"])
        self.assertGreater((ws / ".git" / "packed-refs").stat().st_size, 20 * MiB)



class SharedNames(DiskSeatTest):
    """A file the owner hard-linked into the workspace from elsewhere on its filesystem (a store, a
    local clone's objects): removing its name there frees nothing. It counted at the start, so its
    removal paid for as much new data (a hostile pass: 314 MB held against a 10m budget, exit 0,
    `added_bytes` negative)."""

    def shared(self, name, mib):
        ws = self.workspace(name)
        outside = self.fs.mount / f"{name}-store.dat"
        subprocess.run(["dd", "if=/dev/urandom", f"of={outside}", "bs=1M", f"count={mib}", "status=none"], check=True)
        os.link(outside, ws / "data.bin")
        return ws

    def test_removing_a_name_shared_with_outside_pays_for_nothing(self):
        ws = self.shared("s1", 260)  # more than what is written: before, the figure never reached the budget
        proc, rec = self.session("disk-shared", ws, "rm -f data.bin; " + FULL_SPEED.format(n=200), "--disk", "10m")
        self.assertKilledDisk(proc, rec, "budget")
        self.assertLess(rec["disk"]["peak_bytes"], 10 * MiB + OVERSHOOT)

    def test_control_the_removal_alone_and_a_small_write_run_and_are_counted_as_written(self):
        ws = self.shared("s2", 60)
        proc, rec = self.session("disk-shared-ok", ws, "rm -f data.bin; " + FULL_SPEED.format(n=5), "--disk", "10m")
        self.assertEqual((proc.returncode, proc.stdout, rec["disk"]["ended"]), (0, b"wrote\n", None), proc.stderr)
        self.assertGreaterEqual(rec["disk"]["added_bytes"], 5 * MiB)  # not 5 MiB less the 60 MiB removed
        self.assertLess(rec["disk"]["added_bytes"], 6 * MiB)


if __name__ == "__main__":
    unittest.main()
