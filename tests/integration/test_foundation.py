"""The foundation: a contained session on the local seat, asserted from inside."""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

from harness import (CODES, IMAGE, LAUNCHER, TEST_POOL, HeldAtItsSocket, SeatTest, session_containers, sha256, podman,
                     session_entries)

INSIDE = r'''
cg=/sys/fs/cgroup
echo "uid=$(id -u) gid=$(id -g)"
grep -E '^(NoNewPrivs|CapEff|CapBnd):' /proc/self/status | tr -d '\t '
echo "pids.max=$(cat $cg/pids/pids.max)"
echo "memory=$(cat $cg/memory/memory.limit_in_bytes)"
echo "memsw=$(cat $cg/memory/memory.memsw.limit_in_bytes)"
echo "cfs_quota=$(cat $cg/cpu/cpu.cfs_quota_us)"
echo "cfs_period=$(cat $cg/cpu/cpu.cfs_period_us)"
echo "shares=$(cat $cg/cpu/cpu.shares)"
echo "nofile=$(ulimit -n)"
touch /etc/probe 2>/dev/null && echo rootfs=rw || echo rootfs=ro
touch "$HOME/probe" && echo home=rw
touch /tmp/probe && echo tmp=rw
echo "home=$HOME pwd=$(pwd)"
echo "net=$(ls /sys/class/net | tr '\n' ,)"
'''


class InsideTheContainer(SeatTest):
    def test_confinement_seen_from_inside(self):
        proc, record = self.seat.status("--id", "found-inside", "--memory", "256m", "--pids", "100", "--cpus", "1.5",
                                        "--cpu-shares", "300", "--", "bash", "-c", INSIDE)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        seen = dict(line.split("=", 1) if "=" in line else line.split(":", 1)
                    for line in proc.stdout.decode().split("\n") if line and not line.startswith("home=/"))
        self.assertEqual(seen["uid"], "1000 gid=1000")  # root callers never run the agent as root
        self.assertEqual(seen["NoNewPrivs"], "1")
        self.assertEqual(seen["CapEff"], "0000000000000000")
        self.assertEqual(seen["CapBnd"], "0000000000000000")
        self.assertEqual(seen["pids.max"], "100")
        self.assertEqual(seen["memory"], str(256 << 20))
        self.assertEqual(seen["memsw"], str(256 << 20))  # swap forbidden
        self.assertEqual(seen["cfs_quota"], "150000")
        self.assertEqual(seen["cfs_period"], "100000")
        self.assertEqual(seen["shares"], "300")
        self.assertEqual(seen["nofile"], "8192")
        self.assertEqual(seen["rootfs"], "ro")
        self.assertEqual(seen["home"], "rw")
        self.assertEqual(seen["tmp"], "rw")
        self.assertIn("home=/sandbox/home pwd=/sandbox/home", proc.stdout.decode())
        self.assertEqual(seen["net"], "lo,tripwire0,")  # the tripwire's device is the only route (docs/EGRESS.md)
        self.assertEqual(record["outcome"], "exited")
        self.assertEqual(record["mode"], "rootful")
        self.assertTrue(record["limits"]["enforced"])
        self.assertTrue(record["container_removed"])
        self.assertNoContainer("found-inside")

    def test_labels_name_the_session(self):
        proc = self.seat.run("--id", "found-labels", "--", "bash", "-c",
                             "sleep 0.1; cat /proc/1/cmdline | tr '\\0' ' '")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(b"init", proc.stdout)  # PID 1 is podman's init, so signals reach the agent


class Stdio(SeatTest):
    def test_stdout_and_stderr_stay_separate(self):
        proc = self.seat.run("--", "bash", "-c", "echo out1; echo err1 >&2; echo out2; echo err2 >&2")
        self.assertEqual(proc.stdout, b"out1\nout2\n")
        self.assertEqual(proc.stderr, b"err1\nerr2\n")

    def test_stdin_reaches_the_agent_and_ends_with_eof(self):
        proc = self.seat.run("--", "bash", "-c", "wc -c; echo done", input=b"x" * 100000)
        self.assertEqual(proc.stdout, b"100000\ndone\n")

    def test_empty_stdin_is_eof(self):
        proc = self.seat.run("--", "cat", input=b"")
        self.assertEqual((proc.returncode, proc.stdout), (0, b""))

    def test_exit_codes_pass_through(self):
        for code in (0, 1, 3, 42, 126, 127, 255):
            with self.subTest(code=code):
                proc, record = self.seat.status("--", "bash", "-c", f"exit {code}")
                self.assertEqual(proc.returncode, code)
                self.assertEqual(record["agent_exit_code"], code)
                self.assertEqual(record["outcome"], "exited")
                self.assertIsNone(record["error_kind"])

    def test_large_stream_is_byte_identical(self):
        expected = sha256(subprocess.run("yes 0123456789abcdef | head -c 67108864", shell=True,
                                         capture_output=True, check=True).stdout)
        proc = self.seat.run("--", "bash", "-c", "yes 0123456789abcdef | head -c 67108864")
        self.assertEqual(proc.returncode, 0)
        self.assertEqual(len(proc.stdout), 67108864)
        self.assertEqual(sha256(proc.stdout), expected)

    def test_large_stdin_is_byte_identical(self):
        data = os.urandom(8 << 20)
        proc = self.seat.run("--", "sha256sum", input=data)
        self.assertEqual(proc.stdout.decode().split()[0], sha256(data))


class FailClosed(SeatTest):
    def test_unreachable_service(self):
        dead = tempfile.mkdtemp(prefix="asbx-dead-")
        self.seat.write(f'socket = "{dead}/podman.sock"\nimage = "{IMAGE}"\n')
        proc, record = self.seat.status("--id", "fc-unreach", "--", "true")
        msg = f"podman API at {dead}/podman.sock did not answer: cannot connect (is the service running?)"
        self.assertLauncherError(proc, record, "podman_unreachable", msg)
        os.rmdir(dead)

    def test_missing_image(self):
        proc, record = self.seat.status("--id", "fc-image", "--image", "localhost/no-such-image:1", "--", "true")
        self.assertLauncherError(proc, record, "image_missing",
                                 "image 'localhost/no-such-image:1' is not present on the seat (podman at "
                                 "/run/agent-sandbox/podman.sock); build it with scripts/build-image.sh")
        self.assertNoContainer("fc-image")

    def test_command_not_found(self):
        proc, record = self.seat.status("--id", "fc-notfound", "--", "no-such-command", "arg")
        self.assertLauncherError(proc, record, "command_not_found",
                                 "command not found inside the container: 'no-such-command'")
        self.assertNoContainer("fc-notfound")

    def test_command_not_executable(self):
        proc, record = self.seat.status("--id", "fc-noexec", "--", "/etc/hostname")
        self.assertLauncherError(proc, record, "command_not_executable",
                                 "command not executable inside the container: '/etc/hostname'")
        self.assertNoContainer("fc-noexec")

    def test_agent_127_is_not_a_launcher_error(self):
        proc, record = self.seat.status("--", "bash", "-c", "no-such-thing-inside")
        self.assertEqual(proc.returncode, 127)
        self.assertEqual((record["outcome"], record["error_kind"], record["agent_exit_code"]), ("exited", None, 127))

    def test_create_refused(self):
        proc, record = self.seat.status("--id", "fc-create", "--network", "ns:/run/netns/fc-absent-namespace", "--",
                                        "true")  # valid syntax (docs/AGENTS.md), refused by podman
        self.assertLauncherError(proc, record, "create_failed",
                                 "podman refused to create the container (500): cannot find specified network "
                                 "namespace path: stat /run/netns/fc-absent-namespace: no such file or directory")
        self.assertNoContainer("fc-create")

    def test_duplicate_session_id_is_refused(self):
        # A second launcher of a live id is refused before it touches the first's session dir: it used
        # to unlink the first's seccomp socket (a hostile pass). The first is held (SIGSTOP) while its
        # socket waits for runc, the window in which that did harm.
        with HeldAtItsSocket(self.seat, "fc-dup", "echo first") as first:
            proc, record = self.seat.status("--id", "fc-dup", "--", "true")
            self.assertLauncherError(proc, record, "create_failed",
                                     "--id fc-dup: a session of that id is already running on this seat (its launcher is "
                                     f"pid {first.pid}); nothing was created")
            self.assertTrue(first.held.exists())  # the first's socket (a warm one's owner file), left alone
            out, err = first.go()
            self.assertEqual((first.proc.returncode, out), (0, b"first\n"), err)  # the first is untouched

    def test_usage_errors(self):
        cases = [
            (["--id", "fu-1", "--bogus", "--", "true"], "unknown option '--bogus'; run 'agent-sandbox --help'"),
            (["--id", "fu-2", "--memory", "12x", "--", "true"], "--memory: '12x' has an unknown unit (use k, m or g)"),
            (["--id", "fu-3", "--timeout", "soon", "--", "true"], "--timeout: 'soon' is not a number"),
            (["--id", "bad id", "--", "true"],
             "--id: 'bad id' must be 1-64 letters, digits, '-', '_' or '.', starting with a letter or digit"),
            (["--id", "fu-4"], "no command given: use agent-sandbox [options] -- COMMAND [ARG...]"),
            # a cold session's dir named so would pass for a member's: its orphan never in sight (hostile pass, stop 59)
            (["--id", "pool-fu", "--", "true"], "--id: 'pool-fu' starts with 'pool-', which only the seat's warm pool members' ids have"),
            # JSON carries no such bytes: cold, podman's create failed after the session's dir was
            # made (202, a dir left); warm, the spec ran them (a hostile pass)
            (["--id", "fu-5", "--", "sh", "-c", "echo $#", "x", b"\xff\xfe"],
             "argument 4 of the command is not valid UTF-8 (podman's API carries it as JSON text): '??'"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                proc, record = self.seat.status(*args)
                self.assertLauncherError(proc, record, "usage", message)
        for n in range(1, 6):
            self.assertNoContainer(f"fu-{n}")
        self.assertNoContainer("pool-fu")
        self.assertEqual(session_entries(self.seat.dir / "run"), [])

    def test_a_runtime_dir_others_may_write_is_refused_before_anything_is_made(self):
        run = self.seat.dir / "run"
        run.mkdir(exist_ok=True)  # a pool's (ASBX_TEST_POOL) members are there already
        before = sorted(run.iterdir())
        for mode, why in ((0o777, "is writable by group or others (mode 0777): chmod go-w it, or name another"),
                          (0o1770, "is writable by group or others (mode 1770): chmod go-w it, or name another")):
            run.chmod(mode)
            proc, record = self.seat.status("--id", "fu-rundir", "--", "true")
            self.assertLauncherError(proc, record, "config", f"runtime_dir '{run}' (from {self.seat.config_file}) {why}: "
                                                             "session dirs and gc's markers live there; nothing was started")
            gc = self.seat.run("gc")
            self.assertEqual((gc.returncode, gc.stdout), (201, b""), gc.stderr)
            self.assertEqual(sorted(run.iterdir()), before)
        os.chown(run, 1000, 1000)
        run.chmod(0o700)
        proc, record = self.seat.status("--id", "fu-rundir", "--", "true")
        self.assertLauncherError(proc, record, "config", f"runtime_dir '{run}' (from {self.seat.config_file}) is owned by "
                                                         "uid 1000, not by the launcher's user (uid 0): session dirs and "
                                                         "gc's markers live there; nothing was started")
        self.assertNoContainer("fu-rundir")
        os.chown(run, 0, 0)  # CONTROL: the owner's own 0700 dir
        proc, record = self.seat.status("--id", "fu-rundir", "--", "true")
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_a_relative_runtime_dir_is_refused_at_load(self):
        cwd = pathlib.Path(tempfile.mkdtemp(prefix="asbx-cwd-"))
        self.addCleanup(shutil.rmtree, cwd, True)
        self.seat.write('socket = "/x"\nruntime_dir = "run"\n')
        line = self.seat.config_file.read_text().splitlines().index('runtime_dir = "run"') + 1
        for args in (("--id", "fu-relrun", "--", "true"), ("--dry-run", "--", "true")):
            proc, record = self.seat.status(*args, cwd=cwd)
            self.assertLauncherError(proc, record, "config",
                                     f"{self.seat.config_file}:{line}: runtime_dir 'run' is not an absolute path")
        self.assertEqual(list(cwd.iterdir()), [])

    def test_bad_seat_config_names_file_and_line(self):
        self.seat.write('socket = "/x"\nimage = 5\n')
        proc, record = self.seat.status("--", "true")
        self.assertLauncherError(proc, record, "config", f"{self.seat.config_file}:2: 'image' must be a string")
        self.seat.write('socket = "/x"\n\nsokcet = "/y"\n')
        proc, record = self.seat.status("--", "true")
        self.assertLauncherError(proc, record, "config", f"{self.seat.config_file}:3: unknown key 'sokcet'")


class DryRun(SeatTest):
    def test_dry_run_prints_the_plan_and_creates_nothing(self):
        proc = self.seat.run("--dry-run", "--id", "dry-1", "--memory", "1g", "--", "codex", "exec", "hi")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        plan = json.loads(proc.stdout)
        body = plan["create_body"]
        self.assertEqual(body["command"], ["codex", "exec", "hi"])
        self.assertEqual(body["cap_drop"], ["ALL"])
        self.assertTrue(body["no_new_privileges"])
        self.assertEqual(body["resource_limits"]["memory"], {"limit": 1 << 30, "swap": 1 << 30})
        self.assertEqual(body["user"], "1000:1000")
        self.assertIn("PATH", plan["env_names"])
        self.assertNoContainer("dry-1")
        self.assertFalse(self.seat.ledger.exists())


class Records(SeatTest):
    def test_status_record_and_ledger_line(self):
        proc, record = self.seat.status("--id", "rec-1", "--", "bash", "-c", "exit 3")
        self.assertEqual(proc.returncode, 3)
        for key in ("id", "outcome", "exit_code", "agent_exit_code", "error_kind", "message", "image", "limits",
                    "mode", "durations_ms"):
            self.assertIn(key, record)
        self.assertEqual((record["id"], record["exit_code"], record["agent_exit_code"]), ("rec-1", 3, 3))
        # where the time went, step by step (docs/BENCHMARKS.md reads these)
        phases = record["durations_ms"]["phases"]
        # no "remove": a session that ended cleanly is answered before its removal (container_removal)
        self.assertEqual(record["container_removal"], "deferred")
        made = {"claim", "bind", "rename"} if record["path"] == "warm" else {"image", "create", "init"}  # ahead of time, warm
        self.assertEqual(set(phases), made | {"gc", "inspect", "checks", "attach", "start",
                                              "disk_baseline", "agent", "wait", "secret_scan", "conclude"})
        self.assertEqual(record["path"], "warm" if TEST_POOL else "cold")
        self.assertTrue(all(isinstance(v, int) and 0 <= v <= record["durations_ms"]["total"] for v in phases.values()))
        lines = self.seat.ledger.read_text().splitlines()
        self.assertEqual(len(lines), 1)
        self.assertEqual(json.loads(lines[0])["id"], "rec-1")
        self.assertNotIn(b"rec-1", proc.stdout)  # never on stdout
