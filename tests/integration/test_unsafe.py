"""agent-sandbox-unsafe: refusals on this VM, the real systemd-run path inside a real systemd seat.

Every refusal runs a command that would create a marker file; the marker never appears.
This VM is itself a container (/.dockerenv) without systemd, so the refusal paths past the
container check use agent-sandbox-unsafe-testroot (a test-only build whose container-marker
files and /run/systemd/system are looked up under --test-root); the start path runs the real
executable on a seat host booted here with systemd as PID 1, reached over ssh with a real PTY.
"""
import os
import pathlib
import pty
import shutil
import subprocess
import tempfile
import tomllib
import unittest

from harness import BUILD, CODES, CONTAINERS_CONF, IMAGE, ROOT, unavailable

HATCH = BUILD / "agent-sandbox-unsafe"
TEST_HATCH = BUILD / "agent-sandbox-unsafe-testroot"
TERMINAL = "is not a terminal: agent-sandbox-unsafe is for a human at a terminal"
MARKERS = ["CODEX_SANDBOX", "CODEX_HOME", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CURSOR_AGENT",
           "AGENT_SANDBOX_SESSION", "AGENT_SANDBOX_UNSAFE_SESSION"]
SYSTEMD_MISSING = ("agent-sandbox-unsafe: systemd is not running on this host (no /run/systemd/system): cannot "
                   "start a scope in unsafe.slice")


def pty_run(argv, env=None, timeout=60):
    """Runs argv with a real terminal on stdin/stdout/stderr; returns (exit code, output)."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvpe(argv[0], argv, env or os.environ)
        finally:
            os._exit(127)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace").replace("\r\n", "\n")


def clean_env(**more):
    env = {k: v for k, v in os.environ.items() if k != "container"
           and not any(k == m or (m.endswith("_") and k.startswith(m)) for m in MARKERS + ["CODEX_"])}
    env.update(more)
    return env


class Refusals(unittest.TestCase):
    """On this VM: nothing starts unless a human is at a terminal outside containers and agents."""

    def setUp(self):
        if not (HATCH.exists() and TEST_HATCH.exists()):
            unavailable(self, f"{HATCH} is not built")
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="asbx-callers-unsafe-"))
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.marker = self.dir / "ran"
        self.agent = self.dir / "agent"
        self.agent.write_text(f"#!/bin/sh\ntouch {self.marker}\n")
        self.agent.chmod(0o755)
        self.root = self.dir / "root"
        (self.root / "run").mkdir(parents=True)

    def assertRefused(self, code, output, reason, kind="unsafe_refused"):
        self.assertEqual(code, CODES[kind], output)
        prefix = "agent-sandbox-unsafe: refused: " if kind == "unsafe_refused" else "agent-sandbox-unsafe: "
        self.assertEqual(output.strip(), prefix + reason)
        self.assertFalse(self.marker.exists(), "the agent was started")

    def test_no_terminal(self):
        for exe in (HATCH, TEST_HATCH):
            args = [str(exe)] + (["--test-root", str(self.root)] if exe == TEST_HATCH else []) + [str(self.agent)]
            with self.subTest(exe=exe.name):
                proc = subprocess.run(args, capture_output=True, text=True, env=clean_env(), stdin=subprocess.DEVNULL)
                self.assertRefused(proc.returncode, proc.stderr, "stdin " + TERMINAL)
                self.assertEqual(proc.stdout, "")

    def test_stdout_not_a_terminal(self):
        main, tty = os.openpty()
        try:
            proc = subprocess.run([str(TEST_HATCH), "--test-root", str(self.root), str(self.agent)], stdin=tty,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
        finally:
            os.close(main), os.close(tty)
        self.assertRefused(proc.returncode, proc.stderr, "stdout " + TERMINAL)

    def test_each_agent_marker(self):
        for name in MARKERS:
            with self.subTest(marker=name):
                code, out = pty_run([str(TEST_HATCH), "--test-root", str(self.root), "--", str(self.agent)],
                                    clean_env(**{name: "1"}))
                self.assertRefused(code, out, f"agent marker {name} is set in the environment: an agent never runs "
                                              "on the host")

    def test_container_markers(self):
        code, out = pty_run([str(TEST_HATCH), "--test-root", str(self.root), str(self.agent)],
                            clean_env(container="podman"))
        self.assertRefused(code, out, "running inside a container (container=podman in the environment)")
        for marker in ("/.dockerenv", "/run/.containerenv"):
            (self.root / marker.lstrip("/")).write_text("")
            with self.subTest(marker=marker):
                code, out = pty_run([str(TEST_HATCH), "--test-root", str(self.root), str(self.agent)], clean_env())
                self.assertRefused(code, out, f"running inside a container ({marker} exists)")

    def test_the_real_executable_on_this_vm(self):
        """The VM is a container itself: the real hatch refuses here, whatever the terminal."""
        present = [f for f in ("/run/.containerenv", "/.dockerenv") if os.path.lexists(f)]
        if not present:
            unavailable(self, "this machine is not a container (no /run/.containerenv or /.dockerenv): the real "
                              "executable's container refusal cannot be observed here")
        code, out = pty_run([str(HATCH), "--", str(self.agent)], clean_env())
        self.assertRefused(code, out, f"running inside a container ({present[0]} exists)")

    def test_without_systemd_nothing_starts(self):
        """The test root has no run/systemd/system, whether or not systemd runs on this machine."""
        code, out = pty_run([str(TEST_HATCH), "--test-root", str(self.root), str(self.agent)], clean_env())
        self.assertEqual(code, CODES["systemd_run_failed"], out)
        self.assertEqual(out.strip(), SYSTEMD_MISSING)
        self.assertFalse(self.marker.exists())

    def test_usage(self):
        code, out = pty_run([str(HATCH), "--fallback", str(self.agent)], clean_env())
        self.assertRefused(code, out, "unknown option '--fallback'; run 'agent-sandbox-unsafe --help'", "usage")


STUB_AGENT = """#!/bin/sh
echo "stub agent ran: tty=$(tty) unsafe=$AGENT_SANDBOX_UNSAFE_SESSION"
grep -o 'unsafe.slice/.*' /proc/self/cgroup | head -n1
touch "$HOME/callers-stub-ran"
exit 7
"""


class OnASystemdSeat(unittest.TestCase):
    """The real systemd-run path, on a seat host booted for this test (asbx-callers-1)."""

    NAME = "asbx-callers-1"

    @classmethod
    def setUpClass(cls):
        cls.state = pathlib.Path(tempfile.mkdtemp(prefix="asbx-callers-seats-"))
        cls.env = dict(os.environ, ASBX_SEAT_STATE=str(cls.state), CONTAINERS_CONF=CONTAINERS_CONF)
        up = subprocess.run(["bash", str(ROOT / "scripts/seat-host/up.sh"), "1", "--prefix", "asbx-callers"],
                            capture_output=True, text=True, env=cls.env, timeout=1200)
        cls.boot_error = None if up.returncode == 0 else up.stderr[-2000:]
        if cls.boot_error:
            return
        host = tomllib.loads(pathlib.Path(up.stdout.strip()).read_text())["host"][0]
        cls.ssh = ["ssh", "-F", "/dev/null", "-i", host["identity_file"], "-o", "IdentitiesOnly=yes",
                   "-o", "BatchMode=yes", "-o", f"UserKnownHostsFile={cls.state}/known_hosts",
                   "-o", "LogLevel=ERROR", "-p", str(host["port"]), "seat@127.0.0.1"]
        stub = cls.state / "callers-stub-agent"
        stub.write_text(STUB_AGENT)
        for src in (BUILD / "agent-sandbox", HATCH, stub):
            subprocess.run(["podman", "cp", str(src), f"{cls.NAME}:/usr/local/bin/"], check=True, env=cls.env)
        subprocess.run(["podman", "exec", cls.NAME, "chmod", "0755", "/usr/local/bin/callers-stub-agent"],
                       check=True, env=cls.env)

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["bash", str(ROOT / "scripts/seat-host/down.sh"), cls.NAME], capture_output=True, env=cls.env,
                       timeout=300)
        shutil.rmtree(cls.state, ignore_errors=True)

    def setUp(self):
        if self.boot_error:
            unavailable(self, "cannot boot a seat host: " + self.boot_error)
        self.on_seat("rm -f ~/callers-stub-ran")

    def on_seat(self, command):
        return subprocess.run(self.ssh + [command], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=120)

    def stub_ran(self):
        return self.on_seat("test -e ~/callers-stub-ran").returncode == 0

    def test_hatch_starts_the_agent_while_the_container_path_is_broken(self):
        self.on_seat("mkdir -p ~/.config/agent-sandbox && printf 'socket = \"/run/user/1000/callers-gone.sock\"\\n"
                     f"image = \"{IMAGE}\"\\n' >~/.config/agent-sandbox/seat.toml")
        broken = self.on_seat("agent-sandbox -- callers-stub-agent")
        self.assertEqual(broken.returncode, CODES["podman_unreachable"], broken.stderr)
        self.assertIn("podman API at /run/user/1000/callers-gone.sock did not answer", broken.stderr)
        self.assertFalse(self.stub_ran())
        code, out = pty_run(self.ssh[:1] + ["-tt"] + self.ssh[1:] + ["agent-sandbox-unsafe -- callers-stub-agent"])
        self.assertEqual(code, 7, out)  # the agent's own exit code
        self.assertIn("ON THIS HOST, not sandboxed, in scope agent-sandbox-unsafe-", out)
        self.assertRegex(out, r"stub agent ran: tty=/dev/pts/\d+ unsafe=1\n")
        self.assertRegex(out, r"\nunsafe.slice/agent-sandbox-unsafe-\d+\.scope\n")
        self.assertTrue(self.stub_ran())
        left = self.on_seat("systemctl --user list-units --all --no-legend 'agent-sandbox-unsafe-*'")
        self.assertEqual(left.stdout.strip(), "")  # the transient scope is gone with the agent

    def test_refusals_on_the_seat_start_nothing(self):
        no_tty = self.on_seat("agent-sandbox-unsafe -- callers-stub-agent")
        self.assertEqual((no_tty.returncode, no_tty.stderr.strip()),
                         (CODES["unsafe_refused"], "agent-sandbox-unsafe: refused: stdin " + TERMINAL))
        code, out = pty_run(self.ssh[:1] + ["-tt"] + self.ssh[1:] +
                            ["CLAUDECODE=1 agent-sandbox-unsafe -- callers-stub-agent"])
        self.assertEqual(code, CODES["unsafe_refused"], out)
        self.assertIn("refused: agent marker CLAUDECODE is set in the environment", out)
        self.assertFalse(self.stub_ran())
