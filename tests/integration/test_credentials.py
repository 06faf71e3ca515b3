"""Credentials: staged from the seat, copied into the ephemeral HOME, never leaked, host file untouched."""
import json
import os
import pwd
import shutil
import subprocess
import threading
import time
import tomllib
import unittest

from harness import CODES, LAUNCHER, LOCAL_ROOTLESS_SEAT, ROOT, Seat, SeatTest, podman, readable_copies, session_containers, session_entries, sha256, unavailable, removals_done
from test_rootless import USER, rootless_socket

MARKER = "asbx-credmounts-MARKER-7f3c9e"  # the "secret": must appear nowhere outside the copy

# runtime → (file under HOME when XDG_CONFIG_HOME is unset, file under XDG_CONFIG_HOME when set, copy inside)
ROWS = {
    "codex": (".codex/auth.json", None, "/sandbox/home/.codex/auth.json"),
    "claude": (".claude/.credentials.json", None, "/sandbox/home/.claude/.credentials.json"),
    "cursor-agent": (".config/cursor/auth.json", "cursor/auth.json", "/sandbox/home/.config/cursor/auth.json"),
}


class CredentialTest(SeatTest):
    def setUp(self):
        super().setUp()
        self.home = self.seat.dir / "home"
        self.home.mkdir()

    def env(self, **more):
        return self.seat.env(HOME=str(self.home), **more)

    def put(self, path, text=None):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text if text is not None else json.dumps({"refresh_token": MARKER}))
        path.chmod(0o600)  # root-owned 0600: unreadable by uid 1000 inside without staging
        return path

    def run_cred(self, *args, env=None, **kw):
        return self.seat.status(*args, env=env or self.env(), **kw)


class EveryRow(CredentialTest):
    def test_every_row_is_staged_xdg_unset_and_set(self):
        for runtime, (in_home, in_xdg, copy) in ROWS.items():
            for xdg in (False, True):
                with self.subTest(runtime=runtime, xdg=xdg):
                    env = self.env()
                    if xdg and in_xdg:
                        src = self.put(self.seat.config_home / in_xdg, f"{runtime}-xdg")
                    else:
                        src = self.put(self.home / in_home, f"{runtime}-home")
                        if not xdg:  # seat config found through HOME/.config instead
                            cfg = self.home / ".config" / "agent-sandbox" / "seat.toml"
                            cfg.parent.mkdir(parents=True, exist_ok=True)
                            cfg.write_text(self.seat.config_file.read_text())
                            env.pop("XDG_CONFIG_HOME")
                    proc, record = self.run_cred("--runtime", runtime, "--", "bash", "-c",
                                                 f'stat -c "%a %u" {copy}; cat {copy}', env=env)
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                    self.assertEqual(proc.stdout.decode(), f"600 1000\n{src.read_text()}")
                    self.assertEqual(record["runtime"], runtime)
                    self.assertFalse(record["credential_refreshed_in_container"])
                    src.unlink()

    def test_row_env_names_pass_and_the_veto_wins(self):
        self.put(self.home / ".claude/.credentials.json")
        proc, _ = self.run_cred("--runtime", "claude", "--", "env",
                                env=self.env(ANTHROPIC_BASE_URL="http://127.0.0.1:9", ANTHROPIC_API_KEY=MARKER,
                                             OPENAI_BASE_URL="http://x"))
        names = {line.split("=", 1)[0] for line in proc.stdout.decode().splitlines()}
        self.assertIn("ANTHROPIC_BASE_URL", names)
        self.assertNotIn("ANTHROPIC_API_KEY", names)
        self.assertNotIn("OPENAI_BASE_URL", names)  # codex's row, not claude's

    def test_account_selects_its_own_file(self):
        self.put(self.seat.config_home / "agent-sandbox/accounts/work/codex/auth.json", "work-identity")
        proc, _ = self.run_cred("--runtime", "codex", "--account", "work", "--", "cat", ROWS["codex"][2])
        self.assertEqual((proc.returncode, proc.stdout), (0, b"work-identity"), proc.stderr)


class Unresolved(CredentialTest):
    def assertNothingCreated(self, session_id):
        self.assertNoContainer(session_id)
        run = self.seat.dir / "run"
        self.assertEqual(session_entries(run), [])  # a warm pool's own entries may be there

    def test_missing_credential_aborts_before_any_container(self):
        path = self.home / ".codex/auth.json"
        proc, record = self.run_cred("--id", "credmounts-missing", "--runtime", "codex", "--", "true")
        self.assertLauncherError(proc, record, "credential_unresolved",
                                 f"credential for runtime 'codex' does not resolve (No such file or directory): '{path}'")
        self.assertNothingCreated("credmounts-missing")

    def test_unknown_account_and_unreadable_explicit_path(self):
        proc, record = self.run_cred("--id", "credmounts-acct", "--runtime", "claude", "--account", "nobody", "--",
                                     "true")
        path = self.seat.config_home / "agent-sandbox/accounts/nobody/claude/.credentials.json"
        self.assertLauncherError(proc, record, "credential_unresolved",
                                 f"credential for runtime 'claude' does not resolve (No such file or directory): '{path}'")
        proc, record = self.run_cred("--id", "credmounts-dir", "--runtime", "codex", "--credential", str(self.home),
                                     "--", "true")
        self.assertLauncherError(proc, record, "credential_unresolved",
                                 f"credential for runtime 'codex' is not a regular file: '{self.home}'")
        self.assertNothingCreated("credmounts-acct")
        self.assertNothingCreated("credmounts-dir")

    def test_unknown_runtime_is_a_usage_error(self):
        table = ROOT / "credtable" / "credtable.toml"
        self.seat.write(self.seat.config_file.read_text() + f'credtable = "{table}"\n')
        names = ", ".join(row["name"] for row in tomllib.loads(table.read_text())["runtime"])
        proc, record = self.run_cred("--id", "credmounts-gemini", "--runtime", "gemini", "--", "true")
        self.assertLauncherError(proc, record, "usage", f"--runtime: unknown runtime 'gemini' ({table} has: {names})")
        self.assertNothingCreated("credmounts-gemini")


class Hygiene(CredentialTest):
    def test_marker_secret_appears_nowhere(self):
        self.put(self.home / ".codex/auth.json")
        sid = "credmounts-hygiene"
        seen = {}

        def observe():  # while the agent runs: inspect JSON and every host command line
            for _ in range(200):
                if session_containers(sid, settle=0):
                    break
                time.sleep(0.05)
            time.sleep(1)
            seen["inspect"] = podman("inspect", "asbx-" + sid).stdout
            seen["ps"] = subprocess.run(["ps", "-eww", "-o", "args"], capture_output=True, text=True).stdout

        watcher = threading.Thread(target=observe)
        watcher.start()
        inside = ("cat /proc/1/environ /proc/$$/environ | tr '\\0' '\\n'; env; "
                  "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done; sleep 3")
        proc, record = self.run_cred("--id", sid, "--runtime", "codex", "--", "bash", "-c", inside,
                                     env=self.env(OPENAI_API_KEY=MARKER, MY_TOKEN=MARKER))
        watcher.join()
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("asbx-" + sid, seen["inspect"])
        self.assertNotIn("auth.json", seen["inspect"])  # not even the path: the launcher copies it into HOME
        places = {"inspect JSON": seen["inspect"], "host command lines": seen["ps"],
                  "container env and command lines": proc.stdout.decode(), "launcher stderr": proc.stderr.decode(),
                  "status record": json.dumps(record), "ledger": self.seat.ledger.read_text()}
        for where, text in places.items():
            self.assertNotIn(MARKER, text, where)
        self.assertNoContainer(sid)


class Refresh(CredentialTest):
    def test_refresh_inside_leaves_the_host_file_byte_identical(self):
        src = self.put(self.home / ".codex/auth.json")
        before = (sha256(src.read_bytes()), os.stat(src).st_mtime_ns, os.stat(src).st_mode)
        refresh = ("f=$HOME/.codex/auth.json; printf '{\"refresh_token\":\"rotated\"}' > $f.tmp && mv $f.tmp $f; "
                   "cat $f; test -e /sandbox-secrets || echo no-staged-mount")
        proc, record = self.run_cred("--id", "credmounts-refresh", "--runtime", "codex", "--", "bash", "-c", refresh)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b'{"refresh_token":"rotated"}no-staged-mount\n')
        self.assertEqual((sha256(src.read_bytes()), os.stat(src).st_mtime_ns, os.stat(src).st_mode), before)
        self.assertTrue(record["credential_refreshed_in_container"])
        ledger = json.loads(self.seat.ledger.read_text().splitlines()[-1])
        self.assertTrue(ledger["credential_refreshed_in_container"])
        self.assertIn("agent-sandbox: warning: the codex credential was refreshed inside the container; the host "
                      "file is unchanged, but a single-use refresh token rotated inside can invalidate the host's "
                      "login (log in again on the seat if it stops working)", proc.stderr.decode())
        run = self.seat.dir / "run"
        removals_done(run)  # nothing was staged on the seat's disk (the session's seccomp
        # profile is written there before create and removed after: the directory may stay, empty)
        self.assertEqual(session_entries(run), [])

    def test_no_refresh_is_recorded_as_none(self):
        self.put(self.home / ".codex/auth.json")
        proc, record = self.run_cred("--runtime", "codex", "--", "true")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertFalse(record["credential_refreshed_in_container"])
        self.assertNotIn(b"warning", proc.stderr)


class StagingKeepsTheContract(CredentialTest):
    """With a credential staged: exec failures, exit codes and signals stay exact."""

    def setUp(self):
        super().setUp()
        self.put(self.home / ".codex/auth.json")

    def test_command_not_found_and_not_executable(self):
        proc, record = self.run_cred("--id", "credmounts-nf", "--runtime", "codex", "--", "no-such-agent")
        self.assertLauncherError(proc, record, "command_not_found",
                                 "command not found inside the container: 'no-such-agent'")
        proc, record = self.run_cred("--runtime", "codex", "--", "/etc/hostname")
        self.assertLauncherError(proc, record, "command_not_executable",
                                 "command not executable inside the container: '/etc/hostname'")
        self.assertNoContainer("credmounts-nf")

    def test_exit_codes_and_stdin_pass_through(self):
        for code in (0, 3, 126, 127, 255):
            proc, record = self.run_cred("--runtime", "codex", "--", "bash", "-c", f"exit {code}")
            self.assertEqual((proc.returncode, record["agent_exit_code"], record["outcome"]), (code, code, "exited"))
        proc, _ = self.run_cred("--runtime", "codex", "--", "wc", "-c", input=b"x" * 70000)
        self.assertEqual(proc.stdout, b"70000\n")

    def test_a_signal_reaches_the_agent(self):
        path = self.seat.dir / "status-sig.json"
        p = subprocess.Popen([str(LAUNCHER), "--id", "credmounts-sig", "--status-file", str(path), "--runtime",
                              "codex", "--", "bash", "-c", 'trap "echo got-term; exit 7" TERM; echo ready; '
                              "while :; do sleep 0.1; done"], env=self.env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        self.assertEqual(p.stdout.readline(), b"ready\n")
        p.send_signal(15)
        out, _ = p.communicate(timeout=60)
        self.assertEqual(out, b"got-term\n")
        record = json.loads(path.read_text())
        self.assertEqual((p.returncode, record["agent_exit_code"], record["cause"]), (143, 7, "signal"))
        self.assertNoContainer("credmounts-sig")


class Rootless(unittest.TestCase):
    """Under a rootless seat (keep-id) the copy belongs to the caller, and a refresh stays inside."""

    def test_rootless_staging_and_refresh(self):
        uid, socket = rootless_socket()
        if uid is None or not os.path.exists(socket):
            unavailable(self, "rootless seat not running (scripts/rootless-seat.sh start)")
        launcher, credtable = readable_copies()
        seat = Seat(socket=socket, extra=f'waive_unenforced_limits = true\ncredtable = "{credtable}"\n' + LOCAL_ROOTLESS_SEAT)
        self.addCleanup(seat.cleanup)
        cred = seat.dir / "cred" / "auth.json"
        cred.parent.mkdir()
        cred.write_text("rootless-identity")
        cred.chmod(0o600)
        for path in [seat.dir, *seat.dir.rglob("*")]:
            shutil.chown(path, USER, USER)
        before = (sha256(cred.read_bytes()), os.stat(cred).st_mtime_ns)
        status = seat.dir / "status.json"
        env = [f"HOME={pwd.getpwnam(USER).pw_dir}", "PATH=/usr/bin:/bin", f"XDG_RUNTIME_DIR=/run/user/{uid}",
               f"XDG_CONFIG_HOME={seat.config_home}", f"XDG_STATE_HOME={seat.state_home}"]
        inside = 'f=$HOME/.codex/auth.json; stat -c "%a %u" $f; cat $f; echo; echo rotated > $f'
        proc = subprocess.run(["runuser", "-u", USER, "--", "env", "-i", *env, str(launcher), "--status-file",
                               str(status), "--runtime", "codex", "--credential", str(cred), "--", "bash", "-c",
                               inside], capture_output=True, timeout=180, cwd="/")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), f"600 {uid}\nrootless-identity\n")
        self.assertTrue(json.loads(status.read_text())["credential_refreshed_in_container"])
        self.assertEqual((sha256(cred.read_bytes()), os.stat(cred).st_mtime_ns), before)


class NothingOnTheSeatsDisk(CredentialTest):
    def test_no_copy_of_the_credential_is_written_on_the_seat(self):
        """The launcher copies the credential straight into the container's tmpfs HOME."""
        self.put(self.home / ".codex/auth.json")
        run_dir = self.seat.dir / "run"
        proc, record = self.run_cred("--id", "credmounts-disk", "--runtime", "codex", "--", "bash", "-c",
                                     f"ls -A {run_dir} 2>&1; ls /sandbox-secrets /sandbox-report 2>&1 | wc -l")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        removals_done(run_dir)  # the container's remover may still hold its marker there
        self.assertEqual(session_entries(run_dir), [], "something was staged on the seat's disk")
        self.assertNotIn(MARKER.encode(), proc.stdout)
        self.assertEqual(record["error_kind"], None)
        self.assertNoContainer("credmounts-disk")
