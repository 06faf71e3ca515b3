"""Remote dispatch over real ssh to two real seat hosts (rd-1, rd-2; scripts/test-prep.d/40-remote-seats.sh).

Each test runs the built agent-sandbox with a registry (the one up.sh wrote, or a variant of it) and
checks what arrived: exit codes, bytes, the status record fetched from the seat, the seat's containers.
"""
import concurrent.futures
import fcntl
import json
import os
import pathlib
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import termios
import time
import unittest

from harness import CODES, LAUNCHER, ROOT, sha256, unavailable

STATE = pathlib.Path(os.environ.get("ASBX_SEAT_STATE", "/var/lib/agent-sandbox/seats"))
# ASBX_REMOTE_PREFIX=P runs against seats P-1, P-2 (up.sh 2 --prefix P) instead of the shared rd-*.
PREFIX = os.environ.get("ASBX_REMOTE_PREFIX", "rd")
REGISTRY = STATE / f"registry-{PREFIX}.toml"
SSH = ROOT / "scripts" / "seat-host" / "ssh.sh"
SEATS = R1, R2 = f"{PREFIX}-1", f"{PREFIX}-2"


def on_seat(seat, command, check=True):
    return subprocess.run([str(SSH), seat, command], capture_output=True, text=True, timeout=60, check=check)


def seat_containers(seat, session_id):
    out = on_seat(seat, f"podman ps -a --filter label=agent-sandbox.session={session_id} --format '{{{{.Names}}}}'")
    return out.stdout.split()


class RemoteTest(unittest.TestCase):
    def setUp(self):
        if not LAUNCHER.exists() or not REGISTRY.exists():
            unavailable(self, f"seats {R1}/{R2} not up ({REGISTRY}; scripts/test-prep.d/40-remote-seats.sh)")
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="asbx-remote-"))
        self.env = dict(os.environ, XDG_CONFIG_HOME=str(self.dir / "config"), XDG_STATE_HOME=str(self.dir / "state"))
        self.n = 0
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def registry(self, edit=lambda text: text):
        """A copy of the rd registry, edited; returns its path."""
        path = self.dir / f"registry-{self.n}.toml"
        self.n += 1
        path.write_text(edit(REGISTRY.read_text()))
        return path

    def dispatch(self, *args, registry=None, input=b"", timeout=180):
        self.n += 1
        status = self.dir / f"status-{self.n}.json"
        proc = subprocess.run([str(LAUNCHER), "--registry", str(registry or REGISTRY), "--status-file", str(status),
                               *args], input=input, capture_output=True, timeout=timeout, env=self.env)
        record = json.loads(status.read_text()) if status.exists() else None
        return proc, record

    def seat_ledger_lines(self, seat):
        out = on_seat(seat, "cat ~/.local/state/agent-sandbox/ledger.jsonl 2>/dev/null | wc -l")
        return int(out.stdout.strip() or 0)


def rewrite_host(text, name, key, value):
    """Sets `key = value` in the [[host]] table named `name`."""
    blocks = text.split("[[host]]")
    for i, block in enumerate(blocks):
        if f'name = "{name}"' in block:
            blocks[i] = re.sub(rf"(?m)^{key} = .*$", f"{key} = {value}", block)
    return "[[host]]".join(blocks)


def port_of(text, name):
    block = [b for b in text.split("[[host]]") if f'name = "{name}"' in b][0]
    return int(re.search(r"(?m)^port = (\d+)$", block).group(1))


def dead_port():
    """A loopback port nothing listens on ("seat down")."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Dispatch(RemoteTest):
    def test_lands_on_first_seat_and_record_comes_back(self):
        proc, record = self.dispatch("--id", "remote-first", "--", "sh", "-c", "echo out; echo err >&2")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b"out\n")
        self.assertIn(b"err\n", proc.stderr)
        self.assertEqual(record["seat"], R1)
        self.assertEqual(record["id"], "remote-first")
        self.assertEqual(record["outcome"], "exited")
        self.assertTrue(record["container_removed"])
        ledger = (self.dir / "state" / "agent-sandbox" / "ledger.jsonl").read_text().splitlines()
        self.assertEqual(json.loads(ledger[-1])["seat"], R1)
        self.assertEqual(on_seat(R1, "ls $XDG_RUNTIME_DIR/agent-sandbox-status.remote-first.json",
                                 check=False).returncode, 2, "status file left on the seat")

    def test_full_seat_sends_the_session_to_the_next(self):
        hold = subprocess.Popen([str(SSH), R1, "d=~/.local/state/agent-sandbox/slots; mkdir -p $d; cd $d; "
                                 "echo $$ >/tmp/rd-holder.pid; exec flock -n 0.lock flock -n 1.lock flock -n 2.lock "
                                 "flock -n 3.lock sh -c 'echo held; sleep 60'"], stdout=subprocess.PIPE)
        self.addCleanup(hold.stdout.close)
        self.addCleanup(hold.wait)
        self.addCleanup(on_seat, R1, "kill $(cat /tmp/rd-holder.pid)", check=False)
        self.assertEqual(hold.stdout.readline(), b"held\n")
        proc, record = self.dispatch("--", "sh", "-c", "read x; echo got-$x", input=b"stdin-kept\n")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b"got-stdin-kept\n")  # nothing of stdin was lost on the full seat
        self.assertNotIn(b"seat full", proc.stderr)
        self.assertEqual((record["seat"], record["seats_tried"]), (R2, [f"{R1} full"]))

    def test_down_seat_sends_the_session_to_the_next(self):
        reg = self.registry(lambda t: rewrite_host(t, R1, "port", str(dead_port())))
        proc, record = self.dispatch("--", "true", registry=reg)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual((record["seat"], record["seats_tried"]), (R2, [f"{R1} unreachable"]))

    def test_all_seats_down_is_no_seat(self):
        reg = self.registry(lambda t: rewrite_host(rewrite_host(t, R1, "port", str(dead_port())),
                                                   R2, "port", str(dead_port())))
        proc, record = self.dispatch("--id", "remote-none", "--", "true", registry=reg)
        message = f"no agent-seat host was reachable with free capacity: tried {R1} unreachable; {R2} unreachable (registry {reg})"
        self.assertEqual(proc.returncode, CODES["no_seat"])
        self.assertEqual((record["error_kind"], record["message"]), ("no_seat", message))
        self.assertEqual(proc.stderr.decode(), "agent-sandbox: " + message + "\n")

    def test_wrong_host_key_is_rejected_and_nothing_runs(self):
        text = REGISTRY.read_text()
        other_key = re.findall(r'(?m)^host_key = (".*")$', text)[1]  # rd-2's key for rd-1
        reg = self.registry(lambda t: rewrite_host(t, R1, "host_key", other_key))
        before = self.seat_ledger_lines(R1)
        proc, record = self.dispatch("--id", "remote-badkey", "--", "true", registry=reg)
        self.assertEqual(proc.returncode, CODES["host_key_rejected"], proc.stderr)
        self.assertEqual(record["error_kind"], "host_key_rejected")
        self.assertRegex(record["message"], rf"^{R1} \(127\.0\.0\.1:\d+\): host key SHA256:\S+ does not match "
                                            r"the registry's SHA256:\S+$")
        self.assertEqual(self.seat_ledger_lines(R1), before, "something ran on the seat")
        self.assertEqual(seat_containers(R1, "remote-badkey"), [])

    def test_unknown_host_key_in_known_hosts_is_rejected(self):
        empty = self.dir / "known_hosts"
        empty.write_text("")
        reg = self.registry(lambda t: re.sub(r"(?m)^host_key = .*$", f'known_hosts = "{empty}"', t))
        proc, record = self.dispatch("--host", R1, "--", "true", registry=reg)
        self.assertEqual(proc.returncode, CODES["host_key_rejected"], proc.stderr)
        port = port_of(REGISTRY.read_text(), R1)
        self.assertEqual(record["message"], f"{R1} (127.0.0.1:{port}): host key unknown (not in {empty}); never accepted unseen")


class Stdio(RemoteTest):
    def test_exit_codes_are_relayed(self):
        for code in (0, 1, 3, 42, 255):
            with self.subTest(code=code):
                proc, record = self.dispatch("--", "sh", "-c", f"exit {code}")
                self.assertEqual(proc.returncode, code, proc.stderr)
                self.assertEqual((record["exit_code"], record["agent_exit_code"]), (code, code))

    def test_64_mib_round_trip_and_stdin_eof(self):
        data = os.urandom(64 << 20)
        proc, record = self.dispatch("--", "cat", input=data, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr[-500:])
        self.assertEqual(sha256(proc.stdout), sha256(data))  # cat ends only on stdin's EOF

    def test_arguments_are_quoted(self):
        args = ["it's", "a b", "$HOME", "`id`", "*", "", "\n", '"q"', ";true"]
        proc, _ = self.dispatch("--", "printf", "[%s]", *args)
        self.assertEqual(proc.stdout.decode(), "".join(f"[{a}]" for a in args))


class Lifetime(RemoteTest):
    def test_killed_caller_leaves_no_container(self):
        sid = f"remote-kill-{os.getpid()}"
        caller = subprocess.Popen([str(LAUNCHER), "--registry", str(REGISTRY), "--host", R2, "--id", sid, "--",
                                   "sleep", "300"], env=self.env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        self.addCleanup(caller.stdin.close)
        deadline = time.time() + 60
        while not seat_containers(R2, sid):
            self.assertLess(time.time(), deadline, "the session never started")
            time.sleep(0.5)
        caller.kill()
        caller.wait()
        killed = time.time()
        while seat_containers(R2, sid):
            self.assertLess(time.time() - killed, 10, "container still on the seat 10 s after the caller died")
            time.sleep(0.5)

    def test_eight_concurrent_on_four_plus_four(self):
        def one(i):
            return self.dispatch("--id", f"remote-conc-{i}", "--", "sleep", "4")
        peak = {s: 0 for s in SEATS}
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(one, i) for i in range(8)]
            while not all(f.done() for f in futures):
                for s in SEATS:
                    running = on_seat(s, "podman ps --format '{{.Names}}'", check=False).stdout.split()
                    peak[s] = max(peak[s], sum("remote-conc" in name for name in running))
                time.sleep(0.5)
        results = [f.result() for f in futures]
        for proc, record in results:
            self.assertEqual(proc.returncode, 0, proc.stderr)
        placed = [record["seat"] for _, record in results]
        self.assertEqual(sorted(placed), [R1] * 4 + [R2] * 4)
        self.assertLessEqual(max(peak.values()), 4, peak)


class Accounts(RemoteTest):
    def test_chosen_account_is_the_credential_the_container_sees(self):
        for account in ("work", "home"):
            on_seat(R1, f"d=~/.config/agent-sandbox/accounts/{account}/codex; mkdir -p $d; "
                            f"echo marker-{account}-$$ >$d/auth.json; chmod 600 $d/auth.json")
        self.addCleanup(on_seat, R1, "rm -rf ~/.config/agent-sandbox/accounts", check=False)
        markers = {a: on_seat(R1, f"cat ~/.config/agent-sandbox/accounts/{a}/codex/auth.json").stdout
                   for a in ("work", "home")}
        proc, record = self.dispatch("--host", R1, "--runtime", "codex", "--account", "work", "--",
                                     "cat", "/sandbox/home/.codex/auth.json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), markers["work"])
        self.assertNotEqual(markers["work"], markers["home"])
        self.assertEqual(record["runtime"], "codex")
        self.assertNotIn(markers["work"].strip(), json.dumps(record))  # a path travels, never the content


class Tty(RemoteTest):
    def test_tty_size_resize_ctrl_c_and_restore(self):
        pid, fd = pty.fork()
        if pid == 0:
            os.execve(str(LAUNCHER), [str(LAUNCHER), "--registry", str(REGISTRY), "--tty", "--", "sh", "-c",
                                      "stty size; trap 'echo GOT-INT; exit 7' INT; read x; stty size; "
                                      "while :; do sleep 1; done"], self.env)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 111, 0, 0))
        before = termios.tcgetattr(fd)
        out = bytearray()

        def read_until(needle, seconds=60):
            end = time.time() + seconds
            while needle not in out and time.time() < end:
                if select.select([fd], [], [], 0.2)[0]:
                    try:
                        chunk = os.read(fd, 4096)
                    except OSError:
                        return
                    if not chunk:
                        return
                    out.extend(chunk)
            self.assertIn(needle, out)

        read_until(b"33 111\r\n")
        self.assertFalse(termios.tcgetattr(fd)[3] & termios.ECHO, "terminal not raw during the session")
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # kernel sends SIGWINCH
        time.sleep(1)
        os.write(fd, b"go\r")
        read_until(b"40 120\r\n")
        os.write(fd, b"\x03")
        read_until(b"GOT-INT")
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 7)
        self.assertEqual(termios.tcgetattr(fd), before, "terminal settings not restored")
        os.close(fd)


if __name__ == "__main__":
    unittest.main()
