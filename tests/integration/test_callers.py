"""Callers: the --capture-log contract, the reference caller, and proof that nothing falls back.

Every launcher failure this build can produce is forced for real with a command that would
create a marker file on the host if anything ran it there; the marker never appears, and a
corpus of plausible kill-switch variables changes nothing.
"""
import base64
import json
import re
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from harness import BUILD, CODES, IMAGE, LAUNCHER, ROOT, SeatTest, session_containers

sys.path.insert(0, str(BUILD / "python"))  # the caller library as built (docs/PYTHON.md)
import agent_sandbox as caller  # noqa: E402

# Variables a dispatcher or a careless user might hope would route an agent to the host.
KILL_SWITCHES = {
    "OD_SANDBOX": "0", "AGENT_SANDBOX_DISABLE": "1", "CDX_OFFLOAD_STRICT": "0", "OD_LOCAL_DISPATCH_OK": "1",
    "AGENT_SANDBOX": "0", "AGENT_SANDBOX_FALLBACK": "host", "AGENT_SANDBOX_UNSAFE": "1", "ASBX_UNSAFE": "1",
    "ASBX_ALLOW_HOST": "1", "ASBX_FALLBACK": "1", "ASBX_NO_CONTAINER": "1", "SANDBOX": "0", "NO_SANDBOX": "1",
    "DISABLE_SANDBOX": "1", "SANDBOX_DISABLED": "true", "RUN_ON_HOST": "1", "LOCAL_FALLBACK": "1",
    "ALLOW_UNSANDBOXED": "1", "CODEX_SANDBOX": "danger-full-access", "CODEX_UNSAFE_ALLOW_NO_SANDBOX": "1",
    "IS_SANDBOX": "1", "PODMAN_FALLBACK": "host",
}
# Fields of a record that legitimately differ between two identical runs (the tripwire's: its
# random decoy mark and the times of first trips).
VOLATILE = ("durations_ms", "started_unix", "container_id", "counters", "tripwire", "disk")

# Kinds no local launch of this build can produce, and why. Every other kind has a forcer
# below; a kind added to the table without either entry fails test_every_kind_is_accounted_for.
NOT_FORCIBLE_HERE = {
    "internal": "a launcher bug or OS error; there is no honest way to provoke one",
    "start_failed": "needs podman to accept a create and then fail the start; no reliable trigger on podman 4.3",
    "limits_unenforced": "the local service is rootful and enforces limits (test_rootless.py forces it as its user)",
    "killed_oom": "not produced by this build's session yet (OOM is reported as the agent's exit)",
    "seat_preflight": "needs a systemd seat host: forced over ssh in tests/integration/test_preflight.py",
    "systemd_run_failed": "needs a systemd seat host: forced over ssh in tests/integration/test_preflight.py",
    "reexec_loop": "needs a systemd seat host: forced over ssh in tests/integration/test_preflight.py",
    "no_seat": "needs a registry and seat hosts (tests/integration/test_remote.py forces it)",
    "host_key_rejected": "needs a registry and seat hosts (tests/integration/test_remote.py forces it)",
    "ssh_failed": "needs an ssh connection that drops mid-session (tests/integration/test_faults_seat.py forces it)",
    "unsafe_refused": "only agent-sandbox-unsafe returns it (tests/integration/test_unsafe.py)",
    "seat_full": "only sandbox-run --slots on a full seat (tests/integration/test_remote.py)",
    "egress_unavailable": "needs the door into a created container's netns to fail; no honest trigger on a working "
                          "seat (the door failing closed is unit-tested in tests/unit/test_egress.cc)",
    "host_git_unavailable": "only `agent-sandbox git` returns it, when /usr/bin/git is missing or cannot be run; this "
                            "seat has git, and a session never runs it",
    "sweep_incomplete": "only when the sweep after a session can neither sweep nor set aside what the agent left "
                        "(tests/integration/test_sweep.py forces it with a seat's [git_sweep] time limit)",
    "attach_refused": "only `attach` and `stop` return it, never a session (tests/integration/test_interactive.py)",
    "killed_disk": "needs a session writing past its disk budget on a filesystem of the test's own "
                   "(tests/integration/test_disk.py Budget and Floor force it)",
    "disk_floor": "needs a filesystem below the seat's disk floor: a loop-mounted ext4 of the test's own "
                  "(tests/integration/test_disk.py Floor.test_no_session_starts_below_the_floor)",
    "seccomp_unavailable": "needs the seat's installed podman default profile missing or unreadable; this seat "
                           "has it (tests/unit/test_seccomp.cc forces it from facts)",
    "isolation_unavailable": "needs a session asking for gVisor where it cannot hold (tests/integration/test_gvisor.py "
                             "forces it: runsc missing, a weaker wall than the seat's)",
    "killed_pids": "only a gVisor session whose sandbox reaches its pids limit (tests/integration/test_gvisor.py "
                   "forces it)",
    "credential_exposed": "only inject mode's end-of-session scan returns it, when a real token value is found inside "
                          "the container; the agent never holds one (tests/integration/test_inject.py)",
}


class Context:
    """A host-only agent `callers-agent` on PATH that creates a marker file when it runs."""

    def __init__(self, seat):
        self.seat = seat
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="asbx-callers-"))
        self.marker = self.dir / "ran-on-host"
        self.bin = self.dir / "bin"
        self.bin.mkdir()
        # The agent, and every program a fallback might use to reach the host, leave the marker.
        for name in ("callers-agent", "agent-sandbox-unsafe", "systemd-run", "codex", "claude"):
            tool = self.bin / name
            tool.write_text(f"#!/bin/sh\necho \"$0 $*\" >>{self.marker}\n")
            tool.chmod(0o755)
        self.log = self.dir / "agent.log"
        self.status = self.dir / "status.json"

    def env(self, **more):
        return self.seat.env(PATH=f"{self.bin}:{os.environ['PATH']}", **more)


def force_usage(ctx):
    return ["--memory", "12x", "--", "callers-agent"]


def force_config(ctx):
    ctx.seat.write(f'socket = "/run/agent-sandbox/podman.sock"\nimage = "{IMAGE}"\nfallback = "host"\n')
    return ["--", "callers-agent"]


def force_podman_unreachable(ctx):
    ctx.seat.write(f'socket = "{ctx.dir}/gone.sock"\nimage = "{IMAGE}"\n')
    return ["--", "callers-agent"]


def force_image_missing(ctx):
    return ["--image", "localhost/callers-no-such-image:1", "--", "callers-agent"]


def force_create_failed(ctx):
    return ["--network", "ns:/run/netns/callers-absent-ns", "--", "callers-agent"]  # valid mode, refused by podman


def force_command_not_found(ctx):
    return ["--", "callers-agent", "exec", "hi"]  # exists on the host's PATH, not in the image


def force_command_not_executable(ctx):
    ws = ctx.seat.workspaces / "callers-ws"
    ws.mkdir(exist_ok=True)
    (ws / "agent.sh").write_text("#!/bin/sh\ncallers-agent\n")
    (ws / "agent.sh").chmod(0o644)
    return ["--workspace", str(ws), "--", "/sandbox/workspaces/callers-ws/agent.sh"]


def force_killed_timeout(ctx):
    return ["--timeout", "1s", "--", "sh", "-c", "sleep 30; callers-agent"]


def force_workspace_rejected(ctx):
    return ["--workspace", "/nonexistent/callers-ws", "--", "callers-agent"]


def force_credential_unresolved(ctx):
    return ["--runtime", "codex", "--credential", str(ctx.dir / "no-auth.json"), "--", "codex", "exec",
            "--dangerously-bypass-approvals-and-sandbox", "hi"]  # the row requires the bypass form


def force_credential_expiring(ctx):
    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    # 10.5 min: the refresh is due in ~5m30s, so two runs seconds apart print the same "in 5m"
    token = "%s.%s.sig" % (part({"alg": "none"}), part({"exp": int(time.time()) + 630, "email": "callers@example.com"}))
    auth = ctx.dir / "expiring-auth.json"
    auth.write_text(json.dumps({"auth_mode": "chatgpt", "tokens": {"access_token": token, "id_token": token,
                                                                 "refresh_token": "rt-callers"}}))
    auth.chmod(0o600)
    return ["--runtime", "codex", "--credential", str(auth), "--timeout", "1h", "--", "codex", "exec",
            "--dangerously-bypass-approvals-and-sandbox", "hi"]


def force_git_unmountable(ctx):
    ws = ctx.seat.workspaces / "callers-gws"
    ws.mkdir(exist_ok=True)
    (ws / ".git").write_text("gitdir: /nonexistent/callers/.git\n")
    return ["--workspace", str(ws), "--", "callers-agent"]


def force_tripwire(ctx):
    ctx.seat.write(ctx.seat.config_file.read_text() + 'tripwire = "kill"\n')
    return ["--", "sh", "-c", "cat ~/.aws/credentials >/dev/null; sleep 30; callers-agent"]


FORCERS = {
    "usage": force_usage,
    "config": force_config,
    "podman_unreachable": force_podman_unreachable,
    "image_missing": force_image_missing,
    "create_failed": force_create_failed,
    "command_not_found": force_command_not_found,
    "command_not_executable": force_command_not_executable,
    "killed_timeout": force_killed_timeout,
    "workspace_rejected": force_workspace_rejected,
    "credential_unresolved": force_credential_unresolved,
    "git_unmountable": force_git_unmountable,
    "credential_expiring": force_credential_expiring,
    "tripwire": force_tripwire,
}


def comparable(proc, record):
    record = {k: v for k, v in (record or {}).items() if k not in VOLATILE}
    return proc.returncode, proc.stdout, proc.stderr, record


class CaptureContract(SeatTest):
    def setUp(self):
        super().setUp()
        self.ctx = Context(self.seat)
        self.addCleanup(shutil.rmtree, self.ctx.dir, True)

    def capture(self, *args, **kw):
        proc = self.seat.run("--capture-log", str(self.ctx.log), "--status-file", str(self.ctx.status), *args, **kw)
        record = json.loads(self.ctx.status.read_text()) if self.ctx.status.exists() else None
        return proc, record

    def test_stdout_is_exactly_the_log_path_and_the_log_holds_the_output(self):
        proc, record = self.capture("--id", "callers-cap", "--", "bash", "-c",
                                    "echo to-out; echo to-err >&2; head -c 3000000 /dev/zero | tr '\\0' x")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, f"{self.ctx.log}\n".encode())
        self.assertEqual(proc.stderr, b"")
        log = self.ctx.log.read_bytes()
        self.assertEqual(len(log), 3000000 + len("to-out\nto-err\n"))
        # stdout is exact; the stderr line travels in its own frames and may land anywhere in it
        self.assertIn(b"to-err\n", log)
        self.assertEqual(log.replace(b"to-err\n", b"", 1), b"to-out\n" + b"x" * 3000000)
        self.assertEqual(oct(self.ctx.log.stat().st_mode & 0o777), "0o600")
        self.assertEqual((record["outcome"], record["capture_log"]), ("exited", str(self.ctx.log)))
        self.assertNoContainer("callers-cap")

    def test_stdin_passes_through(self):
        proc, _ = self.capture("--", "bash", "-c", "wc -c", input=b"y" * 1000)
        self.assertEqual((proc.returncode, self.ctx.log.read_bytes()), (0, b"1000\n"))

    def test_agent_nonzero_exit_passes_through_and_is_not_a_launcher_error(self):
        proc, record = self.capture("--", "bash", "-c", "echo failing; exit 7")
        self.assertEqual(proc.returncode, 7)
        self.assertEqual(proc.stdout, f"{self.ctx.log}\n".encode())
        self.assertEqual((record["outcome"], record["error_kind"], record["agent_exit_code"]), ("exited", None, 7))
        self.assertEqual(self.ctx.log.read_bytes(), b"failing\n")

    def test_failure_after_the_log_exists_still_prints_the_path(self):
        proc, record = self.capture("--id", "callers-img", "--image", "localhost/callers-no-such-image:1", "--", "true")
        self.assertLauncherError(proc, record, "image_missing",
                                 "image 'localhost/callers-no-such-image:1' is not present on the seat (podman at "
                                 "/run/agent-sandbox/podman.sock); build it with scripts/build-image.sh")
        self.assertEqual(proc.stdout, f"{self.ctx.log}\n".encode())
        self.assertEqual(self.ctx.log.read_bytes(), b"")

    def test_failures_before_the_log_print_nothing_and_create_nothing(self):
        cases = [
            (["--tty", "--", "true"], "--capture-log cannot be combined with --tty"),
            (["--dry-run", "--", "true"], "--capture-log cannot be combined with --dry-run"),
            (["--memory", "1x", "--", "true"], "--memory: '1x' has an unknown unit (use k, m or g)"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                proc, record = self.capture(*args)
                self.assertLauncherError(proc, record, "usage", message)
                self.assertEqual(proc.stdout, b"")
                self.assertFalse(self.ctx.log.exists())

    def test_unopenable_log_is_a_usage_error(self):
        bad = self.ctx.dir / "no-such-dir" / "agent.log"
        proc = self.seat.run("--capture-log", str(bad), "--status-file", str(self.ctx.status), "--id", "callers-bad",
                             "--", "true")
        record = json.loads(self.ctx.status.read_text())
        self.assertLauncherError(proc, record, "usage",
                                 f"--capture-log: cannot open '{bad.parent}': No such file or directory")  # the component
        self.assertEqual(proc.stdout, b"")
        self.assertNoContainer("callers-bad")


class ReferenceCaller(SeatTest):
    def setUp(self):
        super().setUp()
        self.ctx = Context(self.seat)
        self.addCleanup(shutil.rmtree, self.ctx.dir, True)

    def run_caller(self, command, options=(), **kw):
        return caller.run_captured(command, str(self.ctx.log), str(self.ctx.status), options=options,
                                   launcher=str(LAUNCHER), env=self.ctx.env(), **kw)

    def test_embedded_table_equals_the_launchers(self):
        self.assertEqual(caller.EXIT_CODES, CODES)
        self.assertEqual(set(caller.ERRORS), set(CODES))
        self.assertEqual(len({cls for cls in caller.ERRORS.values()}), len(CODES))  # distinct exceptions

    def test_agent_output_and_exit(self):
        run = self.run_caller(["bash", "-c", "echo hello; exit 5"])
        self.assertEqual((run.exit_code, run.outcome, run.log_path), (5, "exited", str(self.ctx.log)))
        self.assertEqual(pathlib.Path(run.log_path).read_bytes(), b"hello\n")
        self.assertEqual(run.record["agent_exit_code"], 5)

    def test_the_example_runs_the_library(self):
        out = self.ctx.dir / "example-out"
        proc = subprocess.run([sys.executable, str(ROOT / "examples" / "agent_sandbox_caller.py"), "callers-example",
                               str(out), "--", "bash", "-c", "echo from-the-example; exit 3"], capture_output=True,
                              text=True, timeout=180, env=self.ctx.seat.env(PYTHONPATH=str(BUILD / "python"),
                                                                           PATH=f"{BUILD}:{self.ctx.bin}:{os.environ['PATH']}"))
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertEqual(json.loads(proc.stdout), {"outcome": "exited", "exit_code": 3, "seat": None,
                                                   "log": str(out / "callers-example.log")})
        self.assertEqual((out / "callers-example.log").read_text(), "from-the-example\n")

    def test_each_forced_failure_maps_to_its_exception(self):
        for kind, force in FORCERS.items():
            with self.subTest(kind=kind):
                self.seat.write(f'socket = "/run/agent-sandbox/podman.sock"\nimage = "{IMAGE}"\n'
                                f'workspace_root = "{self.seat.workspaces}"\n')
                args = force(self.ctx)
                dash = args.index("--")
                with self.assertRaises(caller.ERRORS[kind]) as raised:
                    self.run_caller(args[dash + 1:], options=args[:dash])
                self.assertEqual(raised.exception.exit_code, CODES[kind])
                self.assertEqual(raised.exception.record["error_kind"], kind)
                self.assertFalse(self.ctx.marker.exists())


class NoFallback(SeatTest):
    def setUp(self):
        super().setUp()
        self.ctx = Context(self.seat)
        self.addCleanup(shutil.rmtree, self.ctx.dir, True)

    def test_every_kind_is_accounted_for(self):
        self.assertEqual(set(FORCERS) | set(NOT_FORCIBLE_HERE), set(CODES))
        self.assertEqual(set(FORCERS) & set(NOT_FORCIBLE_HERE), set())

    def force(self, kind, env):
        self.seat.write(f'socket = "/run/agent-sandbox/podman.sock"\nimage = "{IMAGE}"\n'
                        f'workspace_root = "{self.seat.workspaces}"\n')
        args = FORCERS[kind](self.ctx)
        self.ctx.status.unlink(missing_ok=True)
        proc = self.seat.run("--capture-log", str(self.ctx.log), "--status-file", str(self.ctx.status),
                             "--id", "callers-nf-" + kind.replace("_", "-"), *args, env=env)
        return proc, json.loads(self.ctx.status.read_text())

    def test_no_failure_runs_anything_on_the_host_whatever_the_environment(self):
        for kind in FORCERS:
            with self.subTest(kind=kind):
                plain = self.force(kind, self.ctx.env())
                self.assertEqual(plain[0].returncode, CODES[kind], plain[0].stderr)
                self.assertEqual(plain[1]["error_kind"], kind)
                switched = self.force(kind, self.ctx.env(**KILL_SWITCHES))
                self.assertEqual(comparable(*switched), comparable(*plain))
                self.assertFalse(self.ctx.marker.exists(), self.ctx.marker.read_text() if self.ctx.marker.exists()
                                 else "")
                self.assertEqual(session_containers("callers-nf-" + kind.replace("_", "-")), [])


class NoHostExecInTheLauncher(SeatTest):
    """Grep-level: the launcher library and its executables never exec a program."""

    # A call of any exec/spawn function, in code (string literals are blanked out first).
    EXEC_CALL = re.compile(r"\b(exec[lv]\w*|posix_spawn\w*|system|popen|v?fork)\s*\(")
    STRING = re.compile(r'"(?:\\.|[^"\\])*"')
    # The one exception: the NoNewPrivs re-exec runs /usr/bin/systemd-run and /usr/bin/systemctl,
    # and `agent-sandbox git` replaces itself with /usr/bin/git; nothing else (the site refuses any
    # other argv[0]; docs/PREFLIGHT.md, docs/CALLERS.md).
    SPAWN_SITE = pathlib.Path("preflight/spawn.cc")
    SPAWN_SYMBOLS = ("execv", "fork")

    def test_no_exec_in_launcher_sources(self):
        offenders = []
        for d in ("launcher", "credtable", "mounts", "preflight"):
            for path in sorted((ROOT / d).glob("*")):
                if path.suffix not in (".cc", ".h") or path.relative_to(ROOT) == self.SPAWN_SITE:
                    continue
                for n, line in enumerate(path.read_text().splitlines(), 1):
                    code = self.STRING.sub('""', line)
                    if self.EXEC_CALL.search(code) and not line.lstrip().startswith("//"):
                        offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
        self.assertEqual(offenders, [])

    def test_no_exec_symbols_in_agent_sandbox(self):
        syms = subprocess.run(["nm", "-D", "--undefined-only", str(LAUNCHER)], capture_output=True, text=True,
                              check=True).stdout.split()
        found = sorted(s for s in syms if s.split("@")[0] not in self.SPAWN_SYMBOLS and s.split("@")[0] in
                       ("execv", "execve", "execvp", "execvpe", "execl", "execlp", "fork", "vfork", "posix_spawn",
                        "posix_spawnp", "system", "popen"))
        self.assertEqual(found, [])
