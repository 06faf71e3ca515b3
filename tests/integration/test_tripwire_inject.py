"""The tripwire in inject mode (issue 33): the launcher's own end-of-session secret scan reads every
file of HOME, decoys included. Their watches are gone before it (launcher/wall/tripwire.cc stop():
drained, then disarmed), so a session that opened nothing records no canary, and an agent's real
read is recorded exactly once. Kill mode's stderr line and the record say the same thing.
Without the fix every inject session recorded all 16 decoys opened at the same millisecond."""
import json
import os
import unittest

from harness import CODES
import test_agents_e2e as e2e
from test_inject import InjectSeat, claude_real

TRIP = "agent-sandbox: tripwire: "


class LauncherTripsNothing(InjectSeat):
    def run_session(self, tag, script, extra=""):
        up = self.upstream(tag)
        self.seat.write(self.base_config + extra + up.seat_egress(self.ca))
        credential = self.fake_credential("%s.json" % tag, claude_real())
        session = "tw-inj-%s-%d" % (tag, os.getpid())
        proc, record = self.seat.status("--id", session, "--runtime", "claude", "--credential", str(credential),
                                        "--egress", "default", "--", "sh", "-c", script, timeout=e2e.RUN_TIMEOUT)
        self.assertNoContainer(session)
        self.assertEqual(record["credentials"][0]["mode"], "inject", json.dumps(record["credentials"]))
        # [] rather than null: the secret scan ran (it is what read every decoy)
        self.assertEqual(record["credential_exposed"], [], json.dumps(record["credential_exposed"]))
        return proc, record, [l for l in proc.stderr.decode().splitlines() if l.startswith(TRIP)]

    def test_a_session_that_opens_nothing_records_no_canary_the_control_records_the_one_read(self):
        proc, record, trips = self.run_session("twq", "true")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        self.assertEqual(record["tripwire"]["canaries"], [], json.dumps(record["tripwire"]))
        self.assertIsNone(record["tripwire"]["first"])
        self.assertEqual(trips, [])
        # the control: the agent really reads one decoy: exactly that one, once
        proc, record, trips = self.run_session("twr", "cat ~/.pypirc >/dev/null")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        self.assertEqual([(c["path"], c["count"]) for c in record["tripwire"]["canaries"]], [(".pypirc", 1)])
        self.assertEqual(record["tripwire"]["first"], "canary ~/.pypirc opened")
        self.assertEqual(len(trips), 1, trips)

    def test_kill_mode_says_on_stderr_what_the_record_says(self):
        kill = 'tripwire = "kill"\n'
        proc, record, trips = self.run_session("twk", "echo before; true", kill)
        self.assertEqual((proc.returncode, record["outcome"], record["exit_code"]), (0, "exited", 0), proc.stderr)
        self.assertEqual((trips, record["tripwire"]["canaries"]), ([], []))
        # the control: a real read ends the session, and both say so
        proc, record, trips = self.run_session("twj", "echo before; cat ~/.pypirc >/dev/null; sleep 30", kill)
        self.assertEqual((proc.returncode, record["outcome"], record["error_kind"]),
                         (CODES["tripwire"], "killed", "tripwire"), proc.stderr)
        self.assertEqual(trips, [TRIP + 'canary ~/.pypirc opened (tripwire = "kill": the session ends)'])
        self.assertEqual([(c["path"], c["count"]) for c in record["tripwire"]["canaries"]], [(".pypirc", 1)])


if __name__ == "__main__":
    unittest.main(verbosity=2)
