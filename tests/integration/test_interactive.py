"""The owner's own terminal sessions (docs/LIFECYCLE.md "Persistent sessions"): `--workspace .` in
the checkouts under several permitted roots, `--persist` sessions that outlive their terminal,
`attach`, `stop`, `ps`, the cdx/cld shims, and the real claude TUI driven through tmux as a person
would, locally and through a seat host. Every session id starts with `it-`."""
import json
import os
import pathlib
import pwd
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from harness import BUILD, CODES, LAUNCHER, ROOT, SOCKET, SeatTest, readable_copies, session_containers, session_entries, unavailable
from test_agents_e2e import claude_oauth, git

sys.path.insert(0, str(ROOT / "tests" / "mock_model"))
from netns_mock import MockInNetns  # noqa: E402

AGENT_UID = 1000  # rootful, caller root: the agent runs as 1000:1000
DETACH = b"\x10\x11"  # ctrl-p ctrl-q
SHIMS = ROOT / "packaging" / "shims"
OTHER_USER = "asbx-rootless"
TUI_WAIT = 120  # seconds: the claude TUI inside a fresh container, on a shared machine


def session_id(tag):
    return "it-%s-%d" % (tag, os.getpid())


def wait_until(predicate, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError("timed out after %ds waiting for %s" % (timeout, what))


class Tmux:
    """A tmux server of the test's own (-L): terminals to start, type into, read and kill."""

    def __init__(self, test, env):
        self.name = "it-%d-%d" % (os.getpid(), int(time.time() * 1000) % 100000)
        self.env = env
        self.test = test
        test.addCleanup(self.tmux, "kill-server", check=False)

    def tmux(self, *args, check=True):
        return subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True, env=self.env,
                              check=check, timeout=30)

    def start(self, terminal, command, cwd, size=(120, 40), exit_file=None):
        """`command` (argv) in a new terminal; its exit status goes to exit_file when given."""
        line = shlex.join(command)
        if exit_file:
            line = "%s; echo $? > %s" % (line, shlex.quote(str(exit_file)))
        self.tmux("new-session", "-d", "-s", terminal, "-x", str(size[0]), "-y", str(size[1]), "-c", str(cwd), line)

    def screen(self, terminal):
        return self.tmux("capture-pane", "-p", "-t", terminal, check=False).stdout

    def wait_for(self, terminal, text, timeout=TUI_WAIT):
        try:
            return wait_until(lambda: text in self.screen(terminal) and self.screen(terminal), timeout, repr(text))
        except AssertionError as e:
            raise AssertionError("%s; the screen:\n%s" % (e, self.screen(terminal))) from None

    def keys(self, terminal, *keys):
        for key in keys:
            self.tmux("send-keys", "-t", terminal, key)
            time.sleep(0.3)

    def type(self, terminal, text):
        self.tmux("send-keys", "-t", terminal, "-l", text)
        time.sleep(0.3)
        self.keys(terminal, "Enter")

    def kill(self, terminal):
        self.tmux("kill-session", "-t", terminal)


def print_screen(title, text):
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    print("\n---- %s ----\n%s\n---- end ----" % (title, "\n".join(lines)), file=sys.stderr)


class InteractiveSeat(SeatTest):
    """A seat with two permitted roots: ~/src-like `src` and the harness's `workspaces`."""

    def setUp(self):
        super().setUp()
        if shutil.which("tmux") is None:
            unavailable(self, "tmux is not installed (scripts/setup.sh installs it)")
        self.src = self.seat.dir / "src"
        self.src.mkdir()
        self.git_root = self.seat.dir / "git-common"
        self.git_root.mkdir()
        self.seat.write(self.seat.config_file.read_text() + f'workspace_roots = ["{self.src}"]\n'
                        f'git_roots = ["{self.git_root}"]\n')

    def env(self, **more):
        return self.seat.env(PATH="%s:%s" % (BUILD, os.environ.get("PATH", "/usr/bin:/bin")), **more)

    def clone(self, name, under=None):
        path = (under or self.src) / name
        git("init", "-q", "-b", "main", str(path), cwd=self.seat.dir)
        (path / "sub").mkdir()
        (path / "README").write_text("seed\n")
        git("-C", str(path), "add", "README", cwd=self.seat.dir)  # a checkout people work in has history (and .git/logs)
        git("-C", str(path), "-c", "user.name=o", "-c", "user.email=o@o", "commit", "-q", "-m", "seed", cwd=self.seat.dir)
        subprocess.run(["chown", "-R", "%d:%d" % (AGENT_UID, AGENT_UID), str(path)], check=True)
        return path

    def launch(self, *args, cwd, input=b"", timeout=120, env=None):
        status = self.seat.dir / ("status-%d.json" % len(list(self.seat.dir.glob("status-*"))))
        proc = subprocess.run([str(LAUNCHER), "--status-file", str(status), *args], input=input, capture_output=True,
                              timeout=timeout, env=env or self.env(), cwd=str(cwd))
        return proc, (json.loads(status.read_text()) if status.exists() else None)

    def ps(self):
        out = subprocess.run([str(LAUNCHER), "ps", "--json"], capture_output=True, env=self.env(), timeout=60, check=True)
        return {e["session"]: e for e in json.loads(out.stdout)}

    def terminal_of(self, session):
        entry = self.ps().get(session)
        return entry and entry["terminal"]

    def start_detached(self, sid, timeout="90s", command=("sleep", "300")):
        """A persistent session, started from a pipe (no terminal) and detached at once with ctrl-p ctrl-q."""
        status = self.seat.dir / (sid + ".status.json")
        proc = subprocess.run([str(LAUNCHER), "--id", sid, "--tty", "--persist", "--timeout", timeout, "--status-file",
                               str(status), "--", *command], input=DETACH, capture_output=True, env=self.env(),
                              timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"agent-sandbox: detached from session {sid}; it goes on (reattach: agent-sandbox attach {sid})",
                      proc.stderr.decode())
        self.addCleanup(subprocess.run, [str(LAUNCHER), "stop", sid], capture_output=True, env=self.env(), timeout=90)
        wait_until(lambda: session_containers(sid), 60, "the container")
        return status

    def as_other_user(self, *args):
        """agent-sandbox as another seat user whose config names this seat's runtime dir."""
        launcher, _ = readable_copies()
        home = pathlib.Path(tempfile.mkdtemp(prefix="asbx-other-"))
        self.addCleanup(shutil.rmtree, home, True)
        (home / "agent-sandbox").mkdir()
        (home / "agent-sandbox" / "seat.toml").write_text(f'socket = "{SOCKET}"\nruntime_dir = "{self.seat.dir}/run"\n')
        for p in (home, home / "agent-sandbox", home / "agent-sandbox" / "seat.toml"):
            p.chmod(0o755)
        return subprocess.run(["runuser", "-u", OTHER_USER, "--", "env", f"XDG_CONFIG_HOME={home}", str(launcher), *args],
                              capture_output=True, timeout=60, stdin=subprocess.DEVNULL)

    def session_dir(self, session):
        return self.seat.dir / "run" / session

    def assertGone(self, session):
        self.assertNoContainer(session)
        self.assertFalse(self.session_dir(session).exists(), "the session dir was left behind")


class WorkspaceDot(InteractiveSeat):
    def test_dot_in_a_plain_clone_is_the_clone_under_a_second_root(self):
        proj = self.clone("proj")
        proc, record = self.launch("--id", session_id("dot"), "--workspace", ".", "--", "sh", "-c", "pwd; cat README",
                                   cwd=proj / "sub")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b"/sandbox/workspaces/proj\nseed\n")
        self.assertEqual(record["outcome"], "exited")
        self.assertGone(session_id("dot"))

    def test_dot_in_a_linked_worktree_needs_its_mirror_and_then_works(self):
        repo = self.clone("proj-repo", under=self.git_root)  # with its first commit
        worktree = self.src / "wt"
        git("worktree", "add", "-q", "-b", "wt", str(worktree), cwd=repo)
        subprocess.run(["chown", "-R", "%d:%d" % (AGENT_UID, AGENT_UID), str(repo), str(worktree)], check=True)
        (worktree / "lib").mkdir()
        proc, record = self.launch("--id", session_id("dot-wt0"), "--workspace", ".", "--", "true", cwd=worktree / "lib")
        self.assertLauncherError(proc, record, "git_unmountable",
                                 f"workspace '{worktree}': it is a linked worktree: name its mirror (the common dir) "
                                 "with --git-mirror PATH; the '.git' file is written by the agent and is not trusted alone")
        self.assertGone(session_id("dot-wt0"))
        proc, record = self.launch("--id", session_id("dot-wt"), "--workspace", ".", "--git-mirror", str(repo / ".git"),
                                   "--", "git", "rev-parse", "--abbrev-ref", "HEAD", cwd=worktree / "lib")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b"wt\n")
        self.assertGone(session_id("dot-wt"))

    def test_dot_outside_every_permitted_root_is_refused_and_nothing_is_made(self):
        outside = self.clone("elsewhere", under=self.seat.dir)
        proc, record = self.launch("--id", session_id("dot-out"), "--workspace", ".", "--", "true", cwd=outside / "sub")
        self.assertLauncherError(proc, record, "workspace_rejected",
                                 f"--workspace .: workspace '{outside}' resolves to '{outside}', outside the permitted "
                                 f"roots '{self.src}', '{self.seat.workspaces}'")
        self.assertGone(session_id("dot-out"))


class Shims(InteractiveSeat):
    def test_cdx_and_cld_plan_a_persistent_session_in_the_checkout_with_the_row(self):
        proj = self.clone("proj")
        credential = self.seat.dir / "cred.json"
        credential.write_text(json.dumps({"auth_mode": "apikey", "OPENAI_API_KEY": "sk-shim"}))
        for shim, row, bypass in (("cdx", "codex", "--dangerously-bypass-approvals-and-sandbox"),
                                  ("cld", "claude", "--dangerously-skip-permissions")):
            with self.subTest(shim=shim):
                proc = subprocess.run([str(SHIMS / shim), "--dry-run", "--id", session_id(shim), "--credential",
                                       str(credential), "--", "--version"], capture_output=True, env=self.env(),
                                      cwd=str(proj / "sub"), timeout=60)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                plan = json.loads(proc.stdout)
                body = plan["create_body"]
                self.assertEqual(body["command"], [row, bypass, "--version"])
                self.assertEqual((body["terminal"], body["work_dir"]), (True, "/sandbox/workspaces/proj"))
                self.assertEqual((plan["runtime"], plan["inner_sandbox"]), (row, "off: " + bypass))
                self.assertEqual((plan["persist"], plan["timeout_ms"]), (True, 8 * 3600 * 1000))
                self.assertEqual(body["labels"]["agent-sandbox.persist"], "1")
        proc = subprocess.run([str(SHIMS / "cld"), "--dry-run", "--timeout", "2h", "--credential", str(credential)],
                              capture_output=True, env=self.env(ASBX_TIMEOUT="1h"), cwd=str(proj), timeout=60)
        self.assertEqual(json.loads(proc.stdout)["timeout_ms"], 2 * 3600 * 1000, proc.stderr)
        self.assertEqual(session_entries(self.seat.dir / "run"), [], "a dry run made a session dir")


class PersistentErrors(InteractiveSeat):
    def test_attach_and_stop_of_an_id_that_does_not_exist(self):
        sid = session_id("none")
        path = self.session_dir(sid) / "attach.sock"
        for command in ("attach", "stop"):
            with self.subTest(command=command):
                proc = subprocess.run([str(LAUNCHER), command, sid], capture_output=True, env=self.env(), timeout=60)
                self.assertEqual(proc.returncode, CODES["attach_refused"], proc.stderr)
                self.assertEqual(proc.stderr.decode(), f"agent-sandbox: {command}: no persistent session '{sid}' on "
                                                       f"this seat (no attach socket at {path})\n")
                self.assertEqual(proc.stdout, b"")
                self.assertGone(sid)

    def test_persist_needs_tty_and_timeout_and_nothing_is_made(self):
        sid = session_id("rules")
        for args, message in ((["--persist", "--timeout", "1m"], "--persist needs --tty: a persistent session is a "
                                                                  "terminal to come back to"),
                              (["--persist", "--tty"], "--persist needs --timeout: a persistent session still ends at "
                                                       "its timeout (e.g. --timeout 8h)")):
            with self.subTest(args=args):
                proc, record = self.launch("--id", sid, *args, "--", "true", cwd=self.seat.dir)
                self.assertLauncherError(proc, record, "usage", message)
                self.assertGone(sid)

    def test_attach_of_a_plain_session_says_it_is_not_persistent(self):
        sid = session_id("plain")
        proc = subprocess.Popen([str(LAUNCHER), "--id", sid, "--", "sleep", "60"], env=self.env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(proc.wait)
        self.addCleanup(proc.terminate)
        wait_until(lambda: session_containers(sid), 60, "the plain session's container")
        out = subprocess.run([str(LAUNCHER), "attach", sid], capture_output=True, env=self.env(), timeout=60)
        self.assertEqual(out.returncode, CODES["attach_refused"])
        self.assertEqual(out.stderr.decode(), f"agent-sandbox: attach: session '{sid}' is not persistent (started "
                                              "without --persist): only the terminal that started it shows it\n")
        self.assertIsNone(proc.poll(), "the plain session was disturbed")

    def test_attach_by_another_user_is_refused_twice_over_and_nothing_changes(self):
        try:
            other = pwd.getpwnam(OTHER_USER)
        except KeyError:
            return unavailable(self, f"no user {OTHER_USER} (scripts/rootless-seat.sh makes it)")
        sid = session_id("other")
        self.start_detached(sid)
        sock = self.session_dir(sid) / "attach.sock"
        self.assertEqual(oct(self.session_dir(sid).stat().st_mode & 0o777), "0o700")
        self.assertEqual(oct(sock.stat().st_mode & 0o777), "0o600")
        for p in (self.seat.dir, self.seat.dir / "run"):
            p.chmod(0o755)
        # The filesystem stops the other user: the session dir is the owner's alone.
        proc = self.as_other_user("attach", sid)
        self.assertEqual(proc.returncode, CODES["attach_refused"], proc.stderr)
        self.assertEqual(proc.stderr.decode(), f"agent-sandbox: attach: session '{sid}' is not yours: {sock} belongs to "
                                               "the seat user who started it (only that user, or root, may attach)\n")
        # Opened wide (the control: now the socket is reached), the supervisor's peer check stops it.
        self.session_dir(sid).chmod(0o755)
        sock.chmod(0o666)
        for command in ("attach", "stop"):
            proc = self.as_other_user(command, sid)
            self.assertEqual(proc.returncode, CODES["attach_refused"], proc.stderr)
            self.assertEqual(proc.stderr.decode(), f"agent-sandbox: {command}: session '{sid}': uid {other.pw_uid} may "
                                                   "not attach: the session belongs to uid 0 (only that user, or root, "
                                                   "may attach)\n")
        self.assertEqual(self.ps()[sid]["terminal"], "detached")
        self.assertEqual(len(session_containers(sid)), 1)
        stop = subprocess.run([str(LAUNCHER), "stop", sid], capture_output=True, env=self.env(), timeout=90)
        self.assertEqual((stop.returncode, stop.stdout), (0, f"stopped {sid} (exit 143)\n".encode()), stop.stderr)
        self.assertGone(sid)


class PersistentTimeout(InteractiveSeat):
    def test_a_detached_session_reaching_its_timeout_is_killed_removed_and_recorded(self):
        sid = session_id("timeout")
        status = self.start_detached(sid, timeout="12s")
        self.assertEqual(self.terminal_of(sid), "detached")
        self.assertEqual(self.ps()[sid]["orphan"], None)
        gc = subprocess.run([str(LAUNCHER), "gc", "--json"], capture_output=True, env=self.env(), timeout=60, check=True)
        self.assertEqual([r for r in json.loads(gc.stdout)["removed"] if sid in r], [], "gc removed a live persistent session")
        self.assertEqual(len(session_containers(sid)), 1)
        record = wait_until(lambda: status.exists() and json.loads(status.read_text()), 60, "the status record")
        self.assertEqual((record["outcome"], record["error_kind"], record["exit_code"], record["cause"]),
                         ("killed", "killed_timeout", CODES["killed_timeout"], "timeout"))
        self.assertEqual(record["message"], "killed: the session's timeout of 12000 ms passed")
        self.assertTrue(record["container_removed"])
        self.assertTrue(record["persist"])
        ledger = [json.loads(line) for line in self.seat.ledger.read_text().splitlines()]
        self.assertEqual([(r["id"], r["error_kind"]) for r in ledger if r["id"] == sid], [(sid, "killed_timeout")])
        wait_until(lambda: not self.session_dir(sid).exists(), 10, "the session dir to go")
        self.assertGone(sid)


class OrphanRule(InteractiveSeat):
    def test_a_plain_tty_session_still_dies_with_its_terminal(self):
        sid = session_id("orphan")
        status = self.seat.dir / "orphan.json"
        tmux = Tmux(self, self.env())
        tmux.start("term", [str(LAUNCHER), "--id", sid, "--tty", "--status-file", str(status), "--", "sh", "-c",
                            "echo ready; sleep 300"], self.seat.dir)
        tmux.wait_for("term", "ready", 60)
        tmux.kill("term")
        record = wait_until(lambda: status.exists() and json.loads(status.read_text()), 60, "the status record")
        self.assertEqual((record["outcome"], record["cause"], record["signal"], record["exit_code"]),
                         ("killed", "signal", 1, 129))
        self.assertTrue(record["container_removed"])
        self.assertGone(sid)


class ExitCodeAfterReattach(InteractiveSeat):
    def test_a_session_survives_its_terminal_and_its_exit_code_reaches_the_new_one(self):
        sid = session_id("code")
        tmux = Tmux(self, self.env())
        tmux.start("first", [str(LAUNCHER), "--id", sid, "--tty", "--persist", "--timeout", "2m", "--", "sh", "-c",
                             "echo waiting; read line; echo got-$line; exit 7"], self.seat.dir)
        tmux.wait_for("first", "waiting", 60)
        tmux.kill("first")
        wait_until(lambda: self.terminal_of(sid) == "detached", 30, "the session to be detached")
        self.assertEqual(len(session_containers(sid)), 1, "the container went with the terminal")
        code = self.seat.dir / "attach.code"
        tmux.start("second", [str(LAUNCHER), "attach", sid], self.seat.dir, size=(100, 30), exit_file=code)
        tmux.wait_for("second", "waiting", 30)  # the screen so far, replayed
        self.assertEqual(self.terminal_of(sid), "attached")
        tmux.type("second", "hello")
        wait_until(code.exists, 30, "the attach to end")
        self.assertEqual(code.read_text(), "7\n")
        self.assertGone(sid)


class TmuxClaude(InteractiveSeat):
    """The real claude TUI in a persistent session started with `cld` in a clone, against the mock model
    in a network namespace of this test; its terminal killed, then attached from a new one."""

    FINAL = "Mock answer for the owner."

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            unavailable(self, "network namespaces for the mock need root")
        name = "it-mock-%d" % os.getpid()
        self.mock = MockInNetns(name, command="echo answered >> answers.txt", final=self.FINAL)
        self.mock.__enter__()
        self.addCleanup(self.mock.__exit__, None, None, None)
        creds = self.seat.dir / "creds"
        creds.mkdir(mode=0o700)
        self.credential = creds / "claude.json"
        self.credential.write_text(json.dumps(claude_oauth()))
        self.credential.chmod(0o600)

    def answered(self):
        """How many model turns the mock answered with FINAL (a prompt's second request)."""
        return sum(1 for r in self.mock.requests() if r["api"] == "messages" and r["turn"] == 2)

    def test_claude_survives_a_killed_terminal_and_answers_after_attach(self):
        sid = session_id("claude")
        proj = self.clone("proj")
        status = self.seat.dir / "claude.json"
        env = self.env(ANTHROPIC_BASE_URL=self.mock.base_url, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                       DISABLE_AUTOUPDATER="1")
        tmux = Tmux(self, env)
        tmux.start("first", [str(SHIMS / "cld"), "--id", sid, "--timeout", "10m", "--network", self.mock.network,
                             "--credential", str(self.credential), "--status-file", str(status)], proj / "sub")
        answer_first_questions(tmux, "first")
        tmux.type("first", "Write the first answer.")
        tmux.wait_for("first", self.FINAL)
        wait_until(lambda: (proj / "answers.txt").exists(), 30, "the first answer's file")
        before = tmux.screen("first")
        print_screen("before the terminal is killed (%s)" % sid, before)
        tmux.kill("first")
        wait_until(lambda: self.terminal_of(sid) == "detached", 30, "the session to be detached")
        entry = self.ps()[sid]
        self.assertTrue(entry["persist"])
        self.assertGreater(entry["left_s"], 500)
        code = self.seat.dir / "claude.code"
        tmux.start("second", [str(LAUNCHER), "attach", sid], self.seat.dir, size=(110, 36), exit_file=code)
        after = tmux.wait_for("second", self.FINAL, 60)
        tmux.wait_for("second", "bypass permissions on", 60)
        print_screen("after attach from a new terminal", tmux.screen("second"))
        self.assertEqual(self.terminal_of(sid), "attached")
        self.assertIn("Write the first answer.", after)
        tmux.type("second", "Write the second answer.")
        wait_until(lambda: (proj / "answers.txt").read_text().count("answered") == 2, 60, "the second answer's file")
        wait_until(lambda: self.answered() == 2, 60, "the second answer")
        wait_until(lambda: tmux.screen("second").count(self.FINAL) == 2, 30, "the second answer on the screen")
        print_screen("the second answer", tmux.screen("second"))
        tmux.type("second", "/exit")
        wait_until(code.exists, 60, "claude to exit and the attach to end")
        self.assertEqual(code.read_text(), "0\n")
        record = json.loads(status.read_text())
        self.assertEqual((record["outcome"], record["exit_code"], record["agent_exit_code"]), ("exited", 0, 0))
        self.assertEqual((record["runtime"], record["inner_sandbox"]), ("claude", "off: --dangerously-skip-permissions"))
        self.assertTrue(record["persist"])
        self.assertTrue(record["container_removed"])
        self.assertEqual(self.answered(), 2)
        self.assertGone(sid)


def answer_first_questions(tmux, terminal):
    """A person's first minute in claude: trust the folder, accept bypass mode (the container is the sandbox)."""
    for choice in ("Yes, I trust this folder", "Yes, I accept"):
        tmux.wait_for(terminal, choice)
        wait_until(lambda: tmux.keys(terminal, "Down") or "❯ " + choice in tmux.screen(terminal), 30,
                   "the cursor on " + repr(choice))  # a key sent before the dialog listens is lost
        tmux.keys(terminal, "Enter")
    tmux.wait_for(terminal, "bypass permissions on")


# Through a seat host: ASBX_REMOTE_PREFIX=P uses seats P-1, P-2 (scripts/seat-host/up.sh 2 --prefix P).
STATE = pathlib.Path(os.environ.get("ASBX_SEAT_STATE", "/var/lib/agent-sandbox/seats"))
PREFIX = os.environ.get("ASBX_REMOTE_PREFIX", "rd")
REGISTRY = STATE / f"registry-{PREFIX}.toml"
SEAT = f"{PREFIX}-1"
SSH = ROOT / "scripts" / "seat-host" / "ssh.sh"
CLAUDE_MOCK = ROOT / "tests" / "integration" / "remote" / "claude_tui_mock.pl"


def on_seat(command, input=None, check=True):
    return subprocess.run([str(SSH), SEAT, command], capture_output=True, text=True, timeout=60, check=check,
                          input=input)


class SeatHostTest(unittest.TestCase):
    """Sessions on seat host SEAT through the registry, from a caller dir of the test's own."""

    def setUp(self):
        if not LAUNCHER.exists() or not REGISTRY.exists() or shutil.which("tmux") is None:
            unavailable(self, f"seat {SEAT} not up ({REGISTRY}; scripts/test-prep.d/40-remote-seats.sh) or no tmux")
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="asbx-it-remote-"))
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.env = dict(os.environ, XDG_CONFIG_HOME=str(self.dir / "config"), XDG_STATE_HOME=str(self.dir / "state"))
        self.tag = "it%d" % os.getpid()
        self.ws = "/home/seat/sandbox/workspaces/" + self.tag
        on_seat("mkdir -p %s && cat > %s/claude_tui_mock.pl" % (self.ws, self.ws), input=CLAUDE_MOCK.read_text())
        self.addCleanup(on_seat, "rm -rf " + self.ws, check=False)
        self.credential = "/home/seat/%s-claude.json" % self.tag
        on_seat("umask 077; cat > " + self.credential, input=json.dumps(claude_oauth()))
        self.addCleanup(on_seat, "rm -f " + self.credential, check=False)

    def agent_sandbox(self, *args):
        return [str(LAUNCHER), "--registry", str(REGISTRY), *args]

    def remote_ps(self):
        out = subprocess.run(self.agent_sandbox("ps", "--json"), capture_output=True, env=self.env, timeout=90)
        return {e["session"]: e for e in json.loads(out.stdout or b"[]")}


class TmuxClaudeThroughASeat(SeatHostTest):
    """The same as TmuxClaude on a seat host through the registry. The seat's sshd forwards no ports
    and neither the seat nor the image has python: the mock is tests/integration/remote/claude_tui_mock.pl,
    started by the session's own command next to claude on the container's loopback."""

    FINAL = "Mock answer from the seat."
    PORT = 18090

    def test_claude_on_a_seat_survives_a_killed_terminal_and_answers_after_attach(self):
        sid = session_id("seat-claude")
        script = ("perl claude_tui_mock.pl %d 'echo answered >> answers.txt' '%s' 2>/dev/null & sleep 0.5; "
                  "export ANTHROPIC_BASE_URL=http://127.0.0.1:%d; exec \"$@\"" % (self.PORT, self.FINAL, self.PORT))
        tmux = Tmux(self, self.env)
        tmux.start("first", self.agent_sandbox("--host", SEAT, "--id", sid, "--tty", "--persist", "--timeout", "10m",
                                               "--runtime", "claude", "--credential", self.credential, "--workspace",
                                               self.ws, "--", "bash", "-c", script, "claude", "claude",
                                               "--dangerously-skip-permissions"), self.dir)
        self.addCleanup(subprocess.run, self.agent_sandbox("stop", sid), capture_output=True, env=self.env, timeout=90)
        answer_first_questions(tmux, "first")
        tmux.type("first", "Write the first answer.")
        tmux.wait_for("first", self.FINAL)
        print_screen("before the terminal is killed (%s on %s)" % (sid, SEAT), tmux.screen("first"))
        tmux.kill("first")
        entry = wait_until(lambda: self.remote_ps().get(sid, {}).get("terminal") == "detached" and self.remote_ps()[sid],
                           60, "the seat's session to be detached")
        self.assertEqual((entry["seat"], entry["persist"]), (SEAT, True))
        code = self.dir / "attach.code"
        tmux.start("second", self.agent_sandbox("attach", sid), self.dir, size=(110, 36), exit_file=code)
        tmux.wait_for("second", self.FINAL, 60)
        tmux.wait_for("second", "bypass permissions on", 60)
        print_screen("after attach from a new terminal, through the registry", tmux.screen("second"))
        tmux.type("second", "Write the second answer.")
        wait_until(lambda: on_seat("cat %s/answers.txt" % self.ws, check=False).stdout.count("answered") == 2, 60,
                   "the second answer on the seat")
        wait_until(lambda: tmux.screen("second").count(self.FINAL) == 2, 60, "the second answer on the screen")
        print_screen("the second answer, through the registry", tmux.screen("second"))
        tmux.type("second", "/exit")
        wait_until(code.exists, 90, "claude to exit and the attach to end")
        self.assertEqual(code.read_text(), "0\n")
        ledger = [json.loads(line) for line in (self.dir / "state/agent-sandbox/ledger.jsonl").read_text().splitlines()]
        mine = [r for r in ledger if r["id"] == sid]
        self.assertEqual([(r["seat"], r["outcome"], r["exit_code"], r["persist"]) for r in mine], [(SEAT, "exited", 0, True)])
        self.assertTrue(mine[0]["container_removed"])
        left = on_seat(f"podman ps -a --filter label=agent-sandbox.session={sid} --format '{{{{.Names}}}}'").stdout
        self.assertEqual(left.strip(), "")


class ThroughTheRegistry(SeatHostTest):
    """`stop` and a missing id through the registry; the seats are found by asking each."""

    def test_stop_ends_a_detached_seat_session_and_a_missing_id_is_refused(self):
        sid = session_id("seat-stop")
        start = subprocess.Popen(self.agent_sandbox("--host", SEAT, "--id", sid, "--tty", "--persist", "--timeout", "2m",
                                                    "--", "sleep", "300"), stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env)
        self.addCleanup(subprocess.run, self.agent_sandbox("stop", sid), capture_output=True, env=self.env, timeout=90)
        entry = wait_until(lambda: self.remote_ps().get(sid), 60, "the session in ps through the registry")
        self.assertEqual((entry["seat"], entry["terminal"]), (SEAT, "attached"))
        out, err = start.communicate(DETACH, timeout=60)  # typed once the seat's terminal is raw, as a person would
        self.assertEqual(start.returncode, 0, err)
        self.assertIn(f"detached from session {sid}; it goes on".encode(), out + err)
        self.assertFalse((self.dir / "state/agent-sandbox/ledger.jsonl").exists(), "a record before the session ended")
        wait_until(lambda: self.remote_ps()[sid]["terminal"] == "detached", 30, "the seat's session to be detached")
        missing = subprocess.run(self.agent_sandbox("attach", "it-nowhere"), capture_output=True, env=self.env, timeout=90)
        self.assertEqual(missing.returncode, CODES["attach_refused"], missing.stderr)
        self.assertIn(b"agent-sandbox: attach: no persistent session 'it-nowhere' on the registry's seats (", missing.stderr)
        stop = subprocess.run(self.agent_sandbox("stop", sid), capture_output=True, env=self.env, timeout=120)
        self.assertEqual((stop.returncode, stop.stdout), (0, f"stopped {sid} (exit 143)\n".encode()), stop.stderr)
        ledger = [json.loads(line) for line in (self.dir / "state/agent-sandbox/ledger.jsonl").read_text().splitlines()]
        self.assertEqual([(r["seat"], r["cause"], r["exit_code"]) for r in ledger if r["id"] == sid], [(SEAT, "signal", 143)])
        self.assertNotIn(sid, self.remote_ps())


    def test_persist_where_the_launcher_would_re_exec_is_refused_before_anything_exists(self):
        """NoNewPrivs=1 on a rootless seat means the systemd-run re-exec, whose unit ends with its terminal."""
        sid = session_id("seat-nnp")
        out = on_seat("setpriv --no-new-privs sandbox-run --id %s --tty --persist --timeout 1m -- true; echo rc=$?; "
                      "ls -A $XDG_RUNTIME_DIR/agent-sandbox/sessions/ 2>/dev/null | grep -c %s" % (sid, sid), check=False)
        self.assertEqual(out.stdout, "rc=%d\n0\n" % CODES["seat_preflight"], out.stderr)
        self.assertEqual(out.stderr, "sandbox-run: --persist: this launcher runs with NoNewPrivs=1 and would be re-exec'd "
                                     "in a transient unit, which ends with this terminal and would take the session "
                                     "along; start a persistent session from a terminal without NoNewPrivs (an ssh "
                                     "login or a desktop terminal)\n")
        self.assertEqual(on_seat(f"podman ps -aq --filter label=agent-sandbox.session={sid}").stdout, "")


if __name__ == "__main__":
    unittest.main()
