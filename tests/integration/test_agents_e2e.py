"""The real codex and claude CLIs, run through the launcher, editing and committing in a real
linked git worktree, against the mock model server reached over loopback in a network
namespace this test creates (docs/AGENTS.md)."""
import json
import os
import pathlib
import re
import subprocess
import sys
import time

from harness import ROOT, SeatTest, unavailable

sys.path.insert(0, str(ROOT / "tests" / "mock_model"))
from netns_mock import MockInNetns  # noqa: E402

AGENT_UID = 1000  # rootful, caller root: the agent runs as 1000:1000
CLI_VERSIONS = dict(re.findall(r'^(CODEX|CLAUDE)_VERSION=([0-9.]+)', (ROOT / "scripts" / "agent-clis.sh").read_text(), re.M))
CODEX_BYPASS = "--dangerously-bypass-approvals-and-sandbox"
CLAUDE_BYPASS = "--dangerously-skip-permissions"
RUN_TIMEOUT = 150  # seconds; codex retries forever when its endpoint is unreachable


def git(*args, cwd):
    return subprocess.run(["git", "-c", "safe.directory=*", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout


def codex_argv(mock, prompt):
    """codex exec with the mock as a custom provider, all on the command line (no secret in it:
    the key comes from the staged auth.json through requires_openai_auth)."""
    provider = ('{name="Mock",base_url="%s/v1",wire_api="responses",requires_openai_auth=true,'
                'request_max_retries=0,stream_max_retries=0}' % mock.base_url)
    return ["codex", "exec", "-c", "model=mock-model", "-c", "model_provider=mock",
            "-c", "model_providers.mock=" + provider, "-c", "analytics.enabled=false",
            "-c", "features.plugins=false", CODEX_BYPASS, prompt]


def claude_argv(prompt):
    return ["claude", "-p", prompt, CLAUDE_BYPASS]


class AgentSeat(SeatTest):
    """A seat whose git root holds a repository with a linked worktree as the workspace."""

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            unavailable(self, "network namespaces for the mock need root")
        self.git_root = self.seat.dir / "git-common"
        self.git_root.mkdir()
        self.seat.write(self.seat.config_file.read_text() + f'git_roots = ["{self.git_root}"]\n')
        self.credentials = self.seat.dir / "creds"
        self.credentials.mkdir(mode=0o700)

    def netns(self, tag, command, final="Done."):
        name = "agents-%s-%d-%d" % (tag, os.getpid(), int(time.time() * 1000) % 100000)
        mock = MockInNetns(name, command=command, final=final)
        mock.__enter__()
        self.addCleanup(mock.__exit__, None, None, None)
        return mock

    def linked_worktree(self, name):
        """repo (common dir under the git root) + worktree (under the workspace root), owned by the agent."""
        repo = self.git_root / (name + "-repo")
        git("init", "-q", "-b", "main", str(repo), cwd=self.seat.dir)
        (repo / "README").write_text("seed\n")
        git("add", "README", cwd=repo)
        git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "seed", cwd=repo)
        worktree = self.seat.workspaces / name
        git("worktree", "add", "-q", "-b", name, str(worktree), cwd=repo)
        for path in (repo, worktree):
            subprocess.run(["chown", "-R", "%d:%d" % (AGENT_UID, AGENT_UID), str(path)], check=True)
        return worktree

    def fake_credential(self, name, content):
        path = self.credentials / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(content, f)
        return path

    def assertCommitted(self, worktree, subject, note, content):
        self.assertEqual(git("log", "-1", "--format=%s", cwd=worktree).strip(), subject)
        self.assertEqual(git("show", "HEAD:" + note, cwd=worktree), content)
        self.assertEqual((worktree / note).read_text(), content)
        self.assertEqual(git("status", "--porcelain", cwd=worktree), "")
        self.assertEqual(git("rev-parse", "--abbrev-ref", "HEAD", cwd=worktree).strip(), worktree.name)

    def assertTwoTurns(self, mock, api):
        turns = [(r["api"], r["turn"]) for r in mock.requests() if r["api"] == api]
        self.assertEqual(turns, [(api, 1), (api, 2)])
        self.assertTrue(all(r["authorization"] or r["x_api_key"] for r in mock.requests() if r["api"] == api),
                        "the staged credential did not reach the model request")

    def assertAgentRecord(self, record, session, runtime, inner, network):
        self.assertEqual(record["id"], session)
        self.assertEqual(record["outcome"], "exited")
        self.assertEqual((record["exit_code"], record["agent_exit_code"]), (0, 0))
        self.assertIsNone(record["error_kind"])
        self.assertEqual(record["runtime"], runtime)
        self.assertEqual(record["inner_sandbox"], inner)
        self.assertEqual(record["network"], network)
        self.assertFalse(record["credential_refreshed_in_container"])
        self.assertTrue(record["container_removed"])
        self.assertTrue(record["limits"]["enforced"])
        print("\nstatus record (%s):\n%s" % (runtime, json.dumps(record, indent=2)), file=sys.stderr)

    def run_agent(self, session, runtime, credential, mock, worktree, argv, env=None):
        proc, record = self.seat.status(
            "--id", session, "--runtime", runtime, "--credential", str(credential), "--network", mock.network,
            "--workspace", str(worktree), "--git-mirror", str(self.git_root / (worktree.name + "-repo") / ".git"),
            "--timeout", "%ds" % (RUN_TIMEOUT - 30), "--", *argv,
            timeout=RUN_TIMEOUT, env=env)
        self.assertNoContainer(session)
        return proc, record


def claude_oauth():
    return {"claudeAiOauth": {"accessToken": "sk-ant-oat01-mock-agents-e2e", "refreshToken": "sk-ant-ort01-mock",
                              "expiresAt": int(time.time() * 1000) + 365 * 86400 * 1000,
                              "scopes": ["user:inference", "user:profile"], "subscriptionType": "max"}}


# One row per CLI: its fake credential, how it is told where the mock is, the API it speaks, and
# the argv form that turns its own sandbox off.
E2E_ROWS = [
    dict(runtime="codex", credential="codex-auth.json",
         content=lambda: {"auth_mode": "apikey", "OPENAI_API_KEY": "sk-mock-agents-e2e"},
         env=lambda mock: {}, argv=codex_argv, api="responses", bypass=CODEX_BYPASS),
    dict(runtime="claude", credential="claude-credentials.json", content=claude_oauth,
         env=lambda mock: dict(ANTHROPIC_BASE_URL=mock.base_url, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                               DISABLE_AUTOUPDATER="1"),
         argv=lambda mock, prompt: claude_argv(prompt), api="messages", bypass=CLAUDE_BYPASS),
]


class EndToEnd(AgentSeat):
    def test_each_cli_edits_and_commits_in_the_linked_worktree(self):
        for row in E2E_ROWS:
            with self.subTest(runtime=row["runtime"]):
                self.edit_and_commit(row)

    def edit_and_commit(self, row):
        name = row["runtime"]
        session = "agents-e2e-%s-%d" % (name, os.getpid())
        worktree = self.linked_worktree("wt-" + name)
        credential = self.fake_credential(row["credential"], row["content"]())
        before = credential.read_bytes()
        mock = self.netns(name, "echo hello-from-%s > note.txt && git add note.txt && "
                          "git -c user.email=agent@sandbox -c user.name=agent commit -q -m 'note from %s'" % (name, name),
                          final="Committed note.txt.")
        env = self.seat.env(**row["env"](mock))
        proc, record = self.run_agent(session, name, credential, mock, worktree,
                                      row["argv"](mock, "Add note.txt and commit it."), env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        self.assertEqual(proc.stdout, b"Committed note.txt.\n")
        self.assertCommitted(worktree, "note from " + name, "note.txt", "hello-from-%s\n" % name)
        self.assertTwoTurns(mock, row["api"])
        self.assertAgentRecord(record, session, name, "off: " + row["bypass"], mock.network)
        self.assertEqual(credential.read_bytes(), before)


class NoEditIsAFailure(AgentSeat):
    def test_a_failing_tool_command_leaves_no_commit_though_codex_exits_0(self):
        """What the e2e assertions guard against: codex reports success when nothing happened."""
        worktree = self.linked_worktree("wt-noedit")
        head = git("rev-parse", "HEAD", cwd=worktree)
        auth = self.fake_credential("codex-auth.json", {"auth_mode": "apikey", "OPENAI_API_KEY": "sk-mock-noedit"})
        mock = self.netns("noedit", "exit 3", final="Nothing done.")
        proc, record = self.run_agent("agents-e2e-noedit-%d" % os.getpid(), "codex", auth, mock, worktree,
                                      codex_argv(mock, "Try."))
        self.assertEqual((proc.returncode, record["agent_exit_code"]), (0, 0))
        self.assertEqual(git("rev-parse", "HEAD", cwd=worktree), head)
        self.assertFalse((worktree / "note.txt").exists())


class CliVersions(SeatTest):
    def test_codex_and_claude_answer_through_the_launcher(self):
        for argv, expected in ((["codex", "--version"], "codex-cli %s\n" % CLI_VERSIONS["CODEX"]),
                               (["claude", "--version"], "%s (Claude Code)\n" % CLI_VERSIONS["CLAUDE"])):
            with self.subTest(argv=argv):
                proc, record = self.seat.status("--", *argv)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertEqual(proc.stdout.decode(), expected)
                self.assertEqual(record["outcome"], "exited")


class InnerSandboxRule(AgentSeat):
    def test_codex_without_the_bypass_flag_is_refused_before_anything_exists(self):
        auth = self.fake_credential("codex-auth.json", {"auth_mode": "apikey", "OPENAI_API_KEY": "sk-mock-refused"})
        proc, record = self.seat.status("--id", "agents-inner-refused", "--runtime", "codex", "--credential", str(auth),
                                        "--", "codex", "exec", "-s", "workspace-write", "hi")
        self.assertLauncherError(
            proc, record, "usage",
            "--runtime codex: codex's own sandbox (bwrap) cannot map uids inside the container and codex then exits 0 "
            "having done nothing; the container is the sandbox: add '--dangerously-bypass-approvals-and-sandbox' or "
            "'--sandbox danger-full-access' or '-s danger-full-access' to the command")
        self.assertNoContainer("agents-inner-refused")
        self.assertFalse((self.seat.dir / "run" / "agents-inner-refused").exists())


class NetworkNamespace(AgentSeat):
    def test_the_namespace_reaches_the_mock_and_nothing_else(self):
        mock = self.netns("net", "true")
        probe = ("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ,; echo; "  # /sys: the seat's, masked, in a user namespace
                 "exec 3<>/dev/tcp/127.0.0.1/%d && printf 'GET /v1/models HTTP/1.0\\r\\n\\r\\n' >&3 && head -1 <&3; "
                 "for addr in 10.0.2.2 1.1.1.1 169.254.169.254; do "
                 "(exec 4<>/dev/tcp/$addr/80) 2>/dev/null && echo reached-$addr || echo blocked-$addr; done" % mock.port)
        proc, record = self.seat.status("--id", "agents-netns", "--network", mock.network, "--", "bash", "-c", probe)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode().replace("\r", ""),
                         "lo,\nHTTP/1.1 200 OK\nblocked-10.0.2.2\nblocked-1.1.1.1\nblocked-169.254.169.254\n")
        self.assertEqual(record["network"], mock.network)
        self.assertNoContainer("agents-netns")

    def test_host_network_is_refused(self):
        proc, record = self.seat.status("--id", "agents-nethost", "--network", "host", "--", "true")
        self.assertLauncherError(proc, record, "usage",
                                 "--network: 'host' is refused: it would give the agent the seat's own network stack; "
                                 "use none, ns:/run/netns/NAME, container:NAME or slirp4netns")
        self.assertNoContainer("agents-nethost")

    def test_a_missing_namespace_fails_to_create(self):
        proc, record = self.seat.status("--id", "agents-netmissing", "--network", "ns:/run/netns/agents-absent-ns",
                                        "--", "true")
        self.assertLauncherError(proc, record, "create_failed",
                                 "podman refused to create the container (500): cannot find specified network "
                                 "namespace path: stat /run/netns/agents-absent-ns: no such file or directory")
        self.assertNoContainer("agents-netmissing")


if __name__ == "__main__":
    import unittest
    unittest.main()
