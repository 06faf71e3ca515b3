"""Shared pieces of the integration tests: the real launcher, the real podman service.

Every test runs the built executables against the podman API service that
scripts/podman-service.sh started, with its own seat config in a temp XDG_CONFIG_HOME.
When CI=true (or ASBX_MUST_WORK=1) a missing environment is a failure, never a skip.
"""
import hashlib
import itertools
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import threading
import time
import tempfile
import sys
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("ASBX_BUILD", ROOT / "build"))
LAUNCHER = BUILD / "agent-sandbox"
SEAT_RUN = BUILD / "sandbox-run"
SOCKET = os.environ.get("ASBX_SOCKET", "/run/agent-sandbox/podman.sock")
IMAGE = os.environ.get("ASBX_IMAGE", "localhost/agent-sandbox:latest")  # scripts/lib.sh's names
BASE_IMAGE = os.environ.get("ASBX_BASE_IMAGE", "localhost/agent-sandbox-base:bookworm")
CONTAINERS_CONF = str(ROOT / "scripts" / "containers.conf")
MUST_WORK = os.environ.get("CI") == "true" or os.environ.get("ASBX_MUST_WORK") == "1"
CODES = {row["name"]: row["code"] for row in json.loads(
    subprocess.run([str(LAUNCHER), "exit-codes", "--json"], capture_output=True, check=True).stdout)}


def _tun_usable_by_all():
    try:
        return bool(os.stat("/dev/net/tun").st_mode & 0o006)
    except OSError:
        return False


# The local rootless seat user creates the tripwire's TUN device only where /dev/net/tun is
# usable by every user (udev's 0666). This VM has no udev (0600): its local rootless tests turn
# the tripwire off, and test_tripwire.py covers rootless on seat hosts and the fail-closed case.
LOCAL_ROOTLESS_SEAT = "" if _tun_usable_by_all() else 'tripwire = "off"\n'


# ASBX_TEST_RUNTIME=runsc: every rootful test seat requires gVisor (docs/ISOLATION.md), with the
# build tree's runsc wrappers; the suites that prove the guarantees run again that way.
TEST_RUNTIME = os.environ.get("ASBX_TEST_RUNTIME", "runc")
# Rootful test seats run their sessions under gVisor (a test names what the sentry answers differently).
GVISOR = TEST_RUNTIME == "runsc" and os.geteuid() == 0
RUNSC_DIR = BUILD / "libexec" / "agent-sandbox"
# podman 4.3's runtime is per service: gVisor sessions go to the service scripts/podman-service.sh
# starts with scripts/containers-runsc.conf.
RUNSC_SOCKET = os.environ.get("ASBX_RUNSC_SOCKET", "/run/agent-sandbox/podman-runsc.sock")


# A rootful runc seat gives its sessions a user namespace of their own unless it says
# user_namespace = "host" (docs/DECISIONS.md issue 34). ASBX_TEST_USERNS=host: every rootful test
# seat says so; the suites that prove the guarantees run again that way (scripts/userns-matrix.sh,
# the userns_matrix_short test).
TEST_USERNS = os.environ.get("ASBX_TEST_USERNS", "range")
RANGE_USERNS = TEST_USERNS == "range" and os.geteuid() == 0 and not GVISOR


# ASBX_TEST_POOL=N: every rootful runc test seat keeps a warm pool of N members (docs/DECISIONS.md
# "Issue 37: the warm pool"), filled when the seat is made; the containment suites run again with
# their sessions warm wherever they fit (the warm_matrix_short test, scripts/warm-matrix.sh).
# ASBX_TEST_POOL_TTY=N: and N members made with a terminal (pool_tty_size), for --tty sessions.
TEST_POOL = int(os.environ.get("ASBX_TEST_POOL", "0"))
TEST_POOL_TTY = int(os.environ.get("ASBX_TEST_POOL_TTY", "0")) if TEST_POOL else 0
POOL_KEYS = ("pool_size = ", "pool_tty_size = ")


def has_pool_key(text):
    return any("\n" + key in "\n" + text for key in POOL_KEYS)


def pool_seat_lines(text):
    if not TEST_POOL or os.geteuid() != 0 or GVISOR or has_pool_key(text):
        return ""
    if f'\nsocket = "{SOCKET}"' not in "\n" + text:
        return ""
    return f"pool_size = {TEST_POOL}\n" + (f"pool_tty_size = {TEST_POOL_TTY}\n" if TEST_POOL_TTY else "")


def session_entries(run_dir):
    """What sessions left in a seat's runtime dir: every entry but the warm pool's own (its members'
    dirs, .pool, and the profile of a member a refill is making: the seat's, not a session's)."""
    run_dir = pathlib.Path(run_dir)
    pool = lambda name: name == ".pool" or name.startswith(("pool-", "seccomp-pool-"))
    return [p for p in run_dir.glob("*") if not pool(p.name)] if run_dir.exists() else []


def gvisor_seat_lines(text):
    if os.geteuid() != 0 or f'\nsocket = "{SOCKET}"' not in "\n" + text:
        return ""  # a rootless seat keeps runc (gVisor refuses it: test_gvisor) and keep-id
    if TEST_USERNS == "host" and "\nuser_namespace = " not in "\n" + text and 'runtime = "runsc"' not in text:
        return 'user_namespace = "host"\n'
    if TEST_RUNTIME != "runsc":
        return ""
    lines = "" if "\nruntime = " in "\n" + text else 'runtime = "runsc"\n'
    lines += "" if "\nrunsc_socket = " in "\n" + text else f'runsc_socket = "{RUNSC_SOCKET}"\n'
    return lines + ("" if "\nrunsc_dir = " in "\n" + text else f'runsc_dir = "{RUNSC_DIR}"\n')


def without_gvisor_lines(text):
    """A seat's text made for a rootless seat: the matrix's gVisor lines out (a rootless seat keeps runc)."""
    return "".join(l for l in text.splitlines(True) if l.split(" = ")[0] not in ("runtime", "runsc_socket", "runsc_dir", "user_namespace"))


def unavailable(test, why):
    """Skip locally, fail in CI: the environment must work there."""
    if MUST_WORK:
        test.fail("environment not ready (CI requires it): " + why)
    test.skipTest(why)


class PodmanFailed(subprocess.CalledProcessError):
    """A podman call that failed, with what podman said (CalledProcessError's text leaves it out)."""

    def __str__(self):
        return super().__str__() + " podman said: " + (self.stderr or "").strip()


def podman(*args, socket=SOCKET, check=True):
    env = dict(os.environ, CONTAINERS_CONF=CONTAINERS_CONF)
    argv = ["podman", "--url", "unix://" + socket, *args]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise PodmanFailed(proc.returncode, argv, proc.stdout, proc.stderr)
    return proc


def removals_done(runtime_dir, settle=30):
    """Waits up to `settle` s for the detached removers of ended sessions to finish: each holds a
    `.removal-<container>` marker in the seat's runtime dir while it runs (launcher/podman/deferred_removal.h)."""
    until = time.monotonic() + settle
    while time.monotonic() < until and pathlib.Path(runtime_dir).is_dir() and any(
            p.name.startswith(".removal-") for p in pathlib.Path(runtime_dir).iterdir()):
        time.sleep(0.1)


def session_containers(session_id=None, socket=SOCKET, settle=30):
    """The session's containers. A session that ended cleanly answered before its container was
    removed (a detached remover does it: docs/DECISIONS.md, "the wait for podman's cleanup"): one
    that has stopped is waited for up to `settle` s before it counts as left behind."""
    label = "agent-sandbox.session" + ("=" + session_id if session_id else "")
    until = time.monotonic() + settle
    while True:
        # The JSON's State is podman's own word ("running"); the template's {{.State}} is the
        # status line ("Up 3 seconds ago") on podman 4.3.
        out = podman("ps", "-a", "--filter", "label=" + label, "--format", "json", socket=socket).stdout
        rows = [(c["Names"][0], c["State"]) for c in json.loads(out or "[]")]
        if session_id:  # a warm session's member keeps its pool labels; its name is the session's once it runs
            out = podman("ps", "-a", "--filter", f"name=^asbx-{session_id}$", "--format", "json", socket=socket).stdout
            rows += [(c["Names"][0], c["State"]) for c in json.loads(out or "[]") if c["Names"][0] not in dict(rows)]
        if all(state in ("running", "paused") for _, state in rows) or time.monotonic() > until:
            return [name for name, _ in rows]
        time.sleep(0.1)


class Seat:
    """A seat config in a private XDG_CONFIG_HOME, plus private state and runtime dirs."""

    def __init__(self, socket=SOCKET, image=IMAGE, extra=""):
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="asbx-seat-"))
        self.config_home = self.dir / "config"
        self.state_home = self.dir / "state"
        self.workspaces = self.dir / "workspaces"
        for d in (self.config_home / "agent-sandbox", self.state_home, self.workspaces):
            d.mkdir(parents=True)
        self.write(f'socket = "{socket}"\nimage = "{image}"\nworkspace_root = "{self.workspaces}"\n'
                   f'runtime_dir = "{self.dir}/run"\n' + extra)

    @property
    def config_file(self):
        return self.config_home / "agent-sandbox" / "seat.toml"

    @property
    def ledger(self):
        return self.state_home / "agent-sandbox" / "ledger.jsonl"

    def write(self, text):
        # top-level keys go before any [table]
        self.config_file.write_text(pool_seat_lines(text) + gvisor_seat_lines(text) + text)
        # ASBX_TEST_POOL: members made for the config as written (a fill discards those of another plan)
        if TEST_POOL and has_pool_key(self.config_file.read_text()):
            self.run("pool", "fill")

    def env(self, **more):
        env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR",)}
        env.update(XDG_CONFIG_HOME=str(self.config_home), XDG_STATE_HOME=str(self.state_home), LANG="C.UTF-8")
        env.update(more)
        return env

    def run(self, *args, input=b"", timeout=180, exe=LAUNCHER, env=None, **popen):
        return subprocess.run([str(exe), *args], input=input, capture_output=True, timeout=timeout,
                              env=env or self.env(), **popen)

    def status(self, *args, **kw):
        """Runs with --status-file; returns (completed process, status record or None)."""
        path = self.dir / ("status-%d.json" % len(list(self.dir.glob("status-*"))))
        proc = self.run("--status-file", str(path), *args, **kw)
        record = json.loads(path.read_text()) if path.exists() else None
        return proc, record

    def cleanup(self):
        self.drain_pool()
        shutil.rmtree(self.dir, ignore_errors=True)

    def drain_pool(self):
        """A seat with a pool: pool_size = 0, then `pool fill` removes the waiting members; again
        while a refill a session spawned holds the fill lock (at most 30 s)."""
        # Every seat a fill ever ran for (it made run/.pool): a test that wrote its own config without
        # pool_size, or a broken one, still has the members made for the first, and their HOME mounts.
        if not (self.dir / "run" / ".pool").exists():
            return
        label = "label=agent-sandbox.pool-runtime-dir=" + str(self.dir / "run")
        text = self.config_file.read_text() if self.config_file.exists() else ""
        if not has_pool_key(text) and not podman("ps", "-aq", "--filter", label, check=False).stdout.strip():
            return  # the pool off (a refill makes nothing) and nothing of it left: a test drained it itself
        if self.ledger.exists():  # the matrix's evidence: how many of this seat's sessions ran warm
            paths = [json.loads(l).get("path") for l in self.ledger.read_text().splitlines() if l.strip()]
            print(f"[pool] {paths.count('warm')} of {len(paths)} sessions warm", file=sys.stderr)
            reasons = sorted({json.loads(l).get("path_reason") or "" for l in self.ledger.read_text().splitlines() if l.strip()} - {""})
            print("[pool] cold: " + "; ".join(reasons), file=sys.stderr) if reasons else None
        # A config of its own: the pool off, the real service (a test may have put a relay in front
        # of it), this seat's runtime dir; a test may have left its config broken or without them.
        self.config_file.write_text(f'pool_size = 0\nsocket = "{SOCKET}"\nruntime_dir = "{self.dir / "run"}"\n')
        until, quiet = time.monotonic() + 30, 0
        while time.monotonic() < until and quiet < 2:  # twice quiet: a refill spawned late finds it off
            busy = b"another fill is at work" in self.run("pool", "fill").stderr
            left = podman("ps", "-aq", "--filter", label, check=False).stdout.strip()
            quiet = 0 if busy or left else quiet + 1
            time.sleep(0.3)
        if quiet < 2:  # said, not hidden: the run's leftovers are a finding
            print(f"[pool] members of {self.dir} left after 30 s of draining: {left or 'a fill still at work'}", file=sys.stderr)


class UnixRelay:
    """A unix-socket relay in front of the real podman service (or `upstream`): each connection is
    handed to `relay(conn)`, on a thread of its own. Subclasses set their own fields before this
    __init__ (the accepting thread starts in it)."""

    def __init__(self, path, upstream=SOCKET):
        self.path, self.upstream = str(path), upstream
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(self.path)
        self.server.listen(16)
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.relay, args=(conn,), daemon=True).start()

    def relay(self, conn):
        raise NotImplementedError

    def close(self):
        self.server.close()


class SeatTest(unittest.TestCase):
    """Base class: a fresh seat per test, the service required, nothing left behind."""

    def setUp(self):
        if not LAUNCHER.exists():
            unavailable(self, f"{LAUNCHER} is not built")
        try:
            podman("version", "--format", "{{.Server.Version}}")
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            unavailable(self, f"podman service at {SOCKET} is not running: {e}")
        self.seat = Seat()
        self.addCleanup(self.seat.cleanup)

    def assertNoContainer(self, session_id):
        self.assertEqual(session_containers(session_id), [], f"container of session {session_id} left behind")

    def assertLauncherError(self, proc, record, kind, message):
        """The launcher failed with `kind`: its code, the record, the exact message on stderr."""
        self.assertEqual(proc.returncode, CODES[kind], proc.stderr.decode(errors="replace"))
        self.assertEqual(record["outcome"], "launcher_error")
        self.assertEqual(record["error_kind"], kind)
        self.assertEqual(record["exit_code"], CODES[kind])
        self.assertIsNone(record["agent_exit_code"])
        self.assertEqual(record["message"], message)
        self.assertIn(message, proc.stderr.decode(errors="replace"))


class HeldAtItsSocket:
    """A session launched and stopped (SIGSTOP, its launcher) once its seccomp socket waits for runc,
    the window in which a second launcher of its id did harm; resumed with `go()`, and at exit
    resumed and ended if still running, its container removed."""

    def __init__(self, seat, sid, script):
        self.sid, self.session_dir, self.pid = sid, seat.dir / "run" / sid, None
        self.proc = subprocess.Popen([str(LAUNCHER), "--id", sid, "--", "bash", "-c", script], env=seat.env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def __enter__(self):
        try:
            for _ in range(20000):
                # a warm session's socket is its member's: it holds its id with the owner file at claim
                self.held = self.session_dir / "seccomp.sock"
                if TEST_POOL and not self.held.exists() and (self.session_dir / "owner").exists():
                    self.held = self.session_dir / "owner"
                if self.held.exists() or self.proc.poll() is not None:
                    break
                time.sleep(0.0005)
            # the seat tmpfs's owner file when the seat tmpfs made the dir (gVisor, a user namespace)
            owner = self.session_dir / "owner"
            owner = owner if owner.exists() else self.session_dir / "tmpfs" / "owner"
            self.pid = int(owner.read_text().split()[0])
            os.kill(self.pid, signal.SIGSTOP)
        except BaseException:
            self.__exit__()
            raise
        return self

    def go(self):
        os.kill(self.pid, signal.SIGCONT)
        return self.proc.communicate(timeout=60)

    def __exit__(self, *exc):
        if self.pid and self.proc.poll() is None:
            os.kill(self.pid, signal.SIGCONT)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        podman("rm", "-f", f"asbx-{self.sid}", check=False)

def peak_rss_argv(argv, report):
    """`argv` under GNU time, which writes the command's own peak RSS (KiB) to `report`.

    wait4's ru_maxrss of a child this process started is not the child's own: Linux carries the
    parent's high-water mark across fork (or vfork) and exec, so a test process that grew to
    150 MiB reports 150 MiB for every launcher it starts. time(1) is a small parent."""
    return ["/usr/bin/time", "-f", "%M", "-o", str(report), *argv]


def peak_rss_bytes(report):
    """The figure peak_rss_argv's time(1) wrote (its last word; a status line may precede it)."""
    return int(pathlib.Path(report).read_text().split()[-1]) * 1024


def sha256(data):
    return hashlib.sha256(data).hexdigest()


_USER_COPIES = {}


def readable_copies():
    """The launcher and the credtable copied where any user can read them.

    Rootless tests run the launcher as another user, and a clone may sit under a directory
    that user cannot traverse (e.g. /root): they use these copies instead of the build tree.
    Returns (launcher path, credtable path)."""
    if not _USER_COPIES:
        d = pathlib.Path(tempfile.mkdtemp(prefix="asbx-bin-"))
        d.chmod(0o755)
        shutil.copy2(LAUNCHER, d / "agent-sandbox")
        shutil.copy2(ROOT / "credtable" / "credtable.toml", d / "credtable.toml")
        (d / "credtable.toml").chmod(0o644)
        _USER_COPIES.update(dir=d, launcher=d / "agent-sandbox", credtable=d / "credtable.toml")
        import atexit
        atexit.register(shutil.rmtree, d, True)
    return _USER_COPIES["launcher"], _USER_COPIES["credtable"]


_SLOTS = itertools.count()


def free_veth_slot(host_prefix):
    """A number 1..250 for a test's veth pair and /30 whose seat end (host_prefix + N) no live
    namespace uses: a test may hold several at once, and a number from the clock alone collided."""
    start = os.getpid() * 11 + next(_SLOTS)
    for i in range(250):
        n = (start + i) % 250 + 1
        if not os.path.exists("/sys/class/net/%s%d" % (host_prefix, n)):
            return n
    raise RuntimeError("no free veth number for %s (250 in use)" % host_prefix)


def veth_namespace(name, host_if, ns_if, gateway, address):
    """A network namespace of the test's own, joined to the seat by a veth pair: gateway/30 on the
    seat's end, address/30 inside. Undo with drop_veth_namespace."""
    def ip(*args):
        subprocess.run(["ip", *args], check=True, capture_output=True)
    ip("netns", "add", name)
    ip("-n", name, "link", "set", "lo", "up")
    ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
    ip("link", "set", ns_if, "netns", name)
    ip("addr", "add", gateway + "/30", "dev", host_if)
    ip("link", "set", host_if, "up")
    ip("-n", name, "addr", "add", address + "/30", "dev", ns_if)
    ip("-n", name, "link", "set", ns_if, "up")


def drop_veth_namespace(name, host_if):
    subprocess.run(["ip", "link", "delete", host_if], capture_output=True)
    subprocess.run(["ip", "netns", "delete", name], capture_output=True)


def serve_in_namespace(name, argv, what, **popen):
    """`argv`, a server that prints `PORT=N` as its first line, run inside network namespace `name`.
    Returns (process, N); stops the process and raises when the first line is not PORT=N."""
    proc = subprocess.Popen(["ip", "netns", "exec", name, *argv], stdout=subprocess.PIPE, text=True, **popen)
    first = proc.stdout.readline().strip()
    if not first.startswith("PORT="):
        stop_server(proc)
        raise RuntimeError("%s did not start: %r" % (what, first))
    return proc, int(first[5:])


def stop_server(proc):
    """SIGTERM, 10 s to go, then SIGKILL; closes its stdout pipe (`ip netns exec` execs the server,
    so the pid is the server's)."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()
