"""The launcher's lines on a terminal the agent shares (docs/THREATS.md, "The launcher's own
streams"): the agent ends its stderr inside an unterminated title sequence with the conceal
attribute on; the launcher's line that follows on the same terminal starts with a reset (CAN, ST,
SGR 0), so a terminal neither swallows it into the title nor hides it."""
import os
import pty
import select
import subprocess
import time
import unittest

from harness import LAUNCHER, SeatTest

RESET = b"\x18\x1b\\\x1b[0m"
OPEN_SEQUENCE = b"\x1b[8m\x1b]2;"


def run_on_a_terminal(argv, env, timeout=120):
    """Runs argv with stdin, stdout and stderr on one pty; returns (exit code, every byte it wrote)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    got, until = bytearray(), time.monotonic() + timeout
    while time.monotonic() < until:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer is gone
                break
            if not data:
                break
            got += data
        elif p.poll() is not None:
            break
    os.close(master)
    return p.wait(timeout=30), bytes(got)


class TerminalReset(SeatTest):
    def test_a_sequence_the_agent_left_open_does_not_swallow_the_launchers_line(self):
        script = r'printf "\033[8m\033]2;" >&2; sleep 30'
        code, got = run_on_a_terminal([str(LAUNCHER), "--id", "tr-open", "--timeout", "3s", "--", "sh", "-c", script],
                                      self.seat.env())
        self.assertEqual(code, 211, got)
        opened = got.find(OPEN_SEQUENCE)
        self.assertGreaterEqual(opened, 0, got)  # the attack reached the terminal raw (the control)
        line = got.find(b"killed: the session's timeout", opened)
        self.assertGreater(line, opened, got)
        # What a terminal would have swallowed: the launcher's line right after the open sequence.
        # It starts with the reset, after the agent's bytes and before its own text.
        self.assertEqual(got.rfind(RESET, opened, line) > opened, True, got[opened:line + 40])
        self.assertNoContainer("tr-open")


if __name__ == "__main__":
    unittest.main()
