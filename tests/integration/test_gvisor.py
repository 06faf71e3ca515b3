"""gVisor (runsc) as the session's wall (docs/ISOLATION.md): the seat's choice and --isolation,
the refusals (231, nothing created), the guarantees a runc session has, and the kernel surface
the agent meets (the sentry's answers; nothing reaches the seat). The same suites run again
with every test seat requiring runsc: scripts/gvisor-matrix.sh (ASBX_TEST_RUNTIME=runsc)."""
import ctypes
import json
import os
import pathlib
import subprocess
import time

from harness import CODES, LAUNCHER, RUNSC_DIR, RUNSC_SOCKET, SeatTest, podman, unavailable

RUNSC = pathlib.Path("/usr/bin/runsc")


def gvisor_seat(test):
    """The test's seat made able to run gVisor sessions (root, runsc, the build tree's wrappers)."""
    if os.geteuid() != 0:
        unavailable(test, "gVisor sessions need the rootful seat")
    if not RUNSC.exists():
        unavailable(test, "runsc is not installed (apt-get install runsc)")
    # gVisor in a user namespace is refused (test_userns_range): a gVisor seat of the userns matrix has none
    text = test.seat.config_file.read_text().replace('user_namespace = "range"\n', 'user_namespace = "host"\n')
    if "runsc_dir" not in text:  # the build tree's wrappers (installed: /usr/libexec/agent-sandbox)
        text = f'runsc_dir = "{RUNSC_DIR}"\nrunsc_socket = "{RUNSC_SOCKET}"\n' + text
    test.seat.write(text)


class GvisorSeat(SeatTest):
    def setUp(self):
        super().setUp()
        gvisor_seat(self)

    def runsc_seat(self, more=""):
        text = self.seat.config_file.read_text()
        if 'runtime = "runsc"' not in text:
            text = 'runtime = "runsc"\n' + text
        self.seat.write(text + more)

    def assertNothingCreated(self, session_id):
        self.assertNoContainer(session_id)
        self.assertFalse((self.seat.dir / "run" / session_id).exists(), "a session dir was left")


class Wall(GvisorSeat):
    def test_a_session_under_gvisor_says_so_everywhere(self):
        proc, rec = self.seat.status("--id", "gv-basic", "--isolation", "gvisor", "--", "sh", "-c",
                                     'uname -r; id -u; echo x > "$HOME/f"; cat "$HOME/f"')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.decode().splitlines()
        self.assertEqual(lines[0], "4.4.0")  # the sentry answers, not the seat's kernel
        self.assertEqual(lines[1:3], ["1000", "x"])  # the seat tmpfs HOME is the agent's to write
        self.assertEqual(rec["isolation"], {"wall": "gvisor", "platform": "ptrace", "required_by": "--isolation gvisor",
                                            "sandbox_pids": 96 + 10 * 512, "user_namespace": "host"})
        ledger = [json.loads(line) for line in self.seat.ledger.read_text().splitlines()]
        self.assertEqual(ledger[-1]["isolation"]["wall"], "gvisor")
        self.assertTrue(rec["container_removed"])
        self.assertNothingCreated("gv-basic")

    def test_dry_run_names_the_wall_and_the_runtime(self):
        self.runsc_seat()
        proc = self.seat.run("--dry-run", "--id", "gv-dry", "--", "true")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        plan = json.loads(proc.stdout)
        self.assertEqual(plan["isolation"]["wall"], "gvisor")
        self.assertEqual(plan["create_body"]["oci_runtime"], f"{RUNSC_DIR}/runsc-ptrace")
        self.assertEqual(plan["isolation"]["required_by"], str(self.seat.config_file))

    def test_a_runc_session_is_unchanged(self):
        proc, rec = self.seat.status("--id", "gv-runc", "--isolation", "runc", "--", "sh", "-c", "uname -r")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotEqual(proc.stdout, b"4.4.0\n")
        self.assertEqual(rec["isolation"]["wall"], "runc")


class Refusals(GvisorSeat):
    def test_runsc_missing_is_refused_with_nothing_created(self):
        text = self.seat.config_file.read_text().replace(f'runsc_dir = "{RUNSC_DIR}"\n', "")
        self.seat.write('runtime = "runsc"\nrunsc_dir = "/nonexistent/runsc"\n' + text)
        proc, rec = self.seat.status("--id", "gv-missing", "--", "true")
        self.assertLauncherError(proc, rec, "isolation_unavailable",
                                 "gVisor (runsc): its wrapper '/nonexistent/runsc/runsc-ptrace' is missing or not "
                                 f"executable (runsc_dir in {self.seat.config_file}); nothing was created")
        self.assertEqual(CODES["isolation_unavailable"], 231)
        self.assertNothingCreated("gv-missing")

    def test_a_weaker_wall_than_the_seat_requires_is_refused(self):
        self.runsc_seat()
        proc, rec = self.seat.status("--id", "gv-weaker", "--isolation", "runc", "--", "true")
        self.assertLauncherError(proc, rec, "isolation_unavailable",
                                 f'gVisor (runsc): the seat requires it (runtime = "runsc" in {self.seat.config_file}); '
                                 "--isolation runc cannot ask for a weaker wall; nothing was created")
        self.assertNothingCreated("gv-weaker")

    def test_control_the_same_seat_runs_the_session_under_gvisor(self):
        self.runsc_seat()
        proc, rec = self.seat.status("--id", "gv-control", "--", "uname", "-r")
        self.assertEqual((proc.returncode, proc.stdout), (0, b"4.4.0\n"), proc.stderr)
        self.assertEqual(rec["isolation"]["required_by"], str(self.seat.config_file))


class Attribution(GvisorSeat):
    def test_oom_is_killed_oom(self):
        hog = 'v=$(head -c 300M /dev/zero | tr "\\0" x); echo unreachable'
        proc, rec = self.seat.status("--id", "gv-oom", "--isolation", "gvisor", "--memory", "256m", "--",
                                     "bash", "-c", hog)
        self.assertEqual(proc.returncode, CODES["killed_oom"], (proc.stderr, rec))
        self.assertEqual((rec["cause"], rec["error_kind"]), ("oom", "killed_oom"))
        self.assertTrue(rec["counters"]["oom_killed"])
        self.assertNothingCreated("gv-oom")

    def test_timeout_is_killed_timeout(self):
        proc, rec = self.seat.status("--id", "gv-timeout", "--isolation", "gvisor", "--timeout", "3s", "--",
                                     "sleep", "60")
        self.assertEqual(proc.returncode, CODES["killed_timeout"], proc.stderr)
        self.assertEqual(rec["cause"], "timeout")
        self.assertNothingCreated("gv-timeout")

    # A hostile pass's finding: each agent process costs the sandbox about nine of the seat's pids,
    # so `--pids 256` gave about 20 processes and the sandbox then died with exit 2, recorded as the
    # agent's own code. Now pids.max is 96 + 10 per process asked for, and a sandbox that reaches it
    # is killed_pids.
    BACKGROUND = 'for i in $(seq %d); do sleep 60 & done; echo started; kill $(jobs -p); wait; echo done'

    def test_the_processes_asked_for_are_the_agents(self):
        proc, rec = self.seat.status("--id", "gv-pids-ok", "--isolation", "gvisor", "--pids", "64", "--",
                                     "bash", "-c", self.BACKGROUND % 48)
        self.assertEqual((proc.returncode, proc.stdout), (0, b"started\ndone\n"), (proc.stderr, rec))
        self.assertEqual((rec["cause"], rec["counters"]["pids_refused"]), (None, 0))
        self.assertNothingCreated("gv-pids-ok")

    def test_a_sandbox_at_its_pids_limit_is_killed_pids_not_the_agents_code(self):
        proc, rec = self.seat.status("--id", "gv-pids", "--isolation", "gvisor", "--pids", "8", "--",
                                     "bash", "-c", self.BACKGROUND % 60)
        self.assertEqual(proc.returncode, CODES["killed_pids"], (proc.stderr, rec))
        self.assertEqual((rec["outcome"], rec["cause"], rec["error_kind"]), ("killed", "pids", "killed_pids"))
        self.assertGreater(rec["counters"]["pids_refused"], 0)
        self.assertLessEqual(rec["counters"]["pids_peak"], 176)  # sampled: v1 keeps no peak
        self.assertEqual(rec["message"], "killed: the gVisor sandbox reached the session's pids limit (176 of the seat's "
                                         "pids for --pids 8); runsc ended it with %d" % rec["agent_exit_code"])
        self.assertIn("agent-sandbox: " + rec["message"] + "\n", proc.stderr.decode())
        self.assertNothingCreated("gv-pids")


class Removal(GvisorSeat):
    """podman's "removed" is not proof under gVisor (a hostile pass: a removal through a podman that
    did not know the runsc wrappers left the sandbox running). After the removal the launcher
    looks at the container's pids cgroup itself and kills what is still there."""

    def cgroup_of(self, session):
        rows = json.loads(podman("ps", "--filter", "label=agent-sandbox.session=" + session, "--format", "json",
                                 socket=RUNSC_SOCKET).stdout or "[]")
        if not rows or rows[0]["State"] != "running":
            return None
        pid = rows[0]["Pid"]
        for line in pathlib.Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if "pids" in controllers.split(","):
                return pathlib.Path("/sys/fs/cgroup/pids") / path.lstrip("/")
            if controllers == "" and not pathlib.Path("/sys/fs/cgroup/pids").exists():
                return pathlib.Path("/sys/fs/cgroup") / path.lstrip("/")
        return None

    def test_a_task_left_in_the_cgroup_after_the_removal_is_killed(self):
        # A task of the test's own stands for the sandbox that outlived podman's answer.
        session = "gv-reap"
        launcher = subprocess.Popen([str(LAUNCHER), "--status-file", str(self.seat.dir / "reap.json"), "--id", session,
                                     "--isolation", "gvisor", "--", "sleep", "8"], env=self.seat.env(),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 60
        cgroup = None
        while cgroup is None and time.time() < deadline:
            cgroup = self.cgroup_of(session)
            time.sleep(0.2)
        self.assertIsNotNone(cgroup, "the session's container never ran")
        planted = subprocess.Popen(["sleep", "300"])
        self.addCleanup(lambda: planted.poll() is None and planted.kill())
        (cgroup / "cgroup.procs").write_text(str(planted.pid))
        out, err = launcher.communicate(timeout=120)
        rec = json.loads((self.seat.dir / "reap.json").read_text())
        self.assertEqual(planted.wait(timeout=10), -9, "the task left in the cgroup was not killed")
        self.assertIn("gVisor: 1 task(s) were still in the container's cgroup after its removal (the sandbox outlived "
                      "podman's answer): killed", rec["warnings"])
        self.assertEqual((launcher.returncode, rec["exit_code"]), (0, 0), err)
        self.assertNothingCreated(session)

    def test_control_an_ordinary_session_finds_nothing(self):
        proc, rec = self.seat.status("--id", "gv-reap-ctl", "--isolation", "gvisor", "--", "true")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual([w for w in rec["warnings"] if w.startswith("gVisor:")], [])


class KilledLauncher(GvisorSeat):
    """The launcher killed and its container removed by another hand: no label leads gc to the
    session's seat tmpfs (its HOME); gc finds it by the owner the launcher wrote beside it."""

    def mounts_under(self, path):
        return [line.split()[4] for line in pathlib.Path("/proc/self/mountinfo").read_text().splitlines()
                if line.split()[4].startswith(str(path) + "/")]

    def test_gc_unmounts_a_seat_tmpfs_whose_launcher_and_container_are_gone(self):
        session, run = "gv-stale", self.seat.dir / "run"
        launcher = subprocess.Popen([str(LAUNCHER), "--id", session, "--isolation", "gvisor", "--", "sleep", "300"],
                                    env=self.seat.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(lambda: launcher.poll() is None and launcher.kill())
        ids, deadline = [], time.time() + 60
        while not ids and time.time() < deadline:
            ids = podman("ps", "-q", "--filter", "label=agent-sandbox.session=" + session, socket=RUNSC_SOCKET).stdout.split()
            time.sleep(0.2)
        self.assertTrue(ids and self.mounts_under(run / session), "the session never ran with its seat tmpfs")
        gc = subprocess.run([str(LAUNCHER), "gc"], env=self.seat.env(), capture_output=True, text=True)
        self.assertEqual((gc.returncode, gc.stdout), (0, ""), gc.stderr)  # CONTROL: a live session is left alone
        self.assertTrue(self.mounts_under(run / session))
        launcher.kill()
        launcher.wait()
        podman("rm", "-f", "-t", "0", ids[0], socket=RUNSC_SOCKET)
        self.assertTrue(self.mounts_under(run / session), "what gc used to leave until the seat rebooted")
        gc = subprocess.run([str(LAUNCHER), "gc"], env=self.seat.env(), capture_output=True, text=True)
        self.assertEqual((gc.returncode, gc.stdout), (0, f"removed the session dir of {session}: its launcher (pid "
                                                         f"{launcher.pid}) is gone and no container carries its "
                                                         "session\n"), gc.stderr)
        self.assertEqual(self.mounts_under(run / session), [])
        self.assertNothingCreated(session)
        rec = json.loads(self.seat.ledger.read_text().splitlines()[-1])
        self.assertEqual((rec["id"], rec["cause"], rec["container_id"]), (session, "orphaned", None))


class SentryCompat(GvisorSeat):
    """Debian's sentry answers statx with AT_NO_AUTOMOUNT and a blocking read of a host socket
    wrongly; the preloaded shim (packaging/runsc/gvisor-compat.cc) makes the image's own tools work.
    Each CONTROL makes the same call as a raw system call in the same session: the sentry's answer."""

    # The socket CONTROL reads before sending anything (the door waits for a request head): the raw
    # read answers EAGAIN at once where a kernel would wait.
    RAW = ("import ctypes, socket, sys, time; libc = ctypes.CDLL(None, use_errno=True)\n"
           "b = ctypes.create_string_buffer(256)\n"
           "r = libc.syscall(332, -100, b'/usr', 0x800, 0x7ff, b); print('raw-statx', r, ctypes.get_errno())\n"
           "if sys.argv[1:]:\n"
           "    s = socket.create_connection(('127.0.0.1', 3128)); t = time.time()\n"
           "    r = libc.syscall(0, s.fileno(), b, 100); e = ctypes.get_errno()\n"
           "    print('raw-read', r, e, 'at once' if time.time() - t < 1 else 'waited')\n")

    def test_ls_l_stat_git_and_node_work(self):
        script = ('ls -ld /usr | cut -c1-10; stat -c "%a %U" /usr "$HOME"; ls -l "$HOME" | head -1; '
                  'cd /tmp && git init -q r && cd r && echo a > a && git add a && '
                  'git -c user.email=a@b -c user.name=a commit -qm x && git status --porcelain | wc -l; '
                  'node -e "const fs = require(\'fs\'); console.log(fs.statSync(\'/usr\').isDirectory())"; '
                  'python3 -c "$RAW"')
        proc, rec = self.seat.status("--id", "gv-stat", "--isolation", "gvisor", "--", "env", "RAW=" + self.RAW,
                                     "bash", "-c", script)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), "drwxr-xr-x\n755 root\n700 agent\ntotal 0\n0\ntrue\n"
                                               "raw-statx -1 22\n")  # CONTROL: the sentry's EINVAL
        self.assertNothingCreated("gv-stat")

    def test_a_blocking_read_of_a_socket_waits_for_the_answer(self):
        script = ("exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT evil.example:443 HTTP/1.1\\r\\n\\r\\n' >&3; "
                  "head -1 <&3 | tr -d '\\r'; python3 -c \"$RAW\" socket")
        proc, rec = self.seat.status("--id", "gv-read", "--isolation", "gvisor", "--egress", "api.mock.test", "--",
                                     "env", "RAW=" + self.RAW, "bash", "-c", script)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.decode().splitlines()
        self.assertEqual(lines[0], "HTTP/1.1 403 Forbidden")
        self.assertEqual(lines[-1], "raw-read -1 11 at once")  # CONTROL: the sentry's EAGAIN, not a wait
        self.assertNothingCreated("gv-read")


# What the agent's syscalls meet under gVisor: the sentry's own answers. Each line: name, result.
PROBE = r'''
use POSIX ();
sub call { my ($name, @args) = @_; my $r = syscall(@args); print "$name ", ($r >= 0 ? "ok" : "errno " . ($! + 0)), "\n"; }
print "uname ", (POSIX::uname())[2], "\n";
call("unshare_userns_netns", 272, 0x10000000 | 0x40000000);
call("io_uring_setup", 425, 1, 0);
call("keyctl_search_user_keyring", 250, 10, -4, "user", "asbx-gvisor-probe", 0);
call("bpf", 321, 0, 0, 0);
call("perf_event_open", 298, 0, 0, -1, -1, 0);
call("socket_af_alg", 41, 38, 5, 0);
call("socket_af_packet", 41, 17, 3, 0);
call("socket_af_vsock", 41, 40, 1, 0);
'''


class KernelSurface(GvisorSeat):
    def test_the_sentry_answers_and_nothing_reaches_the_seat(self):
        # The seat's root user keyring holds a key; the probe searches its own user keyring for it.
        libc = ctypes.CDLL(None, use_errno=True)
        key = libc.syscall(248, b"user", b"asbx-gvisor-probe", b"seat-secret", 11, -4)  # add_key to @u
        self.assertGreater(key, 0, "the seat's keyring took no key")
        self.addCleanup(libc.syscall, 250, 9, key, -4)  # KEYCTL_UNLINK from @u
        proc, rec = self.seat.status("--id", "gv-probe", "--isolation", "gvisor", "--", "perl", "-e", PROBE)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        answers = dict(line.split(" ", 1) for line in proc.stdout.decode().splitlines())
        print(json.dumps(answers, indent=1))
        self.assertEqual(answers["uname"], "4.4.0")
        self.assertNotEqual(answers["keyctl_search_user_keyring"], "ok")  # no keyring of the seat's
        self.assertNotEqual(answers["io_uring_setup"], "ok")
        self.assertNotEqual(answers["bpf"], "ok")
        self.assertNotEqual(answers["perf_event_open"], "ok")
        self.assertNotEqual(answers["socket_af_alg"], "ok")
        self.assertNotEqual(answers["socket_af_vsock"], "ok")
        self.assertNothingCreated("gv-probe")
