"""podman's cleanup off the caller's time (docs/DECISIONS.md, "Issue 37: the wait for podman's
cleanup"): the exit code comes from conmon's exit file, the record and the ledger line are
written, the caller is answered, and a detached remover — the session's last process — removes
the container. gc knows a remover at work and one that died."""
import json
import os
import pathlib
import subprocess
import time

from harness import CODES, IMAGE, LAUNCHER, SOCKET, TEST_POOL, Seat, SeatTest, podman, session_containers


def marker_of(run_dir, container_id):
    return pathlib.Path(run_dir) / (".removal-" + container_id)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = pathlib.Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


class Deferred(SeatTest):
    def test_answered_first_and_nothing_left_when_the_remover_ends(self):
        proc, rec = self.seat.status("--id", "defer-exit7", "--", "sh", "-c", "echo out; exit 7")
        self.assertEqual((proc.returncode, proc.stdout), (7, b"out\n"), proc.stderr)
        self.assertEqual((rec["outcome"], rec["agent_exit_code"], rec["container_removed"], rec["container_removal"]),
                         ("exited", 7, True, "deferred"))
        phases = rec["durations_ms"]["phases"]
        self.assertIn("wait", phases)
        self.assertNotIn("remove", phases)  # not on the caller's time
        marker = marker_of(self.seat.dir / "run", rec["container_id"])
        if marker.exists():  # the remover still works: it is the session's last process
            pid = int(marker.read_text().split()[0])
            deadline = time.monotonic() + 30
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertFalse(pid_alive(pid), "the remover did not end")
        self.assertEqual(session_containers("defer-exit7", settle=0), [])
        self.assertFalse(marker.exists())
        lines = [json.loads(l) for l in self.seat.ledger.read_text().splitlines()]
        self.assertEqual([(l["id"], l["container_removal"]) for l in lines], [("defer-exit7", "deferred")])

    def test_the_remover_holds_no_caller_pipe(self):
        # $(agent-sandbox ...) returns when the launcher exits: the remover keeps no copy of stdout
        t0 = time.monotonic()
        out = subprocess.run(["sh", "-c", f'x=$("{LAUNCHER}" --id defer-pipe -- echo hi); echo "[$x]"'],
                             capture_output=True, env=self.seat.env(), timeout=120)
        self.assertEqual(out.stdout, b"[hi]\n", out.stderr)
        self.assertLess(time.monotonic() - t0, 120)
        self.assertEqual(session_containers("defer-pipe"), [])

    def test_a_failed_session_is_removed_by_the_launcher(self):
        proc, rec = self.seat.status("--id", "defer-missing", "--", "/no/such/command")
        self.assertNotEqual(proc.returncode, 0)
        self.assertEqual(rec["container_removal"], "launcher")
        self.assertEqual(session_containers("defer-missing", settle=0), [])


class TheRemoverIsThisProgramAgain(SeatTest):
    """The remover is the launcher again (`remove-deferred`), not a fork living on with the
    launcher's pages (launcher/podman/deferred_removal.h): its command line says so, it holds
    /dev/null only, and no variable of the caller's. podman answers its first two DELETEs 500 here (a relay), so it is still at work
    when it is looked at; it removes the container at its third try and ends."""

    def test_the_remover_runs_remove_deferred_with_nothing_of_the_launcher(self):
        from test_warm_faults import DELETE, AnsweringRelay  # that module imports this one
        relay = AnsweringRelay(self.seat.dir / "relay.sock", (500, "busy (the test)"), pattern=DELETE, times=2)
        self.addCleanup(relay.close)
        text = "".join(l for l in self.seat.config_file.read_text().splitlines(True) if not l.startswith("socket = "))
        self.seat.config_file.write_text(f'socket = "{relay.path}"\n' + text)
        proc, rec = self.seat.status("--id", "defer-exec", "--", "true")
        self.assertEqual((proc.returncode, rec["container_removal"]), (0, "deferred"), proc.stderr)
        marker = marker_of(self.seat.dir / "run", rec["container_id"])
        pid = int(marker.read_text().split()[0])
        deadline = time.monotonic() + 30
        while relay.answered < 1 and time.monotonic() < deadline:  # past its go: between its tries now
            time.sleep(0.01)
        time.sleep(0.1)  # its first answer read; the next try is 0.5 s away
        argv = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
        self.assertEqual(argv, [b"agent-sandbox", b"remove-deferred", str(relay.path).encode(),
                                rec["container_id"].encode(), str(marker).encode()])
        self.assertEqual(os.path.realpath(f"/proc/{pid}/exe"), os.path.realpath(LAUNCHER))
        self.assertEqual(pathlib.Path(f"/proc/{pid}/environ").read_bytes(), b"")  # no variable of the caller's
        fds = {fd: os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        self.assertEqual(fds, {"0": "/dev/null", "1": "/dev/null", "2": "/dev/null"})
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual((pid_alive(pid), relay.answered, marker.exists()), (False, 2, False))
        self.assertEqual(session_containers("defer-exec", settle=0), [])

    def test_remove_deferred_refuses_a_marker_not_of_its_container(self):
        name = "asbx-rmdef-%d" % os.getpid()
        cid = podman("create", "--name", name, IMAGE, "true").stdout.strip()
        self.addCleanup(podman, "rm", "-f", name, check=False)
        for marker in (f"{self.seat.dir}/.removal-{'b' * 64}", f"{self.seat.dir}/x", ""):
            out = subprocess.run([LAUNCHER, "remove-deferred", str(SOCKET), cid, marker], capture_output=True)
            self.assertEqual((out.returncode, out.stdout, out.stderr.decode()),
                             (CODES["usage"], b"", f"agent-sandbox: remove-deferred: '{marker}' is not the removal "
                                                   f"marker of container '{cid}'; nothing was removed\n"), marker)
            self.assertEqual(podman("ps", "-aq", "--no-trunc", "--filter", "name=^" + name + "$").stdout.split(), [cid])


class GcKnowsTheRemover(SeatTest):
    """A container whose launcher is gone, as a session answered before its removal leaves it."""

    def orphan(self, sid, seat=None):
        seat = seat or self.seat
        p = subprocess.Popen([str(LAUNCHER), "--id", sid, "--", "sleep", "120"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=seat.env())
        for _ in range(300):
            if session_containers(sid, settle=0):
                break
            time.sleep(0.1)
        time.sleep(1)  # past start
        p.kill()
        p.wait()
        listed = json.loads(seat.run("ps", "--json").stdout)
        return [s for s in listed if s["session"] == sid][0]["container_id"]

    def test_live_remover_is_left_alone_dead_one_is_removed_without_an_orphan_line(self):
        cid = self.orphan("defer-gc")
        run_dir = self.seat.dir / "run"
        run_dir.mkdir(exist_ok=True)
        live = subprocess.Popen(["sleep", "60"])
        self.addCleanup(lambda: (live.kill(), live.wait()))
        marker_of(run_dir, cid).write_text(f"{live.pid} {int(time.time())}\n")
        gc = self.seat.run("gc")
        self.assertEqual(gc.returncode, 0, gc.stderr)
        self.assertNotIn(b"defer-gc", gc.stdout)
        self.assertEqual(session_containers("defer-gc", settle=0), ["asbx-defer-gc"])
        live.kill()
        live.wait()
        gc = self.seat.run("gc")
        self.assertIn(f"removed asbx-defer-gc (session defer-gc): its remover (pid {live.pid}) ended before it; "
                      "its record was written\n", gc.stdout.decode())
        self.assertEqual(session_containers("defer-gc", settle=0), [])
        self.assertFalse(marker_of(run_dir, cid).exists())
        ledger = self.seat.ledger.read_text().splitlines() if self.seat.ledger.exists() else []
        self.assertEqual([l for l in ledger if "defer-gc" in l], [])  # the launcher's line is the record

    def test_control_without_a_marker_gc_writes_the_orphan_line(self):
        self.orphan("defer-gc-control")
        gc = self.seat.run("gc")
        self.assertIn(b"removed asbx-defer-gc-control", gc.stdout)
        ledger = [json.loads(l) for l in self.seat.ledger.read_text().splitlines()]
        self.assertEqual([(l["id"], l["cause"]) for l in ledger], [("defer-gc-control", "orphaned")])


class GcOfAnotherSeat(SeatTest):
    """Two seat configs on one service (docs/DECISIONS.md, "Each seat config's gc judges its own"):
    a session's removal markers, session dir and ledger are its own seat's, so its seat's gc judges it."""

    orphan = GcKnowsTheRemover.orphan

    def setUp(self):
        super().setUp()
        self.other = Seat()
        self.addCleanup(self.other.cleanup)

    def ledger_ids(self, seat):
        return [json.loads(l)["id"] for l in seat.ledger.read_text().splitlines()] if seat.ledger.exists() else []

    def test_another_seats_orphan_is_left_to_its_gc_and_its_ledger(self):
        cid = self.orphan("other-seat", seat=self.other)
        run_dir = self.other.dir / "run"
        live = subprocess.Popen(["sleep", "60"])  # the other seat's remover, at work
        self.addCleanup(lambda: (live.kill(), live.wait()))
        marker_of(run_dir, cid).write_text(f"{live.pid} {int(time.time())}\n")
        gc = self.seat.run("gc")
        self.assertEqual((gc.returncode, gc.stdout), (0, b""), gc.stderr)
        self.assertEqual(session_containers("other-seat", settle=0), ["asbx-other-seat"])
        marker_of(run_dir, cid).unlink()  # its remover gone without a word: an orphan, still the other seat's
        gc = self.seat.run("gc")
        self.assertEqual((gc.returncode, gc.stdout), (0, b""), gc.stderr)
        self.assertEqual(session_containers("other-seat", settle=0), ["asbx-other-seat"])
        gc = self.other.run("gc")
        self.assertIn(b"removed asbx-other-seat (session other-seat): its launcher (pid ", gc.stdout)
        self.assertEqual(session_containers("other-seat", settle=0), [])
        self.assertEqual((self.ledger_ids(self.seat), self.ledger_ids(self.other)), ([], ["other-seat"]))
        self.assertFalse((run_dir / "other-seat").exists())  # its session dir went with it

    def test_a_seat_taken_down_leaves_its_orphans_to_any_seat(self):
        self.orphan("gone-seat", seat=self.other)
        run_dir, gone = self.other.dir / "run", self.other.dir / "run.gone"
        run_dir.rename(gone)  # its runtime dir gone (its session dir's mounts move along)
        self.addCleanup(lambda: (gone.rename(run_dir), self.other.run("gc")) if gone.exists() else None)
        gc = self.seat.run("gc")
        if TEST_POOL:  # a warm orphan: its claim file went with the dir, so gc knows the member alone, and no session
            self.assertRegex(gc.stdout.decode(), r"removed asbx-gone-seat \(session pool-[0-9a-f]{16}\): its launcher \(pid ")
            self.assertEqual(self.ledger_ids(self.seat), [])
        else:
            self.assertIn(b"removed asbx-gone-seat (session gone-seat): its launcher (pid ", gc.stdout)
            self.assertEqual(self.ledger_ids(self.seat), ["gone-seat"])
        self.assertEqual(session_containers("gone-seat", settle=0), [])
        gone.rename(run_dir)  # back: its own gc takes the session dir no container leads to
        self.assertIn(b"removed the session dir of gone-seat", self.other.run("gc").stdout)
        self.assertFalse((run_dir / "gone-seat").exists())
