"""The buildbox harness caller (agent_sandbox.run_tests, docs/PYTHON.md) against the real launcher and podman:
a repository's test command runs in a session and the harness hands back its exit code, its output
log and the status record; a launcher failure raises and nothing runs on the host."""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

from harness import BUILD, CODES, LAUNCHER, SeatTest

sys.path.insert(0, str(BUILD / "python"))  # the caller library as built
import agent_sandbox as caller  # noqa: E402
from agent_sandbox import buildbox  # noqa: E402

AGENT_UID = 1000  # a root caller's agent runs as 1000:1000 (docs/MOUNTS.md)

TEST_SCRIPT = """#!/bin/sh
echo "running 2 tests in $(pwd)"
echo "test_b: FAILED (expected 4, got 5)" >&2
echo ran >results.txt
[ -e fix-applied ] && { echo "2 passed"; exit 0; }
echo "1 passed, 1 failed"; exit 3
"""


# A real project's test suite (the image's toolchains, docs/IMAGE.md): a Python package tested by
# pytest and a node module by `node --test`, driven by make. One assertion is wrong until fixed.
PROJECT = {
    "Makefile": "test:\n\tnode --test js/\n\tpython3 -B -m pytest -q -p no:cacheprovider tests\n",
    "calc/__init__.py": "def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b + BUG\n",
    "tests/test_calc.py": "import sys, os\nsys.path.insert(0, os.getcwd())\nfrom calc import add, mul\n\n"
                          "def test_add():\n    assert add(2, 2) == 4\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    "js/sum.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                      "test('sum', () => assert.strictEqual([1, 2, 3].reduce((a, b) => a + b), 6));\n",
}


def project_files(fixed):
    return {name: text.replace(" + BUG", "" if fixed else " + 1") for name, text in PROJECT.items()}


def write_project(repo, fixed):
    for name, text in project_files(fixed).items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)


class BuildboxHarnessTest(SeatTest):
    def repo(self, name="repo-7"):
        repo = self.seat.workspaces / name
        repo.mkdir()
        (repo / "run-tests").write_text(TEST_SCRIPT)
        (repo / "run-tests").chmod(0o755)
        for p in (repo, repo / "run-tests"):
            os.chown(p, AGENT_UID, AGENT_UID)
        return repo

    def run_tests(self, repo, command="./run-tests", **kw):
        return buildbox.run_tests(repo, command, self.seat.dir / "out", launcher=str(LAUNCHER),
                                  env=self.seat.env(), **kw)

    def test_failing_tests_hand_back_their_code_log_and_record(self):
        repo = self.repo()
        result = self.run_tests(repo)
        self.assertEqual((result.exit_code, result.passed), (3, False))
        log = pathlib.Path(result.log_path).read_text()
        self.assertIn(f"running 2 tests in /sandbox/workspaces/{repo.name}\n", log)
        self.assertIn("test_b: FAILED (expected 4, got 5)\n", log)
        self.assertIn("1 passed, 1 failed\n", log)
        self.assertEqual(result.record, json.loads(pathlib.Path(result.status_path).read_text()))
        self.assertEqual((result.record["outcome"], result.record["agent_exit_code"], result.record["id"]),
                         ("exited", 3, "buildbox-repo-7"))
        self.assertIsNone(result.record["error_kind"])
        self.assertEqual((repo / "results.txt").read_text(), "ran\n", "the workspace is the working dir, writable")
        self.assertNoContainer("buildbox-repo-7")

    def test_passing_tests(self):
        repo = self.repo("repo-ok")
        (repo / "fix-applied").touch()
        result = self.run_tests(repo, session_id="bb-pass")
        self.assertEqual((result.exit_code, result.passed), (0, True))
        self.assertIn("2 passed\n", pathlib.Path(result.log_path).read_text())  # streams interleave freely
        self.assertNoContainer("bb-pass")

    def test_a_real_projects_suite_runs_in_the_image_and_its_code_passes_through(self):
        repo = self.seat.workspaces / "calc"
        repo.mkdir()
        write_project(repo, fixed=False)
        for p in [repo, *repo.rglob("*")]:
            os.chown(p, AGENT_UID, AGENT_UID)
        result = self.run_tests(repo, "make -s test", session_id="bb-calc")
        log = pathlib.Path(result.log_path).read_text()
        self.assertEqual((result.exit_code, result.passed), (2, False), log)  # make: a recipe failed
        self.assertIn("# pass 1", log)  # node --test ran first and passed
        self.assertIn("1 failed, 1 passed", log)  # pytest's summary
        self.assertEqual(result.record["agent_exit_code"], 2)
        write_project(repo, fixed=True)
        result = self.run_tests(repo, "make -s test", session_id="bb-calc-fixed")
        log = pathlib.Path(result.log_path).read_text()
        self.assertEqual((result.exit_code, result.passed), (0, True), log)
        self.assertIn("2 passed", log)
        self.assertNoContainer("bb-calc-fixed")

    def test_a_repository_outside_the_workspace_root_raises_and_runs_nothing(self):
        outside = self.seat.dir / "elsewhere"
        outside.mkdir()
        (outside / "run-tests").write_text("#!/bin/sh\ntouch ran-on-host\n")
        (outside / "run-tests").chmod(0o755)
        with self.assertRaises(caller.WorkspaceRejected) as raised:
            self.run_tests(outside, session_id="bb-outside")
        self.assertEqual(raised.exception.exit_code, CODES["workspace_rejected"])
        self.assertFalse((outside / "ran-on-host").exists())
        self.assertNoContainer("bb-outside")

    def test_command_line_prints_the_result(self):
        repo = self.repo("repo-cli")
        proc = subprocess.run([sys.executable, "-m", "agent_sandbox", "buildbox", str(repo),
                               str(self.seat.dir / "cli"), "--", "./run-tests"], capture_output=True, text=True,
                              timeout=180, env=self.seat.env(AGENT_SANDBOX=str(LAUNCHER),
                                                             PYTHONPATH=str(BUILD / "python")))
        self.assertEqual(proc.returncode, 3, proc.stderr)
        out = json.loads(proc.stdout)
        self.assertEqual((out["exit_code"], out["passed"], out["record"]["outcome"]), (3, False, "exited"))
        self.assertEqual(out["log_path"], str(self.seat.dir / "cli" / "buildbox-repo-cli.log"))


# Dispatched: the same project through a registry to a seat host, in the image the seat loaded.
from test_dispatched_capture import R2, REGISTRY, SSH, DispatchedCaptureTest  # noqa: E402


class BuildboxOnASeat(DispatchedCaptureTest):
    def test_a_real_projects_suite_on_a_seat_passes_its_code_through(self):
        """pytest + node --test under make (test_buildbox.PROJECT) in the seat's image."""
        ws = self.seat_workspace(R2, "bb-calc")
        for fixed in (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                for name, text in project_files(fixed).items():
                    (pathlib.Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
                    (pathlib.Path(tmp) / name).write_text(text)
                tar = subprocess.run(["tar", "-C", tmp, "-cf", "-", "."], capture_output=True, check=True).stdout
            subprocess.run([str(SSH), R2, f"tar -C {ws} -xf -"], input=tar, check=True, timeout=60)
            sid = self.sid("bb-calc-fixed" if fixed else "bb-calc")
            result = buildbox.run_tests(ws, "make -s test", str(self.dir / "out"), session_id=sid,
                                   registry=str(REGISTRY), host=R2, launcher=str(LAUNCHER), env=self.env)
            log = pathlib.Path(result.log_path).read_text()
            self.assertEqual((result.exit_code, result.passed), (0, True) if fixed else (2, False), log)
            self.assertIn("2 passed" if fixed else "1 failed, 1 passed", log)
            self.assertEqual((result.record["seat"], result.record["agent_exit_code"]), (R2, result.exit_code))
