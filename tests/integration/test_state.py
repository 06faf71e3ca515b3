"""State collection (docs/STATE.md): the runtime's declared state comes back to DIR/<id>/ after
the session — from the real codex and claude CLIs against the mock model, locally and dispatched
to a real seat host — and nothing the rules refuse does: the hostile corpus is skipped and named,
the caller's machine is untouched outside DIR/<id>/. Timeout and SIGTERM endings still bring back
what was there."""
import json
import os
import pathlib
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest

from harness import GVISOR, LAUNCHER, ROOT, SeatTest, session_containers, unavailable
from test_agents_e2e import AgentSeat, claude_argv, claude_oauth, codex_argv

sys.path.insert(0, str(ROOT / "tests" / "mock_model"))

SEAT_STATE = pathlib.Path(os.environ.get("ASBX_SEAT_STATE", "/var/lib/agent-sandbox/seats"))
# The seats of test_remote.py (scripts/test-prep.d/40-remote-seats.sh copies this build's
# sandbox-run and credtable there); ASBX_STATE_SEATS=PREFIX uses seats booted with another prefix.
SEAT_PREFIX = os.environ.get("ASBX_STATE_SEATS", "rd")
REGISTRY = SEAT_STATE / ("registry-%s.toml" % SEAT_PREFIX)
SEAT = SEAT_PREFIX + "-1"
SSH = ROOT / "scripts" / "seat-host" / "ssh.sh"
MOCK = ROOT / "tests" / "integration" / "remote" / "codex_mock.pl"
RUN_TIMEOUT = 150


def tree(root):
    """{relative path: (kind, mode)} of everything under root, links not followed."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = pathlib.Path(dirpath) / name
            st = p.lstat()
            kind = "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"
            out[str(p.relative_to(root))] = (kind, stat.S_IMODE(st.st_mode))
    return out


class StateSeat(AgentSeat):
    def setUp(self):
        super().setUp()
        self.kept = self.seat.dir / "kept"

    def assertOnlyTree(self, session):
        """DIR holds exactly DIR/<id>, whose entries are 0755 dirs and 0644 regular files."""
        self.assertEqual(sorted(os.listdir(self.kept)), [session])
        for path, (kind, mode) in tree(self.kept / session).items():
            self.assertIn((kind, mode), (("dir", 0o755), ("file", 0o644)), path)

    def codex_credential(self, tag):
        return self.fake_credential("codex-%s.json" % tag, {"auth_mode": "apikey", "OPENAI_API_KEY": "sk-mock-%s" % tag})


class RealAgentsLocally(StateSeat):
    def test_a_codex_run_leaves_its_rollout_in_dir_id(self):
        session = "state-codex-%d" % os.getpid()
        worktree = self.linked_worktree("wt-state-codex")
        mock = self.netns("stcodex", "echo kept > note.txt", final="Rollout kept.")
        proc, record = self.seat.status(
            "--id", session, "--runtime", "codex", "--credential", str(self.codex_credential("local")),
            "--network", mock.network, "--workspace", str(worktree),
            "--git-mirror", str(self.git_root / (worktree.name + "-repo") / ".git"), "--state-dir", str(self.kept),
            "--timeout", "120s", "--", *codex_argv(mock, "Write the note."), timeout=RUN_TIMEOUT)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        self.assertEqual(proc.stdout, b"Rollout kept.\n")
        rollouts = sorted((self.kept / session / ".codex" / "sessions").glob("*/*/*/rollout-*.jsonl"))
        self.assertEqual(len(rollouts), 1, tree(self.kept))
        text = rollouts[0].read_text()
        self.assertIn("Rollout kept.", text)       # the model's answer
        self.assertIn("echo kept > note.txt", text)  # the tool call
        self.assertNotIn("sk-mock-local", text)
        state = record["state"]
        self.assertEqual(state["dir"], str(self.kept / session))
        self.assertEqual((state["files"], state["bytes"]), (1, rollouts[0].stat().st_size))
        self.assertEqual((state["skipped"], state["error"]), ([], None))
        self.assertOnlyTree(session)
        self.assertNoContainer(session)
        print("\nstate of a local codex session:\n%s" % json.dumps(state, indent=2), file=sys.stderr)

    def test_a_claude_run_leaves_its_transcript(self):
        session = "state-claude-%d" % os.getpid()
        worktree = self.linked_worktree("wt-state-claude")
        credential = self.fake_credential("claude-state.json", claude_oauth())
        mock = self.netns("stclaude", "echo kept > note.txt", final="Transcript kept.")
        env = self.seat.env(ANTHROPIC_BASE_URL=mock.base_url, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                            DISABLE_AUTOUPDATER="1")
        proc, record = self.seat.status(
            "--id", session, "--runtime", "claude", "--credential", str(credential), "--network", mock.network,
            "--workspace", str(worktree),
            "--git-mirror", str(self.git_root / (worktree.name + "-repo") / ".git"), "--state-dir", str(self.kept), "--timeout", "120s", "--",
            *claude_argv("Write the note."), timeout=RUN_TIMEOUT, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        transcripts = sorted((self.kept / session / ".claude" / "projects").glob("*/*.jsonl"))
        self.assertEqual(len(transcripts), 1, tree(self.kept))
        self.assertIn("Transcript kept.", transcripts[0].read_text())
        self.assertEqual(transcripts[0].parent.name, "-sandbox-workspaces-wt-state-claude")
        self.assertEqual(record["state"]["files"], 1)
        self.assertEqual(record["state"]["skipped"], [])
        self.assertOnlyTree(session)


# Built inside the container by the agent itself, under codex's state path.
HOSTILE = r"""
set -e
cd ~/.codex && mkdir -p sessions/2026 && cd sessions
echo '{"turn":1}' > 2026/rollout.jsonl
ln -s /etc/shadow shadow
ln -s ../auth.json cred-link
ln -s ../../.. up
mkfifo fifo
truncate -s 2G sparse
mkdir many && (cd many && seq 100000 | xargs touch)
ln ../auth.json hardlink
cp ../auth.json notes.txt
touch '...' '..;' "$(printf 'new\nline')"
chmod 4777 2026/rollout.jsonl
echo built
exit 7
"""


class HostileCorpus(StateSeat):
    def test_each_is_skipped_and_named_and_nothing_lands_outside(self):
        session = "state-hostile-%d" % os.getpid()
        outside = self.seat.dir / "outside"
        outside.mkdir()
        shadow_before = pathlib.Path("/etc/shadow").stat()
        proc, record = self.seat.status(
            "--id", session, "--runtime", "codex", "--credential", str(self.codex_credential("hostile")),
            "--state-dir", str(self.kept), "--", "bash", "-c", HOSTILE, timeout=RUN_TIMEOUT)
        self.assertEqual(proc.returncode, 7, proc.stderr.decode(errors="replace"))  # the agent's own code
        self.assertEqual(proc.stdout, b"built\n")
        state = record["state"]
        skipped = {s["path"]: s["reason"] for s in state["skipped"]}
        p = ".codex/sessions/"
        self.assertEqual(skipped, {
            p + "cred-link": "symlink",
            **({} if GVISOR else {p + "fifo": "fifo"}),  # under gVisor the FIFO is the sentry's, never on the seat
            p + "hardlink": "hardlink (2 links)",
            p + "many": "more than 10000 entries (the file-count cap): not read",
            p + "new\nline": "a name with a control character",
            p + "notes.txt": "a copy of a staged credential",
            p + "shadow": "symlink",
            p + "sparse": "over the size cap (2g; 268435445 of 256m left)",
            p + "up": "symlink",
        })
        self.assertEqual((state["files"], state["skipped_unnamed"], state["error"]), (3, 0, None))
        self.assertEqual(sorted(tree(self.kept / session)), [
            ".codex", ".codex/sessions", ".codex/sessions/...", ".codex/sessions/..;", ".codex/sessions/2026",
            ".codex/sessions/2026/rollout.jsonl"])
        self.assertEqual((self.kept / session / p / "2026/rollout.jsonl").read_text(), '{"turn":1}\n')
        self.assertOnlyTree(session)  # the setuid+exec bits were dropped: 0644
        self.assertEqual(os.listdir(outside), [])
        self.assertEqual(pathlib.Path("/etc/shadow").stat().st_mtime_ns, shadow_before.st_mtime_ns)
        self.assertFalse((self.seat.dir / "run" / session).exists())
        self.assertNoContainer(session)


class Endings(StateSeat):
    WRITE = "mkdir -p ~/.codex/sessions && echo before-the-end > ~/.codex/sessions/r.jsonl && echo ready && "

    def test_a_timeout_still_brings_back_what_was_there(self):
        session = "state-timeout-%d" % os.getpid()
        proc, record = self.seat.status(
            "--id", session, "--runtime", "codex", "--credential", str(self.codex_credential("timeout")),
            "--state-dir", str(self.kept), "--timeout", "3s", "--", "bash", "-c", self.WRITE + "sleep 300",
            timeout=RUN_TIMEOUT)
        self.assertEqual((record["outcome"], record["cause"]), ("killed", "timeout"))
        self.assertEqual(record["state"]["files"], 1)
        self.assertEqual((self.kept / session / ".codex/sessions/r.jsonl").read_text(), "before-the-end\n")
        self.assertNoContainer(session)

    def test_sigterm_still_brings_back_what_was_there(self):
        session = "state-sigterm-%d" % os.getpid()
        status = self.seat.dir / "status-term.json"
        caller = subprocess.Popen(
            [str(LAUNCHER), "--id", session, "--runtime", "codex", "--credential", str(self.codex_credential("term")),
             "--state-dir", str(self.kept), "--status-file", str(status), "--", "bash", "-c",
             self.WRITE + "trap 'exit 0' TERM; sleep 300 & wait"],
            env=self.seat.env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(caller.stderr.close)
        self.addCleanup(caller.stdout.close)
        self.assertEqual(caller.stdout.readline(), b"ready\n")
        caller.send_signal(signal.SIGTERM)
        self.assertEqual(caller.wait(timeout=60), 128 + signal.SIGTERM)
        record = json.loads(status.read_text())
        self.assertEqual((record["outcome"], record["cause"], record["signal"]), ("killed", "signal", signal.SIGTERM))
        self.assertEqual(record["state"]["files"], 1)
        self.assertEqual((self.kept / session / ".codex/sessions/r.jsonl").read_text(), "before-the-end\n")
        self.assertNoContainer(session)


class Refusals(SeatTest):
    def test_state_dir_without_a_runtime_is_a_usage_error(self):
        kept = self.seat.dir / "kept"
        proc, record = self.seat.status("--id", "state-noruntime", "--state-dir", str(kept), "--", "true")
        self.assertLauncherError(proc, record, "usage",
                                 "--state-dir needs --runtime NAME (the runtime's row declares which state to keep)")
        self.assertNoContainer("state-noruntime")
        self.assertFalse(kept.exists())

    def test_an_existing_dir_id_is_refused_before_anything_runs(self):
        kept = self.seat.dir / "kept"
        (kept / "state-exists").mkdir(parents=True)
        cred = self.seat.dir / "auth.json"
        cred.write_text("{}")
        proc, record = self.seat.status("--id", "state-exists", "--runtime", "codex", "--credential", str(cred),
                                        "--state-dir", str(kept), "--", "true")
        self.assertLauncherError(proc, record, "usage", "--state-dir: '%s/state-exists' already exists" % kept)
        self.assertNoContainer("state-exists")
        self.assertEqual(os.listdir(kept / "state-exists"), [])

    def test_a_row_whose_state_holds_its_credential_is_a_config_error(self):
        table = self.seat.dir / "credtable.toml"
        table.write_text('[[runtime]]\nname = "codex"\nsource = "~/.codex/auth.json"\n'
                         'destination = ".codex/auth.json"\nstate = [".codex"]\n')
        self.seat.write(self.seat.config_file.read_text() + 'credtable = "%s"\n' % table)
        proc, record = self.seat.status("--id", "state-badrow", "--runtime", "codex", "--", "true")
        self.assertLauncherError(proc, record, "config",
                                 "%s:5: runtime 'codex': state path '.codex' contains the credential file "
                                 "'.codex/auth.json'" % table)
        self.assertNoContainer("state-badrow")


def on_seat(command, check=True, input=None):
    return subprocess.run([str(SSH), SEAT, command], capture_output=True, text=True, timeout=60, check=check,
                          input=input)


class Dispatched(unittest.TestCase):
    """A real codex on the seat. The seat's sshd forwards no ports to it and neither the seat nor
    the image has python, so the mock for this test is tests/integration/remote/codex_mock.pl (the
    same two turns as tests/mock_model/server.py), started by the session's own command in the
    workspace next to codex, on the container's loopback (network none)."""

    PORT = 18080

    def setUp(self):
        if os.geteuid() != 0 or not LAUNCHER.exists() or not REGISTRY.exists():
            unavailable(self, "seat %s not up (%s; scripts/test-prep.d/40-remote-seats.sh)" % (SEAT, REGISTRY))
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="asbx-state-remote-"))
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)
        self.env = dict(os.environ, XDG_CONFIG_HOME=str(self.dir / "config"), XDG_STATE_HOME=str(self.dir / "state"))
        self.kept = self.dir / "kept"
        self.tag = "st%d" % os.getpid()

    def seat_workspace(self):
        """A workspace on the seat holding the perl mock; returns its path there."""
        ws = "/home/seat/sandbox/workspaces/" + self.tag
        on_seat("mkdir -p %s && cat > %s/codex_mock.pl" % (ws, ws), input=MOCK.read_text())
        self.addCleanup(on_seat, "rm -rf " + ws, check=False)
        return ws

    def seat_credential(self):
        path = "/home/seat/%s-auth.json" % self.tag
        on_seat("umask 077; echo '{\"auth_mode\":\"apikey\",\"OPENAI_API_KEY\":\"sk-mock-remote\"}' > " + path)
        self.addCleanup(on_seat, "rm -f " + path, check=False)
        return path

    def test_a_dispatched_codex_rollout_comes_back_over_the_same_connection(self):
        session = "state-remote-" + self.tag
        workspace = self.seat_workspace()

        class Mock:
            base_url = "http://127.0.0.1:%d" % self.PORT
        codex = codex_argv(Mock, "Write the note.")
        codex.insert(2, "--skip-git-repo-check")
        script = "perl codex_mock.pl %d 'echo kept > note.txt' 'Remote rollout kept.' 2>/dev/null & sleep 0.5; exec \"$@\"" % self.PORT
        status = self.dir / "status.json"
        proc = subprocess.run(
            [str(LAUNCHER), "--registry", str(REGISTRY), "--host", SEAT, "--status-file", str(status), "--id", session,
             "--runtime", "codex", "--credential", self.seat_credential(), "--workspace", workspace, "--state-dir",
             str(self.kept), "--timeout", "120s", "--", "bash", "-c", script, "mock", *codex],
            capture_output=True, timeout=RUN_TIMEOUT, env=self.env)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        self.assertEqual(proc.stdout, b"Remote rollout kept.\n")
        record = json.loads(status.read_text())
        rollouts = sorted((self.kept / session / ".codex/sessions").glob("*/*/*/rollout-*.jsonl"))
        self.assertEqual(len(rollouts), 1, tree(self.kept))
        self.assertIn("Remote rollout kept.", rollouts[0].read_text())
        state = record["state"]
        self.assertEqual(record["seat"], SEAT)
        self.assertEqual(state["dir"], str(self.kept / session))
        self.assertEqual((state["files"], state["bytes"]), (1, rollouts[0].stat().st_size))
        self.assertEqual((state["skipped"], state["error"]), ([], None))
        for path, (kind, mode) in tree(self.kept / session).items():
            self.assertIn((kind, mode), (("dir", 0o755), ("file", 0o644)), path)
        ledger = json.loads((self.dir / "state/agent-sandbox/ledger.jsonl").read_text().splitlines()[-1])
        self.assertEqual(ledger["state"], state)
        left = on_seat("ls -A ~/.local/state/agent-sandbox/state-export/", check=False).stdout.split()
        self.assertNotIn(session, left, "the seat kept its copy after the export")
        listing = subprocess.run(["find", str(self.kept / session), "-printf", "%M %s %P\n"], capture_output=True,
                                 text=True).stdout
        print("\ndispatched codex state listing:\n%s\nrecord:\n%s" % (listing, json.dumps(record, indent=2)),
              file=sys.stderr)

    def test_a_dispatched_hostile_tree_is_skipped_and_named(self):
        session = "state-remote-hostile-" + self.tag
        status = self.dir / "status.json"
        script = ("cd ~/.codex && mkdir -p sessions/d && cd sessions && echo ok > d/r.jsonl && ln -s /etc/shadow shadow "
                  "&& mkfifo fifo && cp ../auth.json notes.txt && ln ../auth.json hl")
        proc = subprocess.run(
            [str(LAUNCHER), "--registry", str(REGISTRY), "--host", SEAT, "--status-file", str(status), "--id", session,
             "--runtime", "codex", "--credential", self.seat_credential(), "--state-dir", str(self.kept), "--",
             "bash", "-c", script], capture_output=True, timeout=RUN_TIMEOUT, env=self.env)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        state = json.loads(status.read_text())["state"]
        self.assertEqual({s["path"]: s["reason"] for s in state["skipped"]}, {
            ".codex/sessions/fifo": "fifo", ".codex/sessions/hl": "hardlink (2 links)",
            ".codex/sessions/notes.txt": "a copy of a staged credential", ".codex/sessions/shadow": "symlink"})
        self.assertEqual(sorted(tree(self.kept / session)),
                         [".codex", ".codex/sessions", ".codex/sessions/d", ".codex/sessions/d/r.jsonl"])
        self.assertEqual(sorted(os.listdir(self.kept)), [session])

    def test_a_caller_stopped_by_sigterm_still_brings_back_what_was_there(self):
        """The caller closes the session's channel; the seat ends the session and keeps its state;
        the caller waits for it (state-export --wait) on the same connection."""
        session = "state-remote-term-" + self.tag
        status = self.dir / "status.json"
        caller = subprocess.Popen(
            [str(LAUNCHER), "--registry", str(REGISTRY), "--host", SEAT, "--status-file", str(status), "--id", session,
             "--runtime", "codex", "--credential", self.seat_credential(), "--state-dir", str(self.kept), "--",
             "bash", "-c", Endings.WRITE + "sleep 300"],
            env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.addCleanup(caller.stdout.close)
        self.addCleanup(caller.stdin.close)
        self.assertEqual(caller.stdout.readline(), b"ready\n")
        caller.send_signal(signal.SIGTERM)
        self.assertEqual(caller.wait(timeout=90), 128 + signal.SIGTERM)
        record = json.loads(status.read_text())
        self.assertEqual((record["outcome"], record["cause"]), ("killed", "signal"))
        self.assertEqual((record["state"]["files"], record["state"]["error"]), (1, None))
        self.assertEqual((self.kept / session / ".codex/sessions/r.jsonl").read_text(), "before-the-end\n")


if __name__ == "__main__":
    unittest.main()
