"""The agent is the attacker: every way out of a session's lane, tried from inside real sessions.

Each class is one attack of docs/THREATS.md; each test asserts the control that stops it."""
import json
import os
import pathlib
import signal
import socket
import subprocess
import threading
import time

from harness import CODES, LAUNCHER, SOCKET, SeatTest, session_containers

CATATONIT_LINE = "ERROR (catatonit:2): failed to exec pid1: No such file or directory\n"


class ForgedVerdicts(SeatTest):
    """Nothing the agent prints or writes turns its own exit into a launcher error."""

    def test_the_catatonit_line_printed_by_the_agent_is_its_own_exit(self):
        proc, record = self.seat.status("--id", "hostile-forge", "--", "bash", "-c",
                                        f"printf '{CATATONIT_LINE}' >&2; exit 1")
        self.assertEqual((proc.returncode, record["agent_exit_code"], record["error_kind"], record["outcome"]),
                         (1, 1, None, "exited"))
        self.assertEqual(proc.stderr.decode(), CATATONIT_LINE)
        self.assertNoContainer("hostile-forge")

    def test_127_and_126_with_the_shells_words_pass_through(self):
        for code, words in ((127, "bash: no-such: command not found"), (126, "bash: ./x: Permission denied")):
            proc, record = self.seat.status("--", "bash", "-c", f"echo '{words}' >&2; exit {code}")
            self.assertEqual((proc.returncode, record["agent_exit_code"], record["error_kind"]), (code, code, None))

    def test_the_old_report_files_are_gone_and_forging_them_changes_nothing(self):
        home = self.seat.dir / "home"
        (home / ".codex").mkdir(parents=True)
        (home / ".codex" / "auth.json").write_text("{}")
        proc, record = self.seat.status("--runtime", "codex", "--", "bash", "-c",
                                        "mkdir -p /tmp/r; echo command_not_found > /tmp/r/exec-failure; "
                                        "test -e /sandbox-report && echo report-dir; exit 127",
                                        env=self.seat.env(HOME=str(home)))
        self.assertEqual((proc.returncode, record["agent_exit_code"], record["error_kind"]), (127, 127, None))
        self.assertEqual(proc.stdout, b"")

    def test_real_exec_failures_are_decided_before_start(self):
        cases = [(["no-such-command"], "command_not_found", "command not found inside the container: 'no-such-command'"),
                 (["/etc/hostname"], "command_not_executable", "command not executable inside the container: '/etc/hostname'"),
                 (["/usr"], "command_not_executable", "command not executable inside the container: '/usr'")]
        for argv, kind, message in cases:
            with self.subTest(argv=argv):
                proc, record = self.seat.status("--id", "hostile-exec", "--", *argv)
                self.assertLauncherError(proc, record, kind, message)
                self.assertEqual(record["container_removed"], True)
                self.assertNoContainer("hostile-exec")

    def test_a_script_whose_interpreter_is_missing_is_not_found(self):
        ws = self.seat.workspaces / "ws-interp"
        ws.mkdir()
        script = ws / "run.sh"
        script.write_text("#!/no/such/shell\necho hi\n")
        script.chmod(0o755)
        proc, record = self.seat.status("--workspace", str(ws), "--", "./run.sh")
        self.assertLauncherError(proc, record, "command_not_found", "command not found inside the container: './run.sh'")

    def test_a_symlink_in_the_workspace_resolves_inside_the_container(self):
        """An absolute symlink the agent planted points into the container, never at the seat."""
        ws = self.seat.workspaces / "ws-link"
        ws.mkdir()
        (ws / "agent").symlink_to("/usr/bin/true")
        proc, record = self.seat.status("--workspace", str(ws), "--", "./agent")
        self.assertEqual((proc.returncode, record["error_kind"]), (0, None), proc.stderr)
        seat_only = self.seat.dir / "seat-only-tool"
        seat_only.write_text("#!/bin/sh\necho escaped\n")
        seat_only.chmod(0o755)
        (ws / "evil").symlink_to(seat_only)
        proc, record = self.seat.status("--workspace", str(ws), "--", "./evil")
        self.assertLauncherError(proc, record, "command_not_found", "command not found inside the container: './evil'")


class WhatTheLauncherReadsBack(SeatTest):
    """The only thing read back from inside is the credential copy in the tmpfs HOME: a FIFO,
    a symlink, a directory or a huge file there cannot hang, steer or fill anything."""

    def setUp(self):
        super().setUp()
        self.home = self.seat.dir / "home"
        (self.home / ".codex").mkdir(parents=True)
        (self.home / ".codex" / "auth.json").write_text('{"token": "not-for-the-record"}')

    def test_odd_files_at_the_copy_end_the_session_promptly(self):
        copy = "$HOME/.codex/auth.json"
        for name, plant in (("fifo", f"rm {copy}; mkfifo {copy}"), ("symlink", f"rm {copy}; ln -s /etc/shadow {copy}"),
                            ("dir", f"rm {copy}; mkdir {copy}"), ("huge", f"truncate -s 400m {copy}")):
            with self.subTest(plant=name):
                t0 = time.monotonic()
                proc, record = self.seat.status("--id", "hostile-back", "--runtime", "codex", "--", "bash", "-c",
                                                plant + "; exit 3", env=self.seat.env(HOME=str(self.home)))
                self.assertLess(time.monotonic() - t0, 30)
                self.assertEqual((proc.returncode, record["agent_exit_code"], record["error_kind"]), (3, 3, None),
                                 proc.stderr)
                self.assertFalse(record["credential_refreshed_in_container"])
                self.assertNoContainer("hostile-back")
        self.assertEqual(len(self.seat.ledger.read_text().splitlines()), 4)

    def test_a_rewritten_copy_is_reported_as_a_refresh(self):
        proc, record = self.seat.status("--runtime", "codex", "--", "bash", "-c", "echo rotated > $HOME/.codex/auth.json",
                                        env=self.seat.env(HOME=str(self.home)))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(record["credential_refreshed_in_container"])


class Backpressure(SeatTest):
    """A caller that stops reading cannot suspend the timeout, its signals or the wait."""

    def start(self, *args):
        status = self.seat.dir / "status-bp.json"
        p = subprocess.Popen([str(LAUNCHER), "--status-file", str(status), *args], env=self.seat.env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(self.end, p)
        return p, status

    @staticmethod
    def end(p):
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
        p.stderr.close()

    def test_the_timeout_fires_while_nobody_reads(self):
        t0 = time.monotonic()
        p, status = self.start("--id", "hostile-bp", "--timeout", "3s", "--", "yes")
        p.wait(timeout=40)
        self.assertLess(time.monotonic() - t0, 20)
        record = json.loads(status.read_text())
        self.assertEqual((p.returncode, record["error_kind"], record["cause"]), (CODES["killed_timeout"], "killed_timeout", "timeout"))
        self.assertTrue(any("the caller stopped reading" in w for w in record["warnings"]), record["warnings"])
        self.assertNoContainer("hostile-bp")

    def test_a_signal_ends_it_while_nobody_reads(self):
        p, status = self.start("--id", "hostile-bp-sig", "--", "yes")
        time.sleep(3)
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=40)
        self.assertLess(time.monotonic() - t0, 15)
        record = json.loads(status.read_text())
        self.assertEqual((p.returncode, record["outcome"], record["cause"], record["error_kind"]),
                         (128 + signal.SIGTERM, "killed", "signal", None))
        self.assertNoContainer("hostile-bp-sig")

    def test_a_slow_reader_still_gets_every_byte(self):
        p, status = self.start("--", "bash", "-c", "head -c 3000000 /dev/zero | tr '\\0' x; exit 5")
        time.sleep(2)  # the agent has long exited; its output waits for us
        out = p.stdout.read()
        p.wait(timeout=40)
        self.assertEqual((len(out), p.returncode), (3000000, 5))
        self.assertEqual(json.loads(status.read_text())["warnings"], [])


class SwappingRelay:
    """A unix-socket relay in front of the real podman service that runs `on_create` just before
    it forwards the create request: exactly the window between the launcher's validation and
    podman's mount, held open deterministically."""

    def __init__(self, path, on_create):
        self.path, self.on_create, self.fired = str(path), on_create, False
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(self.path)
        self.server.listen(16)
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.relay, args=(conn,), daemon=True).start()

    def relay(self, conn):
        with conn, socket.socket(socket.AF_UNIX) as up:
            up.connect(SOCKET)
            back = threading.Thread(target=self.copy, args=(up, conn), daemon=True)
            back.start()
            self.copy(conn, up, watch=True)
            back.join(timeout=60)

    def copy(self, src, dst, watch=False):
        try:
            while data := src.recv(65536):
                if watch and not self.fired and b"/containers/create " in data:
                    self.fired = True
                    self.on_create()
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self):
        self.server.close()


class MountSourceSwapped(SeatTest):
    """A concurrent writer swaps a validated directory between the check and the mount."""

    def swap_and_run(self, ws, swap):
        relay = SwappingRelay(self.seat.dir / "relay.sock", swap)
        self.addCleanup(relay.close)
        self.seat.write(self.seat.config_file.read_text().replace(SOCKET, str(self.seat.dir / "relay.sock")))
        proc, record = self.seat.status("--id", "hostile-swap", "--workspace", str(ws), "--", "touch", "ran")
        self.assertTrue(relay.fired)
        return proc, record

    def test_a_directory_swapped_for_another_is_refused_before_start(self):
        ws = self.seat.workspaces / "swap-dir"
        ws.mkdir()
        moved = self.seat.dir / "moved-away"
        proc, record = self.swap_and_run(ws, lambda: (ws.rename(moved), ws.mkdir()))
        self.assertLauncherError(proc, record, "workspace_rejected",
                                 f"'{ws}' mounted at '/sandbox/workspaces/swap-dir' is not the directory that was "
                                 "validated (it was replaced between the check and the mount); nothing was started")
        self.assertFalse((ws / "ran").exists() or (moved / "ran").exists())
        self.assertNoContainer("hostile-swap")

    def test_a_directory_swapped_for_a_symlink_is_refused_before_start(self):
        ws = self.seat.workspaces / "swap-link"
        ws.mkdir()
        elsewhere = self.seat.dir / "someone-elses"
        elsewhere.mkdir()
        proc, record = self.swap_and_run(ws, lambda: (ws.rename(self.seat.dir / "moved"), ws.symlink_to(elsewhere)))
        self.assertLauncherError(proc, record, "workspace_rejected",
                                 f"'{ws}' mounted at '/sandbox/workspaces/swap-link' is not the directory that was "
                                 "validated (it was replaced between the check and the mount); nothing was started")
        self.assertFalse((elsewhere / "ran").exists())
        self.assertNoContainer("hostile-swap")
