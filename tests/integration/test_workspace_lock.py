"""One session per workspace at a time (docs/THREATS.md, "Two sessions on the same workspace"): a
second session asking for a workspace another one holds is refused before anything is created; the
same request on another workspace, or after the first ended, runs."""
import os
import subprocess
import time
import unittest

from harness import CODES, LAUNCHER, SeatTest, session_containers

AGENT_UID = 1000


class WorkspaceLock(SeatTest):
    def workspace(self, name):
        ws = self.seat.workspaces / name
        ws.mkdir()
        os.chown(ws, AGENT_UID, AGENT_UID)
        return ws

    def test_a_second_session_on_a_held_workspace_is_refused_and_nothing_is_made(self):
        ws, other = self.workspace("held"), self.workspace("other")
        a = subprocess.Popen([str(LAUNCHER), "--id", "wl-a", "--workspace", str(ws), "--", "sh", "-c",
                              "echo started; sleep 6"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, env=self.seat.env())
        self.assertEqual(a.stdout.readline(), b"started\n")  # A holds the workspace and its agent runs
        proc, record = self.seat.status("--id", "wl-b", "--workspace", str(ws), "--", "true")
        message = (f"workspace '{ws}' is in use by another session on this seat (one session per workspace at a "
                   "time); nothing was created")
        self.assertLauncherError(proc, record, "workspace_rejected", message)
        self.assertEqual(session_containers("wl-b"), [])
        # The control: another workspace runs meanwhile (the refusal is the held workspace's).
        proc, record = self.seat.status("--id", "wl-c", "--workspace", str(other), "--", "true")
        self.assertEqual((proc.returncode, record["outcome"]), (0, "exited"), proc.stderr)
        out, err = a.communicate(timeout=120)
        self.assertEqual(a.returncode, 0, err)
        self.assertEqual(session_containers("wl-a"), [])
        # Once A ended, the workspace is free again.
        proc, record = self.seat.status("--id", "wl-d", "--workspace", str(ws), "--", "true")
        self.assertEqual((proc.returncode, record["outcome"]), (0, "exited"), proc.stderr)


if __name__ == "__main__":
    unittest.main()
