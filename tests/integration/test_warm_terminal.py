"""Terminal sessions on the warm path (docs/DECISIONS.md "Issue 37: the warm pool"): a terminal is
fixed at create, so a seat keeps members made with one (`pool_tty_size`) beside those made without
(`pool_size`). A `--tty` session takes a member with a terminal and answers as a cold one does (its
terminal, its window size, its exit code); each kind goes cold when the seat keeps none of it, and
says why; a fill makes each kind up to its count and the refill after a claim makes the kind taken.
"""
import fcntl
import json
import os
import pty
import shutil
import struct
import subprocess
import termios

from harness import CODES, LAUNCHER, POOL_KEYS, RUNSC_DIR, SeatTest, session_entries, unavailable
from test_warm_path import WarmSeat, members

COMMAND = ("--", "sh", "-c", "tty; stty size; exit 3")


class RefusedKind(SeatTest):
    def test_a_seat_that_cannot_keep_members_names_the_key_it_set(self):
        """A gVisor seat keeps no member of either kind; the refusal named pool_size when only
        pool_tty_size was set (found reading the change again)."""
        if not shutil.which("runsc"):
            unavailable(self, "runsc is not installed")
        base = "".join(l for l in self.seat.config_file.read_text().splitlines(True) if not l.startswith(POOL_KEYS))
        extra = "" if 'runtime = "runsc"' in base else f'runtime = "runsc"\nrunsc_dir = "{RUNSC_DIR}"\n'
        self.seat.config_file.write_text("pool_tty_size = 1\n" + extra + base)
        proc = self.seat.run("pool", "fill")
        self.assertEqual((proc.returncode, proc.stderr.decode()),
                         (CODES["config"], f"{LAUNCHER.name}: pool: pool_tty_size in {self.seat.config_file}: "
                                           "the pool cannot carry gVisor isolation yet\n"))
        self.assertEqual(members(self.seat), {})
        self.assertEqual(session_entries(self.seat.dir / "run"), [])


class WarmTerminal(WarmSeat):
    def kinds(self, plain, tty):
        self.seat.config_file.write_text(f"pool_size = {plain}\npool_tty_size = {tty}\n" + self.base)

    def in_terminal(self, *args, rows=33, cols=101):
        """The launcher with a terminal of the given size as its stdin and stdout; (exit code, output)."""
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        proc = subprocess.Popen([str(LAUNCHER), *args], stdin=slave, stdout=slave, stderr=subprocess.PIPE,
                                env=self.seat.env(), start_new_session=True)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer of the terminal is gone
                break
            if not chunk:
                break
            out += chunk
        os.close(master)
        err = proc.communicate(timeout=60)[1]
        self.assertNotIn(b"error", err.lower(), err)
        # "^@": the container terminal's echo of a NUL podman sends when stdin is attached (the podman
        # CLI's `run -it` prints it too), on both paths.
        return proc.returncode, out.replace(b"^@", b"")

    def status(self, name):
        return json.loads((self.seat.dir / name).read_text())

    def test_a_terminal_session_takes_a_member_made_with_one_and_answers_as_cold(self):
        self.kinds(0, 1)
        proc = self.fill()
        self.assertRegex(proc.stderr.decode(), r"made member [0-9a-f]{12} \(with a terminal\)\n")
        made = set(members(self.seat))
        self.assertEqual(len(made), 1)
        code, out = self.in_terminal("--tty", "--id", "warm-tty", "--status-file", str(self.seat.dir / "warm.json"), *COMMAND)
        warm = self.status("warm.json")
        self.assertEqual((code, warm["path"], warm["path_reason"], warm["exit_code"]), (3, "warm", None, 3), out)
        self.assertIn(warm["container_id"], made)
        self.assertEqual(out, b"/dev/pts/0\r\n33 101\r\n")
        self.ready(1)  # the refill made the kind it took
        self.kinds(0, 0)  # CONTROL: the pool off, the same session cold
        self.fill()
        code, cold_out = self.in_terminal("--tty", "--id", "cold-tty", "--status-file", str(self.seat.dir / "cold.json"), *COMMAND)
        cold = self.status("cold.json")
        self.assertEqual((code, cold["path"], cold_out), (3, "cold", out))

    def test_each_kind_goes_cold_with_its_reason_when_the_seat_keeps_none_of_it(self):
        self.kinds(1, 0)
        self.fill()
        code, out = self.in_terminal("--tty", "--id", "no-tty-member", "--status-file", str(self.seat.dir / "a.json"), *COMMAND)
        rec = self.status("a.json")
        self.assertEqual((code, rec["path"], rec["path_reason"]),
                         (3, "cold", "the seat keeps no member made with a terminal (pool_tty_size = 0)"))
        self.kinds(0, 1)
        self.fill()  # the plain member goes: it was made for another plan
        self.assertEqual(len(members(self.seat)), 1)
        proc, rec = self.seat.status("--id", "no-plain-member", "--", "true")
        self.assertEqual((proc.returncode, rec["path"], rec["path_reason"]),
                         (0, "cold", "the seat keeps members made with a terminal only (pool_size = 0)"))
        doctor = self.seat.run("doctor").stdout.decode()
        self.assertRegex(doctor, r"pool +1 of 1 members with a terminal ready, 0 stale or waiting to be removed, 0 claimed\n")

    def test_a_fill_makes_each_kind_up_to_its_count(self):
        self.kinds(2, 1)
        proc = self.fill()
        err = proc.stderr.decode()
        self.assertEqual((err.count("(with a terminal)"), err.count("made member")), (1, 3), err)
        self.assertEqual(self.fill().stderr, b"")  # full: nothing to make
        self.assertEqual(len(members(self.seat)), 3)
