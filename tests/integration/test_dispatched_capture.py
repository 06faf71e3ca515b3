"""--capture-log through a seat host, and the caller library (python/agent_sandbox) dispatching.

The dispatcher's own path (docs/CALLERS.md, docs/REMOTE.md "--capture-log"): the launcher on this
machine, a registry, real ssh to real seat hosts provisioned from this tree's .deb (seats P-1, P-2
of `up.sh 2 --prefix P`; ASBX_REMOTE_PREFIX=P, default rd: scripts/test-prep.d/40-remote-seats.sh).
LOG is created here, its path is all of stdout, it holds the agent's stdout and stderr and none
of the seat's own lines, the record comes back from the seat. Then run_captured() dispatching a
real codex (offline, against tests/integration/remote/codex_mock.pl), failures on the seat raised
by their error_kind, the connection cut mid-session by a relay this test owns, and the library
imported from the installed package on a seat. Every session id starts with dc-.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from harness import BUILD, CODES, LAUNCHER, ROOT, unavailable
from test_agents_e2e import CLAUDE_BYPASS, claude_oauth, codex_argv
from test_faults_seat import Relay
from test_remote import R1, R2, REGISTRY, dead_port, on_seat, port_of, rewrite_host, seat_containers

sys.path.insert(0, str(BUILD / "python"))
import agent_sandbox as asb  # noqa: E402

MOCK = ROOT / "tests" / "integration" / "remote" / "codex_mock.pl"
CLAUDE_MOCK = ROOT / "tests" / "integration" / "remote" / "claude_mock.pl"
SSH = ROOT / "scripts" / "seat-host" / "ssh.sh"
TAG = "%x" % (os.getpid() & 0xffffff)
SEAT_HOME = "/home/seat"
SEAT_WORKSPACES = SEAT_HOME + "/sandbox/workspaces"
RUN_TIMEOUT = 200


def seat_leftovers(seat, session_id):
    """What of the session the seat still holds: containers, its status file, held slot locks."""
    script = (f"podman ps -a --filter label=agent-sandbox.session={session_id} --format 'container {{{{.Names}}}}'; "
              f"test -e \"$XDG_RUNTIME_DIR/agent-sandbox-status.{session_id}.json\" && echo status_file; "
              "for f in ~/.local/state/agent-sandbox/slots/*.lock; do "
              "[ -e \"$f\" ] && ! flock -n \"$f\" true && echo \"slot_claim $f\"; done; true")
    return on_seat(seat, script).stdout.splitlines()


def seat_ledger_ids(seat):
    out = on_seat(seat, "cat ~/.local/state/agent-sandbox/ledger.jsonl 2>/dev/null || true").stdout
    return [json.loads(line).get("id") for line in out.splitlines() if line.strip()]


class DispatchedCaptureTest(unittest.TestCase):
    def setUp(self):
        if not LAUNCHER.exists() or not REGISTRY.exists():
            unavailable(self, f"seats {R1}/{R2} not up ({REGISTRY}; scripts/test-prep.d/40-remote-seats.sh)")
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="asbx-dcap-"))
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)
        self.env = dict(os.environ, XDG_CONFIG_HOME=str(self.dir / "config"), XDG_STATE_HOME=str(self.dir / "state"))
        self.env.pop("XDG_RUNTIME_DIR", None)
        self.log, self.status = self.dir / "agent.log", self.dir / "status.json"
        self.n = 0

    def sid(self, name):
        self.n += 1
        return f"dc-{name}-{TAG}-{self.n}"

    def capture(self, *args, registry=None, input=b"", timeout=RUN_TIMEOUT):
        self.status.unlink(missing_ok=True)
        proc = subprocess.run([str(LAUNCHER), "--registry", str(registry or REGISTRY), "--capture-log", str(self.log),
                               "--status-file", str(self.status), *args], input=input, capture_output=True,
                              timeout=timeout, env=self.env)
        record = json.loads(self.status.read_text()) if self.status.exists() else None
        return proc, record

    def registry(self, edit):
        path = self.dir / f"registry-{self.n}.toml"
        path.write_text(edit(REGISTRY.read_text()))
        return path

    def caller_ledger(self):
        path = self.dir / "state" / "agent-sandbox" / "ledger.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def assertNothingLeftOnSeat(self, seat, session_id):
        deadline = time.time() + 30  # after a drop the seat stops the session by itself (grace 10 s)
        while (left := seat_leftovers(seat, session_id)) and time.time() < deadline:
            time.sleep(0.5)
        self.assertEqual(left, [], f"left on {seat}")

    def seat_workspace(self, seat, name):
        ws = f"{SEAT_WORKSPACES}/dc-{name}-{TAG}"
        on_seat(seat, f"rm -rf {ws}; mkdir -p {ws}")
        self.addCleanup(on_seat, seat, "rm -rf " + ws, check=False)
        return ws


# The agent makes the seat speak: one connection the seat's egress proxy refuses, which sandbox-run
# reports on its stderr (tests/integration/remote/seat.toml allows api.seat.test; docs/EGRESS.md).
EGRESS = ["--egress", "http://api.seat.test:22"]
REFUSED = ("exec 4<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT evil.example:443 HTTP/1.1\\r\\n\\r\\n' >&4; "
           "head -1 <&4 | tr -d '\\r'; ")
SEAT_REFUSAL = b"sandbox-run: egress: refused evil.example:443: not_allowed\n"


class TheContractOverSsh(DispatchedCaptureTest):
    def test_stdout_is_the_path_and_log_holds_the_agents_streams_and_none_of_the_seats_lines(self):
        sid = self.sid("cap")
        agent = ["bash", "-c", REFUSED + "echo to-out; echo to-err >&2; echo 'asbx:slot-claimed' >&2; "
                                         "head -c 3000000 /dev/zero | tr '\\0' x"]
        proc, record = self.capture("--host", R1, "--id", sid, *EGRESS, "--", *agent)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, f"{self.log}\n".encode())
        log = self.log.read_bytes()
        out = b"HTTP/1.1 403 Forbidden\nto-out\n" + b"x" * 3000000
        self.assertEqual(len(log), len(out) + len("to-err\nasbx:slot-claimed\n"))
        # stdout's bytes are in order; the stderr lines travel apart and may land anywhere in it
        self.assertLess(log.index(b"to-err\n"), log.index(b"asbx:slot-claimed\n"))
        self.assertEqual(log.replace(b"to-err\n", b"", 1).replace(b"asbx:slot-claimed\n", b"", 1), out)
        self.assertEqual(oct(self.log.stat().st_mode & 0o777), "0o600")
        # the seat's own lines stay on stderr and are all it carries: the agent's stderr never reaches it
        self.assertNotIn(b"sandbox-run:", log)
        self.assertIn(SEAT_REFUSAL, proc.stderr)
        self.assertEqual([l for l in proc.stderr.splitlines() if not l.startswith(b"sandbox-run: ")], [])
        self.assertEqual((record["outcome"], record["exit_code"], record["seat"], record["capture_log"]),
                         ("exited", 0, R1, str(self.log)))
        self.assertTrue(record["container_removed"])
        self.assertEqual(record["egress"]["refused"][0]["host"], "evil.example")
        ledger = self.caller_ledger()[-1]
        self.assertEqual((ledger["id"], ledger["seat"], ledger["capture_log"]), (sid, R1, str(self.log)))
        self.assertNothingLeftOnSeat(R1, sid)

    def test_control_without_capture_the_seats_lines_share_the_agents_stderr(self):
        """What the seat-side mode (sandbox-run --capture-stdout) exists for: in plain dispatch the
        channel's stderr carries the agent's stderr and sandbox-run's lines together."""
        status = self.dir / "plain.json"
        proc = subprocess.run([str(LAUNCHER), "--registry", str(REGISTRY), "--host", R1, "--status-file", str(status),
                               "--id", self.sid("plain"), *EGRESS, "--", "bash", "-c", REFUSED + "echo to-err >&2"],
                              capture_output=True, timeout=RUN_TIMEOUT, env=self.env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b"HTTP/1.1 403 Forbidden\n")
        self.assertIn(b"to-err\n", proc.stderr)
        self.assertIn(SEAT_REFUSAL, proc.stderr)

    def test_streamed_as_it_arrives_and_stdin_passes(self):
        sid = self.sid("stream")
        caller = subprocess.Popen([str(LAUNCHER), "--registry", str(REGISTRY), "--host", R2, "--capture-log",
                                   str(self.log), "--status-file", str(self.status), "--id", sid, "--", "sh", "-c",
                                   "echo first; read x; echo second-$x"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self.env)
        self.addCleanup(caller.stdout.close)
        self.assertEqual(caller.stdout.readline(), f"{self.log}\n".encode())  # before the agent starts
        deadline = time.time() + 90
        while self.log.read_bytes() != b"first\n":
            self.assertLess(time.time(), deadline, "the agent's first line never reached LOG while it ran")
            self.assertIsNone(caller.poll())
            time.sleep(0.2)
        self.assertIsNone(caller.poll(), "the session ended before its input")
        caller.stdin.write(b"go\n")
        caller.stdin.close()
        self.assertEqual(caller.wait(timeout=60), 0)
        self.assertEqual(caller.stdout.read(), b"")
        self.assertEqual(self.log.read_bytes(), b"first\nsecond-go\n")
        self.assertEqual(json.loads(self.status.read_text())["seat"], R2)

    def test_the_agents_exit_code_passes_through(self):
        proc, record = self.capture("--id", self.sid("exit"), "--", "sh", "-c", "echo failing; exit 7")
        self.assertEqual((proc.returncode, proc.stdout), (7, f"{self.log}\n".encode()), proc.stderr)
        self.assertEqual((record["outcome"], record["error_kind"], record["agent_exit_code"]), ("exited", None, 7))
        self.assertEqual(self.log.read_bytes(), b"failing\n")

    def test_a_failure_on_the_seat_after_log_exists_prints_the_path(self):
        sid = self.sid("img")
        proc, record = self.capture("--host", R1, "--id", sid, "--image", "localhost/dc-no-such-image:1", "--", "true")
        self.assertEqual(proc.returncode, CODES["image_missing"], proc.stderr)
        self.assertEqual(proc.stdout, f"{self.log}\n".encode())
        self.assertEqual(self.log.read_bytes(), b"")
        self.assertEqual((record["error_kind"], record["seat"], record["capture_log"]),
                         ("image_missing", R1, str(self.log)))
        self.assertTrue(record["message"].startswith("image 'localhost/dc-no-such-image:1' is not present on the seat"),
                        record["message"])
        self.assertIn(b"sandbox-run: " + record["message"].encode(), proc.stderr)
        self.assertNothingLeftOnSeat(R1, sid)

    def test_no_seat_reachable_after_log_exists(self):
        reg = self.registry(lambda t: rewrite_host(rewrite_host(t, R1, "port", str(dead_port())),
                                                   R2, "port", str(dead_port())))
        proc, record = self.capture("--id", self.sid("noseat"), "--", "true", registry=reg)
        self.assertEqual(proc.returncode, CODES["no_seat"], proc.stderr)
        self.assertEqual(proc.stdout, f"{self.log}\n".encode())
        self.assertEqual((self.log.read_bytes(), record["error_kind"], record["capture_log"]),
                         (b"", "no_seat", str(self.log)))

    def test_failures_before_log_print_nothing_create_nothing_and_run_nothing(self):
        bad_registry = self.dir / "bad-registry.toml"
        bad_registry.write_text(REGISTRY.read_text() + "\nsurprise = 1\n")
        missing = self.dir / "no-such-dir" / "agent.log"
        before = seat_ledger_ids(R1)
        cases = [
            (["--registry", str(REGISTRY), "--capture-log", str(missing)], "usage",
             f"--capture-log: cannot open '{missing.parent}': No such file or directory"),
            (["--registry", str(REGISTRY), "--capture-log", str(self.log), "--tty"], "usage",
             "--capture-log cannot be combined with --tty"),
            (["--registry", str(bad_registry), "--capture-log", str(self.log)], "config", None),
        ]
        for args, kind, message in cases:
            with self.subTest(args=args):
                self.status.unlink(missing_ok=True)
                proc = subprocess.run([str(LAUNCHER), *args, "--status-file", str(self.status), "--host", R1, "--id",
                                       self.sid("early"), "--", "true"], capture_output=True, timeout=60, env=self.env)
                record = json.loads(self.status.read_text())
                self.assertEqual((proc.returncode, record["error_kind"]), (CODES[kind], kind), proc.stderr)
                if message:
                    self.assertEqual(record["message"], message)
                self.assertEqual(proc.stdout, b"")
                self.assertFalse(self.log.exists() or missing.exists())
                self.assertNotIn("capture_log", record)
        self.assertEqual(seat_ledger_ids(R1), before, "something ran on the seat")

    def test_a_symlink_at_log_is_replaced_never_written_through(self):
        victim = self.dir / "victim"
        victim.write_text("precious\n")
        self.log.symlink_to(victim)
        proc, record = self.capture("--id", self.sid("link"), "--", "echo", "agent-output")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(victim.read_text(), "precious\n")
        self.assertFalse(self.log.is_symlink())
        self.assertEqual(self.log.read_text(), "agent-output\n")


class ConnectionCut(DispatchedCaptureTest):
    """The caller's connection reset by a TCP relay this test owns (tests/integration/test_faults_seat.py's
    Relay) while the session runs on the seat: only this test's connection is cut."""

    def test_log_keeps_what_arrived_the_record_says_ssh_failed_and_the_seat_is_clean(self):
        relay = Relay(port_of(REGISTRY.read_text(), R1))
        self.addCleanup(relay.close)
        reg = self.registry(lambda t: rewrite_host(t, R1, "port", str(relay.port)))
        sid = self.sid("cut")
        caller = subprocess.Popen([str(LAUNCHER), "--registry", str(reg), "--host", R1, "--capture-log", str(self.log),
                                   "--status-file", str(self.status), "--id", sid, "--", "sh", "-c",
                                   "i=0; while [ $i -lt 5000 ]; do i=$((i+1)); echo line-$i; done; "
                                   "echo on-stderr >&2; exec sleep 3613"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=self.env)
        self.addCleanup(caller.stdout.close)
        self.addCleanup(caller.stderr.close)
        expected = b"".join(b"line-%d\n" % i for i in range(1, 5001))
        deadline = time.time() + 120
        while len(self.log.read_bytes() if self.log.exists() else b"") < len(expected) + len(b"on-stderr\n"):
            self.assertLess(time.time(), deadline, "the output never arrived")
            self.assertIsNone(caller.poll(), caller.stderr.read() if caller.poll() is not None else "")
            time.sleep(0.2)
        relay.cut()
        self.assertEqual(caller.wait(timeout=120), CODES["ssh_failed"])
        self.assertEqual(caller.stdout.read(), f"{self.log}\n".encode())
        log = self.log.read_bytes()
        self.assertEqual(log.replace(b"on-stderr\n", b"", 1), expected)  # every byte that arrived, nothing else
        stderr = caller.stderr.read().decode()
        record = json.loads(self.status.read_text())
        self.assertEqual((record["outcome"], record["error_kind"], record["capture_log"], record["seat"]),
                         ("launcher_error", "ssh_failed", str(self.log), R1))
        self.assertTrue(record["message"].startswith(f"{R1}: connection dropped: "), record["message"])
        self.assertIn("agent-sandbox: " + record["message"], stderr)
        seat = record["seat_record"]  # fetched over a new connection once the seat ended the session
        self.assertEqual((seat["id"], seat["outcome"], seat["cause"], seat["signal"], seat["container_removed"]),
                         (sid, "killed", "signal", 1, True))
        self.assertNotIn("capture_log", seat)  # the seat never knew of LOG: it sent the streams on stdout
        self.assertEqual(self.caller_ledger()[-1]["seat_record"]["id"], sid)
        self.assertNothingLeftOnSeat(R1, sid)
        self.assertEqual(on_seat(R1, "pgrep -fx 'sleep 3613'", check=False).stdout, "")


class RunCapturedDispatched(DispatchedCaptureTest):
    """agent_sandbox.run_captured() dispatching through the registry: a real codex, then failures on
    the seat. The mock for codex is the perl one of test_state.Dispatched, started by the session's
    own command next to codex on the container's loopback (the seat and the image have no python)."""

    PORT = 18080

    def seat_account(self, seat, name, runtime="codex", file="auth.json", content=None):
        """A credential of the seat's account `name` for `runtime` (a mock one: no secret of ours)."""
        d = f"{SEAT_HOME}/.config/agent-sandbox/accounts/{name}"
        content = content or {"auth_mode": "apikey", "OPENAI_API_KEY": f"sk-mock-{name}"}
        subprocess.run([str(SSH), seat, f"umask 077; mkdir -p {d}/{runtime}; cat >{d}/{runtime}/{file}"],
                       input=json.dumps(content).encode(), check=True, timeout=60)
        self.addCleanup(on_seat, seat, "rm -rf " + d, check=False)
        return name

    def put_mock(self, seat, ws, mock):
        subprocess.run([str(SSH), seat, f"cat >{ws}/{mock.name}"], input=mock.read_bytes(), check=True, timeout=60)

    def codex_command(self, final):
        class Mock:
            base_url = "http://127.0.0.1:%d" % self.PORT
        codex = codex_argv(Mock, "Write the note.")
        codex.insert(2, "--skip-git-repo-check")
        script = ("perl codex_mock.pl %d 'echo kept > note.txt' '%s' 2>/dev/null & sleep 0.5; exec \"$@\""
                  % (self.PORT, final))
        return ["bash", "-c", script, "mock", *codex]

    def test_a_real_codex_dispatched_with_runtime_workspace_state_dir_and_timeout(self):
        sid = self.sid("codex")
        ws = self.seat_workspace(R1, "codex")
        self.put_mock(R1, ws, MOCK)
        kept = self.dir / "kept"
        call = dict(session_id=sid, registry=str(REGISTRY), host=R1, runtime="codex",
                    account=self.seat_account(R1, f"dc-{TAG}"), workspace=ws, state_dir=str(kept), timeout="120s")
        run = asb.run_captured(self.codex_command("Dispatched and captured."), str(self.log), str(self.status),
                               launcher=str(LAUNCHER), env=self.env, **call)
        log = self.log.read_text()
        self.assertEqual((run.exit_code, run.outcome, run.seat, run.log_path), (0, "exited", R1, str(self.log)), log)
        self.assertIn("Dispatched and captured.\n", log)  # codex's answer (its stdout)
        self.assertNotIn("sandbox-run:", log)
        self.assertNotIn("slot-claimed", log)
        record = run.record
        self.assertEqual((record["outcome"], record["exit_code"], record["agent_exit_code"], record["runtime"]),
                         ("exited", 0, 0, "codex"))
        self.assertEqual(record, json.loads(self.status.read_text()))
        self.assertEqual(on_seat(R1, f"cat {ws}/note.txt").stdout, "kept\n", "codex's tool call ran in the workspace")
        rollouts = sorted((kept / sid / ".codex" / "sessions").glob("*/*/*/rollout-*.jsonl"))
        self.assertEqual(len(rollouts), 1, list(kept.rglob("*")))
        self.assertIn("Dispatched and captured.", rollouts[0].read_text())
        self.assertEqual((record["state"]["dir"], record["state"]["files"], record["state"]["error"]),
                         (str(kept / sid), 1, None))
        ledger = self.caller_ledger()[-1]
        self.assertEqual((ledger["id"], ledger["seat"], ledger["capture_log"], ledger["state"]),
                         (sid, R1, str(self.log), record["state"]))
        self.assertNothingLeftOnSeat(R1, sid)
        print("\nagent_sandbox.run_captured([bash -c <start the mock>, codex exec …], %r, %r,\n    %s)\n"
              "-> CapturedRun(exit_code=%d, outcome=%r, seat=%r)\nLOG:\n%s\nrecord:\n%s"
              % (str(self.log), str(self.status), ", ".join("%s=%r" % kv for kv in call.items()), run.exit_code,
                 run.outcome, run.seat, log, json.dumps(record, indent=1, sort_keys=True)), file=sys.stderr)

    def test_a_real_claude_dispatched_with_runtime_workspace_state_dir_and_timeout(self):
        sid = self.sid("claude")
        ws = self.seat_workspace(R1, "claude")
        self.put_mock(R1, ws, CLAUDE_MOCK)
        account = self.seat_account(R1, f"dc-cl-{TAG}", "claude", ".credentials.json", claude_oauth())
        env = ("ANTHROPIC_BASE_URL=http://127.0.0.1:%d CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 "
               "DISABLE_AUTOUPDATER=1" % self.PORT)
        script = ("perl claude_mock.pl %d 'echo kept-by-claude > note.txt' 'Claude dispatched and captured.' "
                  "2>/dev/null & sleep 0.5; %s exec \"$@\"" % (self.PORT, env))
        kept = self.dir / "kept"
        run = asb.run_captured(["bash", "-c", script, "mock", "claude", "-p", "Write the note.", CLAUDE_BYPASS],
                               str(self.log), str(self.status), session_id=sid, registry=str(REGISTRY), host=R1,
                               runtime="claude", account=account, workspace=ws, state_dir=str(kept),
                               timeout="120s", launcher=str(LAUNCHER), env=self.env)
        log = self.log.read_text()
        self.assertEqual((run.exit_code, run.outcome, run.seat), (0, "exited", R1), log)
        self.assertIn("Claude dispatched and captured.\n", log)
        self.assertNotIn("sandbox-run:", log)
        self.assertEqual(on_seat(R1, f"cat {ws}/note.txt").stdout, "kept-by-claude\n")
        self.assertEqual(run.record["runtime"], "claude")
        transcripts = sorted((kept / sid / ".claude" / "projects").glob("*/*.jsonl"))
        self.assertEqual(len(transcripts), 1, list(kept.rglob("*")))
        self.assertIn("Claude dispatched and captured.", transcripts[0].read_text())
        self.assertEqual(self.caller_ledger()[-1]["id"], sid)
        self.assertNothingLeftOnSeat(R1, sid)

    def marked_command(self, ws):
        """Leaves a marker in the seat's workspace if it runs there, and on this machine if it ran here."""
        return ["sh", "-c", f"touch /sandbox/workspaces/{ws.rsplit('/', 1)[1]}/ran || touch {self.dir}/ran-here"]

    def assertRanNowhere(self, ws, sid):
        self.assertFalse((self.dir / "ran-here").exists(), "ran on the caller's machine")
        self.assertEqual(on_seat(R1, f"ls -A {ws}").stdout, "", "ran on the seat")
        self.assertEqual(seat_containers(R1, sid), [])
        self.assertNothingLeftOnSeat(R1, sid)

    def test_launcher_failures_on_the_seat_raise_their_error_kind_and_nothing_runs(self):
        ws = self.seat_workspace(R1, "fail")
        absent = f"dc-absent-{TAG}"
        cases = [
            ("image_missing", asb.ImageMissing, dict(image="localhost/dc-no-such-image:1"),
             "image 'localhost/dc-no-such-image:1' is not present on the seat"),
            ("credential_unresolved", asb.CredentialUnresolved, dict(runtime="codex", account=absent),
             f"{SEAT_HOME}/.config/agent-sandbox/accounts/{absent}/codex/auth.json"),
        ]
        for kind, cls, extra, words in cases:
            with self.subTest(kind=kind):
                sid = self.sid(kind.replace("_", "-"))
                with self.assertRaises(cls) as raised:
                    asb.run_captured(self.marked_command(ws), str(self.log), str(self.status), session_id=sid,
                                     registry=str(REGISTRY), host=R1, workspace=ws, timeout=60,
                                     launcher=str(LAUNCHER), env=self.env, **extra)
                e = raised.exception
                self.assertEqual((e.kind, e.error_kind, e.exit_code), (kind, kind, CODES[kind]))
                self.assertEqual((e.record["error_kind"], e.record["seat"], e.log_path), (kind, R1, str(self.log)))
                self.assertIn(words, e.message)
                self.assertEqual(self.log.read_bytes(), b"")
                self.assertRanNowhere(ws, sid)


class BuildboxDispatched(DispatchedCaptureTest):
    SCRIPT = ("#!/bin/sh\necho \"running 2 tests in $(pwd)\"\necho 'test_b: FAILED (expected 4, got 5)' >&2\n"
              "echo '1 passed, 1 failed'; exit 3\n")

    def test_run_tests_on_a_seat_hands_back_code_log_and_record(self):
        ws = self.seat_workspace(R2, "bb")
        subprocess.run([str(SSH), R2, f"cat >{ws}/run-tests; chmod 755 {ws}/run-tests"],
                       input=self.SCRIPT.encode(), check=True, timeout=60)
        sid = self.sid("bb")
        result = asb.run_tests(ws, "./run-tests", str(self.dir / "out"), session_id=sid, registry=str(REGISTRY),
                               host=R2, launcher=str(LAUNCHER), env=self.env)
        self.assertEqual((result.exit_code, result.passed), (3, False))
        log = pathlib.Path(result.log_path).read_text()
        for line in (f"running 2 tests in /sandbox/workspaces/{ws.rsplit('/', 1)[1]}\n",
                     "test_b: FAILED (expected 4, got 5)\n", "1 passed, 1 failed\n"):
            self.assertIn(line, log)
        self.assertEqual((result.record["seat"], result.record["id"], result.record["agent_exit_code"]), (R2, sid, 3))
        out = subprocess.run([sys.executable, "-m", "agent_sandbox", "buildbox", "--registry", str(REGISTRY), "--host",
                              R2, ws, str(self.dir / "cli"), "--", "./run-tests"], capture_output=True, text=True,
                             timeout=RUN_TIMEOUT, env=dict(self.env, AGENT_SANDBOX=str(LAUNCHER),
                                                           PYTHONPATH=str(BUILD / "python")))
        self.assertEqual(out.returncode, 3, out.stderr)
        self.assertEqual((json.loads(out.stdout)["passed"], json.loads(out.stdout)["record"]["seat"]), (False, R2))


class InstalledPackage(DispatchedCaptureTest):
    """The library as the .deb installs it, on a seat host provisioned from that .deb (nothing of
    this tree is on the seat), then used there: a local session of the seat's own launcher."""

    def test_import_agent_sandbox_from_the_package_and_run_a_session_with_it(self):
        if on_seat(R1, "command -v python3", check=False).returncode != 0:
            self.fail(f"{R1} has no python3: its image predates scripts/seat-host/build.sh's python3 (rebuild it)")
        probe = ("cd /tmp && python3 -c 'import agent_sandbox as a, json; print(a.__file__); "
                 "print(json.dumps(a.EXIT_CODES)); print(a.__version__)' && "
                 "dpkg -S /usr/lib/python3/dist-packages/agent_sandbox/__init__.py && "
                 "agent-sandbox exit-codes --json && agent-sandbox --version")
        out = on_seat(R1, probe, check=False)
        self.assertEqual(out.returncode, 0, out.stderr)
        where, table, version, owner, rest = out.stdout.split("\n", 4)
        self.assertEqual(where, "/usr/lib/python3/dist-packages/agent_sandbox/__init__.py")
        self.assertEqual(owner, "agent-sandbox: " + where)
        launcher_rows, launcher_version = rest.rsplit("agent-sandbox ", 1)
        self.assertEqual(json.loads(table), {r["name"]: r["code"] for r in json.loads(launcher_rows)})
        self.assertEqual(version, launcher_version.strip())
        sid = self.sid("pkg")
        use = ("cd /tmp && python3 -c 'import agent_sandbox as a, sys; "
               f"r = a.run_captured([\"sh\", \"-c\", \"echo from-the-seat; exit 4\"], \"/tmp/{sid}.log\", "
               f"\"/tmp/{sid}.json\", session_id=\"{sid}\"); "
               "print(r.exit_code, r.outcome, repr(open(r.log_path).read()))'; "
               f"rm -f /tmp/{sid}.log /tmp/{sid}.json")
        out = on_seat(R1, use, check=False)
        self.assertEqual((out.returncode, out.stdout), (0, "4 exited 'from-the-seat\\n'\n"), out.stderr)
        self.assertNothingLeftOnSeat(R1, sid)


if __name__ == "__main__":
    unittest.main()
