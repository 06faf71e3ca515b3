"""A warm session never runs beside an orphan in its workspace (docs/THREATS.md, the warm pool): a
launcher SIGKILLed mid-session lets go of its workspace's busy lock while its container runs on;
a warm launch whose seat's files show it runs its gc on a thread beside its claim and joins it before
its agent starts, so the orphan is gone by then, as a cold launch's gc (which runs first) removes it.
With nothing in sight, the refill's gc after the record is the launch's (NothingInSight)."""
import json
import socket
import subprocess
import threading
import time

from harness import LAUNCHER, POOL_KEYS, SOCKET, Seat, UnixRelay, podman, session_containers
from test_warm_path import HoldingRelay, WarmSeat

BEAT = "while :; do date +%s%N > .b && mv .b beat; done"  # a beat every few ms while it lives, never half-written
# The agent's first instruction is its clock; later, the orphan's last beat: before it, or it ran beside.
AFTER = 'now=$(date +%s%N); sleep 0.5; last=$(cat beat); [ "$last" -lt "$now" ] && echo gone-before || echo beside'


class RemovalsHeld(UnixRelay):
    """The service behind a relay that holds each removal (a DELETE) for HOLD s: a gc whose removal is
    slow, so that a launch that did not wait for its gc would start its agent beside the orphan."""
    HOLD = 3

    def relay(self, conn):
        with conn, socket.socket(socket.AF_UNIX) as up:
            up.connect(self.upstream)
            back = threading.Thread(target=HoldingRelay.pipe, args=(up, conn), daemon=True)
            back.start()
            try:
                while data := conn.recv(65536):
                    if data.startswith(b"DELETE "):
                        time.sleep(self.HOLD)
                    up.sendall(data)
                up.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            back.join(60)


def named(name):
    out = podman("ps", "-a", "--filter", f"name=^{name}$", "--format", "json").stdout
    return [c["State"] for c in json.loads(out or "[]")]


def orphan_beating(test, sid, ws, kill=True):
    """A session of SID beating in WS, its launcher SIGKILLed once its agent runs: an orphan (with
    KILL false, left running, in test.beating)."""
    first = test.beating = subprocess.Popen([str(LAUNCHER), "--id", sid, "--workspace", str(ws), "--timeout", "10m",
                              "--", "sh", "-c", BEAT], env=test.seat.env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    until = time.monotonic() + 30
    while not (ws / "beat").exists() or named("asbx-" + sid) != ["running"]:
        test.assertLess(time.monotonic(), until, "the first session did not start")
        time.sleep(0.05)
    if kill:
        first.kill()
        first.wait(timeout=10)


class KilledLauncher(WarmSeat):
    def test_a_warm_session_never_runs_beside_a_killed_launchers_orphan_in_its_workspace(self):
        self.fill()
        ws = self.workspace("shared")
        orphan_beating(self, "orphaned", ws)
        self.assertEqual(named("asbx-orphaned"), ["running"])  # its agent beats on, its launcher gone
        proc, rec = self.seat.status("--id", "after", "--workspace", str(ws), "--", "sh", "-c", AFTER)
        self.assertEqual((proc.returncode, rec["path"]), (0, "warm"), proc.stderr)
        self.assertEqual(proc.stdout, b"gone-before\n")  # the orphan's last beat came before this agent's start
        self.assertEqual(named("asbx-orphaned"), [])
        self.assertIn("gc", rec["durations_ms"]["phases"])


class KilledBetweenTheLookAndTheLock(WarmSeat):
    """A launch looks at the seat's files for a killed launcher's session (a cold one: its gc, run
    first), then takes the workspace's lock. A launcher of that workspace killed in between lets go
    of the lock the new one then takes: the launch looks again once it holds it (hostile pass, stop
    59; gdb holds it at the lock)."""

    def raced(self, path):
        ws = self.workspace("raced")
        orphan_beating(self, "raced-first", ws, kill=False)
        first = self.beating
        self.addCleanup(lambda: first.poll() is None and (first.kill(), first.wait(), self.seat.run("gc")))
        status = self.seat.dir / "raced.json"
        gdb = subprocess.run(
            ["gdb", "-batch", "-nx", "-ex", "set breakpoint pending on", "-ex", "break asbx::GitGuard::lock_workspace",
             "-ex", "run", "-ex", f"shell kill -9 {first.pid}", "-ex", "shell sleep 0.5", "-ex", "continue",
             "--args", str(LAUNCHER), "--id", "raced", "--workspace", str(ws), "--status-file", str(status),
             "--", "sh", "-c", f"({AFTER}) > verdict"],
            env=self.seat.env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=180)
        first.wait(timeout=10)
        self.assertIn(b"Breakpoint 1, asbx::GitGuard::lock_workspace", gdb.stdout, gdb.stderr)
        rec = json.loads(status.read_text())
        self.assertEqual((rec["exit_code"], rec["path"]), (0, path), gdb.stdout[-2000:])
        self.assertEqual((ws / "verdict").read_text(), "gone-before\n")  # the orphan's last beat came before this agent's start
        self.assertEqual(named("asbx-raced-first"), [])
        self.assertIn("gc", rec["durations_ms"]["phases"])

    def test_a_launcher_killed_after_the_look_has_its_orphan_gone_before_the_agent(self):
        self.fill()
        self.ready(2)
        self.raced("warm")  # the first session took one member; this one takes the other

    def test_a_launcher_killed_after_a_cold_launchs_gc_has_its_orphan_gone_before_the_agent(self):
        self.seat.config_file.write_text(self.base)  # no pool: both sessions cold
        self.raced("cold")


class NothingInSight(WarmSeat):
    """A warm launch on a range seat whose files show no killed launcher's session runs no gc of its
    own: the refill it spawns after its record runs it (one joined at the end waited behind the last
    session's removal: docs/BENCHMARKS.md "The gc a warm session waited for"). What that gc takes is
    still taken, its orphan line in this seat's ledger."""

    def test_a_deleted_seats_orphan_is_taken_by_the_refills_gc_after_a_warm_session(self):
        other = Seat()
        self.addCleanup(other.cleanup)
        text = "".join(l for l in other.config_file.read_text().splitlines(True) if not l.startswith(POOL_KEYS))
        other.config_file.write_text(text)
        sid = "orphan-of-a-gone-seat"
        p = subprocess.Popen([str(LAUNCHER), "--id", sid, "--", "sleep", "300"], env=other.env(),
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        until = time.monotonic() + 60
        while named("asbx-" + sid) != ["running"]:
            self.assertLess(time.monotonic(), until, "the other seat's session did not start")
            time.sleep(0.1)
        p.kill()
        p.wait(timeout=10)
        other.config_file.unlink()  # the seat deleted: any seat's gc takes its orphan
        self.addCleanup(other.run, "gc")  # its own gc takes its session dir and HOME's mount
        self.addCleanup(other.config_file.write_text, text)
        self.fill()
        self.ready()
        proc, rec = self.seat.status("--id", "nothing-in-sight", "--", "true")
        self.assertEqual((proc.returncode, rec["path"]), (0, "warm"), proc.stderr)
        self.assertNotIn("gc", rec["durations_ms"]["phases"])  # none ran beside it
        until = time.monotonic() + 60
        while named("asbx-" + sid) or sid not in self.ledger_causes():
            self.assertLess(time.monotonic(), until, "the refill's gc did not take the orphan")
            time.sleep(0.2)
        self.assertEqual(self.ledger_causes(), {"nothing-in-sight": None, sid: "orphaned"})

    def ledger_causes(self):
        lines = self.seat.ledger.read_text().splitlines() if self.seat.ledger.exists() else []
        return {r["id"]: r.get("cause") for r in map(json.loads, lines)}


class TheIdOfAKilledColdSession(WarmSeat):
    """A cold launcher SIGKILLed with its seat tmpfs mounted leaves that tmpfs's owner file; a warm
    session of the id then takes the dir and writes its own owner: the live owner counts, whichever
    file names it (launcher/lifecycle/session_owner.h). gc keeps the warm session's dir, and a third
    launcher of the id is refused while it runs (hostile pass, stop 57)."""

    def test_a_killed_cold_launchers_owner_file_hides_no_live_warm_session(self):
        self.fill()
        self.ready()
        self.seat.config_file.write_text(self.base)  # the pool off for the first: cold
        first = subprocess.Popen([str(LAUNCHER), "--id", "reused", "--", "sleep", "60"], env=self.seat.env(),
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        until = time.monotonic() + 30
        while named("asbx-reused") != ["running"]:
            self.assertLess(time.monotonic(), until, "the first session did not start")
            time.sleep(0.05)
        first.kill()
        first.wait(timeout=10)
        self.seat.config_file.write_text("pool_size = 2\n" + self.base)
        status = self.seat.dir / "warm.json"
        warm = subprocess.Popen([str(LAUNCHER), "--id", "reused", "--status-file", str(status), "--", "sh", "-c",
                                 "sleep 8; echo warm-done"], env=self.seat.env(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            time.sleep(4)  # its gc beside the claim has removed the orphan by now, and its dir with it before
            self.assertTrue((self.seat.dir / "run" / "reused" / "owner").exists(), "the warm session's dir was taken")
            proc, rec = self.seat.status("--id", "reused", "--", "true")
            self.assertLauncherError(proc, rec, "create_failed", "--id reused: a session of that id is already running "
                                     f"on this seat (its launcher is pid {warm.pid}); nothing was created")
        finally:
            out, err = warm.communicate(timeout=60)
        self.assertEqual((warm.returncode, out), (0, b"warm-done\n"), err)
        self.assertEqual(json.loads(status.read_text())["path"], "warm")
        self.assertEqual(session_containers("reused"), [])

    def test_a_warm_session_never_runs_beside_a_killed_cold_launchers_orphan_of_its_own_id(self):
        """The same with one id, the first cold (second hostile pass, stop 57): the warm claim takes
        the dead launcher's session dir and clears its owner files, the evidence the launch waits on;
        it is read before the claim. Its gc's removal is held (RemovalsHeld): a launch that did not
        wait for it would run beside the orphan every time (the race to the gc beside the claim is gone)."""
        relay, real = RemovalsHeld(self.seat.dir / "held.sock"), self.base
        self.addCleanup(relay.close)
        self.addCleanup(setattr, self, "base", real)  # the drain goes to the service itself
        self.base = self.base.replace(f'socket = "{SOCKET}"', f'socket = "{relay.path}"')
        self.assertIn(relay.path, self.base)
        self.seat.config_file.write_text("pool_size = 2\n" + self.base)
        self.fill()
        self.ready()
        ws = self.workspace("same-id")
        self.seat.config_file.write_text(self.base)  # the pool off for the first: cold
        orphan_beating(self, "reused-ws", ws)
        self.seat.config_file.write_text("pool_size = 2\n" + self.base)
        proc, rec = self.seat.status("--id", "reused-ws", "--workspace", str(ws), "--", "sh", "-c", AFTER)
        self.assertEqual((proc.returncode, rec["path"]), (0, "warm"), proc.stderr)
        self.assertEqual(proc.stdout, b"gone-before\n")  # the orphan's last beat came before this agent's start
        self.assertEqual(session_containers("reused-ws"), [])
