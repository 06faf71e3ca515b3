"""Faults injected into the podman service and into the launcher itself, for real, against a
podman service of this test's own (private_service.py; the shared one is never touched):

- the service SIGKILLed mid-session, then restarted: the agent is stopped without it, the
  container removed once the service is back, the record says podman_unreachable and why;
- the service SIGKILLed and not back in time: the agent is stopped, the record says the
  container is left to gc, and `agent-sandbox gc` removes it once the service is back;
- the launcher SIGKILLed at points spread over a session's whole life (before create to after
  delete), each followed by `gc`.

The launcher is sandbox-run (the seat side, with --slots) so that slot claims are exercised.
Every test ends with 0 containers, 0 session dirs, 0 slot claims and no agent process left.
(Transient units: a local rootful seat makes none; the seat tests check them.)"""
import json
import os
import re
import signal
import subprocess
import time
import unittest

from harness import CODES, LAUNCHER, SEAT_RUN, Seat, unavailable
from private_service import PrivateService, ledger_records, processes_with, slot_claims


class PrivateServiceTest(unittest.TestCase):
    def setUp(self):
        if not LAUNCHER.exists():
            unavailable(self, f"{LAUNCHER} is not built")
        try:
            self.service = PrivateService(prefix="asbx-faults-").start()
        except (RuntimeError, FileNotFoundError) as e:
            unavailable(self, f"cannot start a private podman service: {e}")
        self.addCleanup(self.service.stop)
        self.seat = Seat(socket=self.service.socket)
        self.addCleanup(self.seat.cleanup)
        self.slot_dir = self.seat.state_home / "agent-sandbox" / "slots"

    def launch(self, session_id, *argv):
        status = self.seat.dir / f"status-{session_id}.json"
        proc = subprocess.Popen([str(SEAT_RUN), "--status-file", str(status), "--slots", "2", "--id", session_id,
                                 "--", *argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self.seat.env())
        return proc, status

    def assertNothingLeft(self, session_id, marker=None):
        self.assertEqual(self.service.containers(session_id), [], "container left behind")
        self.assertFalse((self.seat.dir / "run" / session_id).exists(), "session dir left behind")
        self.assertEqual(slot_claims(self.slot_dir), [], "slot claim left behind")
        if marker:
            self.assertEqual(processes_with(marker), [], "the agent still runs")

    def gc(self):
        return subprocess.run([str(SEAT_RUN), "gc"], capture_output=True, text=True, timeout=120, env=self.seat.env())


def wait_for_line(proc, want, timeout=180):
    line = proc.stdout.readline()
    if line != want:
        proc.kill()
        raise AssertionError("expected %r from the agent, got %r; stderr: %r" % (want, line, proc.stderr.read()))


class PodmanServiceKilled(PrivateServiceTest):
    MARKER = "3607"  # `sleep 3607`: the agent's own process, found by its argv

    def test_killed_mid_session_and_restarted(self):
        import json
        proc, status = self.launch("faults-podman-back", "sh", "-c", "echo started; exec sleep " + self.MARKER)
        wait_for_line(proc, b"started\n")
        self.service.kill()
        time.sleep(1)
        self.service.start()  # what socket activation does on the next connection
        out, err = proc.communicate(timeout=120)
        rec = json.loads(status.read_text())
        self.assertEqual(proc.returncode, CODES["podman_unreachable"], err)
        self.assertEqual((rec["outcome"], rec["error_kind"], rec["agent_exit_code"]),
                         ("launcher_error", "podman_unreachable", None))
        self.assertRegex(rec["message"], "^" + re.escape(
            f"the podman service went away mid-session (the attach stream from {self.service.socket} ended while "
            "the agent still ran); the agent was stopped without it (SIGKILL to the container's init, pid ") + r"\d+\)$")
        self.assertIn(("sandbox-run: " + rec["message"] + "\n").encode(), err)
        self.assertTrue(rec["container_removed"], rec["warnings"])
        self.assertEqual([r["error_kind"] for r in ledger_records(self.seat.ledger)], ["podman_unreachable"])
        self.assertNothingLeft("faults-podman-back", self.MARKER)

    def test_killed_and_back_too_late_gc_removes_the_container(self):
        import json
        proc, status = self.launch("faults-podman-gone", "sh", "-c", "echo started; exec sleep " + self.MARKER)
        wait_for_line(proc, b"started\n")
        self.service.kill()
        out, err = proc.communicate(timeout=120)
        rec = json.loads(status.read_text())
        self.assertEqual(proc.returncode, CODES["podman_unreachable"], err)
        self.assertEqual(rec["error_kind"], "podman_unreachable")
        self.assertRegex(rec["message"], r"^the podman service went away mid-session \(the attach stream from .* ended "
                                         r"while the agent still ran\); the agent was stopped without it")
        self.assertFalse(rec["container_removed"])
        self.assertIn(f"could not remove container {rec['container_id']}; agent-sandbox gc will", rec["warnings"])
        self.assertEqual(processes_with(self.MARKER), [], "the agent still runs without its service")
        self.service.start()
        gc = self.gc()
        self.assertEqual(gc.returncode, 0, gc.stderr)
        self.assertRegex(gc.stdout, r"^removed asbx-faults-podman-gone \(session faults-podman-gone\): "
                                    r"its launcher \(pid \d+\) is gone\n$")
        # The launcher's own line, then gc's for the container it left.
        self.assertEqual([(r["error_kind"], r["cause"], r["container_removed"]) for r in ledger_records(self.seat.ledger)],
                         [("podman_unreachable", None, False), (None, "orphaned", True)])
        self.assertNothingLeft("faults-podman-gone", self.MARKER)


class LauncherKilled(PrivateServiceTest):
    """SIGSTOP at a point of the session, note the phase podman shows, SIGKILL, gc."""

    # Seconds after exec; under load setup takes 1-5 s. The last points come after the agent ended.
    # "listed": the moment the container shows in podman's list (created, initialised or configured;
    # the times alone can miss that window of ~0.1 s).
    POINTS = (0.0, 0.05, "listed", 0.15, 0.3, 0.5, 0.8, 1.2, 1.8, 2.5, 3.5, 5.0, "ended", "removed")

    def phase(self, session_id, seen_before):
        rows = self.service.containers(session_id)
        if rows:
            return rows[0].split()[1].lower()
        return "after delete" if seen_before else "before create"

    @staticmethod
    def ran(status):
        try:
            rec = json.loads(status.read_text())
        except (OSError, ValueError):
            return False
        return rec.get("outcome") == "exited" and rec.get("agent_exit_code") == 0

    def kill_at(self, n, point):
        session_id = f"faults-kill-{n}"
        proc, status = self.launch(session_id, "sh", "-c", "echo started; sleep 1; echo ended")
        seen = False
        if point == "ended":
            wait_for_line(proc, b"started\n")
            wait_for_line(proc, b"ended\n")  # the agent is done: wait, inspect, delete are next
        elif point == "listed":  # stopped first, then looked at: a list call takes as long as the window
            deadline = time.monotonic() + 30
            while proc.poll() is None and time.monotonic() < deadline:
                proc.send_signal(signal.SIGSTOP)
                if self.service.containers(session_id):
                    break
                proc.send_signal(signal.SIGCONT)
                time.sleep(0.01)
        elif point == "removed":
            wait_for_line(proc, b"started\n")
            seen = True
            while self.service.containers(session_id):  # deleted; the record is being written
                time.sleep(0.02)
        else:
            time.sleep(point)
        proc.send_signal(signal.SIGSTOP)
        # A record of the agent's exit means its container existed: on a loaded seat the launcher can
        # be stopped after its answer and the detached removal, before it exits (not "before create").
        seen = seen or point in ("ended",) or self.ran(status)
        phase = "finished" if proc.poll() is not None else self.phase(session_id, seen)
        proc.kill()
        proc.communicate(timeout=60)
        time.sleep(0.5)  # a create the launcher sent may still complete in podman
        before_gc = self.service.containers(session_id)
        gc = self.gc()
        self.assertEqual(gc.returncode, 0, gc.stderr)
        self.assertNothingLeft(session_id)
        # The record comes before the removal (the caller is answered first; a detached remover
        # deletes the container): killed then, the container may still show "exited".
        answered = status.exists()
        self.assertFalse(answered and phase not in ("finished", "after delete", "exited", "stopped"),
                         "a status record although the launcher was killed at " + phase)
        # Accounted for: a container gc removed gets the ledger line its launcher could not write.
        lines = [r for r in ledger_records(self.seat.ledger) if r["id"] == session_id]
        self.assertLessEqual(len(lines), 1, lines)
        if answered:  # its own line (or none, killed between the two writes); never an orphan's
            self.assertEqual([r["outcome"] for r in lines if r["outcome"] != "exited"], [], lines)
        elif phase not in ("before create", "after delete", "finished"):
            self.assertEqual([(r["outcome"], r["cause"]) for r in lines], [("killed", "orphaned")],
                             f"killed at {phase}; before gc {before_gc}; gc said {gc.stdout!r} {gc.stderr!r}")
            self.assertRegex(lines[0]["message"], r"^removed by gc: its launcher \(pid \d+\) is gone$")
        return phase

    def test_killed_at_every_phase_then_gc_leaves_nothing(self):
        phases = [self.kill_at(n, point) for n, point in enumerate(self.POINTS)]
        print("\nlauncher killed at:", ", ".join(f"{p}={ph}" for p, ph in zip(self.POINTS, phases)))
        self.assertIn("before create", phases)
        self.assertTrue({"running", "up"} & set(phases), phases)  # podman 4.3's list says "up"
        self.assertTrue({"created", "initialized", "configured"} & set(phases), phases)
        self.assertTrue({"exited", "stopped", "after delete"} & set(phases), phases)
        self.assertEqual(self.service.containers(), [])


if __name__ == "__main__":
    unittest.main()
