"""The caller library's own tests: pure logic (argv, record -> result or exception, the generated
table), plus its contract checks against a stand-in that breaks the contract on purpose, which
the real launcher cannot be made to do. The real launcher, local and dispatched:
tests/integration/test_callers.py, test_buildbox.py, test_dispatched_capture.py.

    PYTHONPATH=build/python python3 -m unittest discover -s python/tests   (ctest: python_unit)
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

import agent_sandbox as asb
from agent_sandbox import buildbox

BUILD = pathlib.Path(os.environ.get("ASBX_BUILD", pathlib.Path(__file__).resolve().parents[2] / "build"))


class Table(unittest.TestCase):
    def test_the_table_is_the_launchers(self):
        rows = json.loads(subprocess.run([str(BUILD / "agent-sandbox"), "exit-codes", "--json"], capture_output=True,
                                         check=True).stdout)
        self.assertEqual(asb.EXIT_CODES, {r["name"]: r["code"] for r in rows})
        self.assertEqual(asb.MEANINGS, {r["name"]: r["meaning"] for r in rows})
        self.assertEqual(list(asb.EXIT_CODES), [r["name"] for r in rows])

    def test_one_distinct_exception_per_kind_exported_by_name(self):
        self.assertEqual(set(asb.ERRORS), set(asb.EXIT_CODES))
        self.assertEqual(len(set(asb.ERRORS.values())), len(asb.EXIT_CODES))
        for kind, cls in asb.ERRORS.items():
            self.assertTrue(issubclass(cls, asb.LauncherError))
            self.assertEqual(cls.kind, kind)
            self.assertIs(getattr(asb, cls.__name__), cls)
        names = {k: asb.ERRORS[k].__name__ for k in ("usage", "image_missing", "ssh_failed", "no_seat")}
        self.assertEqual(names, {"usage": "UsageError", "image_missing": "ImageMissing", "ssh_failed": "SshFailed",
                                 "no_seat": "NoSeat"})

    def test_version_is_the_launchers(self):
        out = subprocess.run([str(BUILD / "agent-sandbox"), "--version"], capture_output=True, text=True).stdout
        self.assertEqual(out, f"agent-sandbox {asb.__version__}\n")


class CaptureArgv(unittest.TestCase):
    def test_local(self):
        self.assertEqual(asb.capture_argv(["codex", "exec", "hi"], "/l/j.log", "/l/j.json", session_id="j"),
                         ["agent-sandbox", "--capture-log", "/l/j.log", "--status-file", "/l/j.json", "--id", "j",
                          "--", "codex", "exec", "hi"])

    def test_dispatched_with_every_keyword(self):
        argv = asb.capture_argv(["codex", "exec", "--", "-x"], "L", "S", session_id="job-7", registry="/r.toml",
                                host="seat-a", runtime="codex", account="work", credential="/c.json",
                                workspace="/ws", git_mirror="/ws.git", network="slirp4netns",
                                egress=["default", "api.example:443"], state_dir="/kept", timeout="30m",
                                image="localhost/x:1", options=["--memory", "4g"], launcher="/usr/bin/agent-sandbox")
        self.assertEqual(argv, [
            "/usr/bin/agent-sandbox", "--capture-log", "L", "--status-file", "S", "--registry", "/r.toml",
            "--host", "seat-a", "--id", "job-7", "--image", "localhost/x:1", "--runtime", "codex",
            "--account", "work", "--credential", "/c.json", "--workspace", "/ws", "--git-mirror", "/ws.git",
            "--network", "slirp4netns", "--state-dir", "/kept", "--timeout", "30m", "--egress", "default",
            "--egress", "api.example:443", "--memory", "4g", "--", "codex", "exec", "--", "-x"])

    def test_timeout_in_seconds(self):
        for given, flag in ((90, "90s"), (2.5, "2500ms"), ("1h", "1h")):
            with self.subTest(given=given):
                argv = asb.capture_argv(["true"], "L", "S", timeout=given)
                self.assertEqual(argv[argv.index("--timeout") + 1], flag)
        for bad in (0, -1, True, [30]):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                asb.capture_argv(["true"], "L", "S", timeout=bad)

    def test_a_string_where_a_list_belongs_is_refused(self):
        for kw in ({"egress": "default"}, {"options": "--memory 4g"}):
            with self.subTest(kw=kw), self.assertRaises(TypeError):
                asb.capture_argv(["true"], "L", "S", **kw)
        with self.assertRaises(TypeError):
            asb.capture_argv("codex exec hi", "L", "S")
        with self.assertRaises(ValueError):
            asb.capture_argv([], "L", "S")


def record(**kw):
    base = {"outcome": "exited", "exit_code": 0, "agent_exit_code": 0, "error_kind": None, "message": None,
            "capture_log": "L"}
    base.update(kw)
    return base


class Classify(unittest.TestCase):
    def test_the_agents_result_any_code(self):
        for code in (0, 1, 205, 255):
            run = asb.capture.classify(code, record(exit_code=code, agent_exit_code=code), "L", "")
            self.assertEqual((run.exit_code, run.outcome, run.log_path, run.seat), (code, "exited", "L", None))
        run = asb.capture.classify(3, record(exit_code=3, seat="seat-a"), "L", "")
        self.assertEqual(run.seat, "seat-a")

    def test_a_launcher_error_raises_its_kind_with_the_record(self):
        r = record(outcome="launcher_error", exit_code=204, agent_exit_code=None, error_kind="image_missing",
                   message="image 'x' is not present on the seat")
        with self.assertRaises(asb.ImageMissing) as raised:
            asb.capture.classify(204, r, "L", "stderr")
        e = raised.exception
        self.assertEqual((e.kind, e.error_kind, e.exit_code, e.record, e.log_path), ("image_missing", "image_missing",
                                                                                    204, r, "L"))
        self.assertEqual(str(e), "image_missing (204): image 'x' is not present on the seat")

    def test_a_kind_this_library_does_not_know_is_still_named(self):
        with self.assertRaises(asb.LauncherError) as raised:
            asb.capture.classify(231, record(outcome="launcher_error", exit_code=231, error_kind="from_the_future",
                                             message="m"), "L", "")
        self.assertEqual((type(raised.exception), raised.exception.kind), (asb.LauncherError, "from_the_future"))

    def test_no_record(self):
        with self.assertRaises(asb.SshFailed) as raised:
            asb.capture.classify(220, None, "L", "agent-sandbox: rd-1: connection dropped")
        self.assertIsNone(raised.exception.record)
        with self.assertRaises(asb.ContractBroken):
            asb.capture.classify(9, None, "L", "")  # killed by SIGKILL: no record, no launcher code

    def test_a_record_that_contradicts_the_exit_code_or_the_log(self):
        for code, r in ((0, record(exit_code=1)), (0, record(outcome=None)), (0, record(capture_log="other.log"))):
            with self.subTest(record=r), self.assertRaises(asb.ContractBroken):
                asb.capture.classify(code, r, "L", "")


class ContractChecks(unittest.TestCase):
    """run_captured() against a stand-in launcher that breaks the contract in one way each."""

    def setUp(self):
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="asbx-pylib-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(self.dir)]))
        self.log, self.status = str(self.dir / "a.log"), str(self.dir / "a.json")

    def fake(self, body):
        path = self.dir / "fake-launcher"
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
        return str(path)

    def write_record(self, **kw):
        return f"cat >{self.status} <<'EOF'\n{json.dumps(record(capture_log=self.log, **kw))}\nEOF\n"

    def test_stdout_other_than_the_path_is_contract_broken(self):
        launcher = self.fake(self.write_record() + "echo agent output leaked")
        with self.assertRaises(asb.ContractBroken) as raised:
            asb.run_captured(["true"], self.log, self.status, launcher=launcher)
        self.assertIn("agent output leaked", raised.exception.message)

    def test_a_stale_record_is_never_read_as_this_runs(self):
        pathlib.Path(self.status).write_text(json.dumps(record(capture_log=self.log)))
        with self.assertRaises(asb.ContractBroken):  # exits 9 (no code of the table) without writing one
            asb.run_captured(["true"], self.log, self.status, launcher=self.fake(f"echo {self.log}; exit 9"))

    def test_the_launchers_stderr_is_kept_bounded(self):
        launcher = self.fake("head -c 5000000 /dev/zero | tr '\\0' e >&2; echo tail-line >&2; exit 203")
        with self.assertRaises(asb.PodmanUnreachable) as raised:
            asb.run_captured(["true"], self.log, self.status, launcher=launcher)
        self.assertLessEqual(len(raised.exception.message), asb.capture.STDERR_KEPT + 100)
        self.assertTrue(raised.exception.message.endswith("tail-line"))

    def test_what_it_runs_is_the_argv_and_stdin_is_dev_null(self):
        launcher = self.fake(f'printf "%s\\n" "$@" >{self.dir}/argv; cat >{self.dir}/stdin; echo {self.log}; '
                             + self.write_record())
        run = asb.run_captured(["codex", "exec", "a b"], self.log, self.status, launcher=launcher, host="seat-a")
        self.assertEqual(run.exit_code, 0)
        self.assertEqual((self.dir / "argv").read_text().splitlines(),
                         ["--capture-log", self.log, "--status-file", self.status, "--host", "seat-a", "--",
                          "codex", "exec", "a b"])
        self.assertEqual((self.dir / "stdin").read_bytes(), b"")


class GitArgv(unittest.TestCase):
    def test_exactly_the_launchers_git_interface(self):
        self.assertEqual(asb.git_argv("/ws", ["log", "--oneline", "-1"]),
                         ["agent-sandbox", "git", "--workspace", "/ws", "--", "log", "--oneline", "-1"])
        self.assertEqual(asb.git_argv("/ws", ["fetch", "--", "x"], git_mirror="/m.git", launcher="/b/agent-sandbox"),
                         ["/b/agent-sandbox", "git", "--workspace", "/ws", "--git-mirror", "/m.git", "--", "fetch",
                          "--", "x"])
        with self.assertRaises(TypeError):
            asb.git_argv("/ws", "log --oneline")

    def test_git_codes_pass_through_and_launcher_codes_raise(self):
        d = pathlib.Path(tempfile.mkdtemp(prefix="asbx-pygit-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(d)]))
        fake = d / "fake"
        fake.write_text('#!/bin/sh\necho "$@"; echo on-err >&2; exit "$CODE"\n')
        fake.chmod(0o755)
        env = lambda code: dict(os.environ, CODE=str(code))  # noqa: E731
        got = asb.run_git("/ws", ["status"], launcher=str(fake), env=env(1))
        self.assertEqual((got.exit_code, got.stdout, got.stderr), (1, b"git --workspace /ws -- status\n", b"on-err\n"))
        with self.assertRaises(asb.GitFailed) as raised:
            asb.run_git("/ws", ["status"], launcher=str(fake), env=env(128), check=True)
        self.assertEqual((raised.exception.exit_code, raised.exception.git_args), (128, ["status"]))
        with self.assertRaises(asb.WorkspaceRejected) as raised:
            asb.run_git("/ws", ["status"], launcher=str(fake), env=env(asb.EXIT_CODES["workspace_rejected"]))
        self.assertEqual(raised.exception.message, "on-err")


class Buildbox(unittest.TestCase):
    def test_session_id_for(self):
        self.assertEqual(buildbox.session_id_for("/src/My Repo!"), "buildbox-My-Repo")
        self.assertEqual(buildbox.session_id_for("/src/..."), "buildbox-repo")
        self.assertEqual(len(buildbox.session_id_for("/x/" + "a" * 100)), 60)

    def test_module_command_line_usage(self):
        out = subprocess.run([sys.executable, "-m", "agent_sandbox"], capture_output=True, text=True)
        self.assertEqual((out.returncode, out.stderr.split(":")[0]), (2, "usage"))


if __name__ == "__main__":
    unittest.main()
