"""Faults injected for real that touch nothing shared: the ledger's filesystem full (a small
tmpfs this test mounts and unmounts): the session's result intact and a warning said; the
caller's stdout closed early: the session stopped as by SIGHUP, recorded, nothing left."""
import json
import subprocess

from harness import LAUNCHER, SeatTest, unavailable


class LedgerFull(SeatTest):
    def setUp(self):
        super().setUp()
        self.mount = self.seat.state_home / "agent-sandbox"
        self.mount.mkdir(parents=True)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "asbx-ledger-full",
                                  str(self.mount)], capture_output=True, text=True)
        if mounted.returncode != 0:
            unavailable(self, "cannot mount a tmpfs (needs root): " + mounted.stderr.strip())
        self.addCleanup(subprocess.run, ["umount", "--lazy", str(self.mount)], check=False)
        # Fill it to the last block: the ledger line cannot be written.
        subprocess.run(["dd", "if=/dev/zero", "of=" + str(self.mount / "filler"), "bs=4k"], capture_output=True)

    def test_session_result_is_intact_and_a_warning_is_said(self):
        proc, rec = self.seat.status("--id", "faults-ledger-full", "--", "sh", "-c", "echo out; echo err >&2; exit 7")
        self.assertEqual(proc.returncode, 7, proc.stderr)
        self.assertEqual(proc.stdout, b"out\n")
        ledger = str(self.seat.ledger)
        self.assertIn(("agent-sandbox: warning: cannot append to ledger %s: No space left on device\n" % ledger)
                      .encode(), proc.stderr)
        self.assertIn(b"err\n", proc.stderr)
        self.assertEqual((rec["outcome"], rec["exit_code"], rec["agent_exit_code"]), ("exited", 7, 7))
        self.assertIsNone(rec["error_kind"])
        self.assertTrue(rec["container_removed"])
        self.assertNoContainer("faults-ledger-full")
        # Nothing half-written: the ledger holds whole JSON lines or nothing.
        text = self.seat.ledger.read_text() if self.seat.ledger.exists() else ""
        for line in text.splitlines():
            json.loads(line)
        self.assertTrue(text == "" or text.endswith("\n"), repr(text[-80:]))


class CallerStdoutClosed(SeatTest):
    def test_reader_gone_stops_the_session_like_sighup(self):
        status = self.seat.dir / "status.json"
        proc = subprocess.Popen([str(LAUNCHER), "--status-file", str(status), "--id", "faults-stdout-closed", "--",
                                 "sh", "-c", "while :; do echo y; done"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=self.seat.env())
        self.assertEqual(proc.stdout.readline(), b"y\n")
        proc.stdout.close()
        stderr = proc.communicate(timeout=120)[1]
        self.assertEqual(proc.returncode, 128 + 1, stderr)
        rec = json.loads(status.read_text())
        self.assertEqual((rec["outcome"], rec["cause"], rec["signal"], rec["exit_code"]), ("killed", "signal", 1, 129))
        self.assertEqual(rec["message"], "stopped: the launcher received signal 1")
        self.assertTrue(rec["container_removed"])
        self.assertNoContainer("faults-stdout-closed")
        lines = self.seat.ledger.read_text().splitlines()
        self.assertEqual([json.loads(line)["id"] for line in lines], ["faults-stdout-closed"])
