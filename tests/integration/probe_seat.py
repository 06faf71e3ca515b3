"""Static probes (probes/*.c) built on the host and run in real sessions, rootful and rootless, and
the control container made like a session's (no capability, no_new_privileges, the agent's uid, no
network) under podman's own default profile: the shared part of test_seccomp, test_seccomp_surface
and test_seccomp_record."""
import json
import os
import pathlib
import pwd
import shutil
import subprocess
import tempfile
import unittest

from harness import IMAGE, LOCAL_ROOTLESS_SEAT, Seat, SeatTest, podman, readable_copies, unavailable
from test_rootless import USER, rootless_socket

AGENT_UID = 1000
PROBES = pathlib.Path(__file__).parent / "probes"


def build_static(source, *libs):
    """probes/<source> compiled static into a fresh 0755 dir, named as its stem."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="asbx-probe-"))
    d.chmod(0o755)
    out = d / pathlib.Path(source).stem
    subprocess.run(["gcc", "-static", "-O1", "-o", str(out), str(PROBES / source), *libs], check=True)
    out.chmod(0o755)
    return d


def control_run(probe_dir, socket, *argv, extra=(), tag="control"):
    """argv in a container made like a session's, under podman's own default profile."""
    name = "asbx-%s-%d" % (tag, os.getpid())
    return podman("run", "--rm", "--name", name, "--cap-drop=ALL", "--security-opt=no-new-privileges",
                  "--network=none", "--user", f"{AGENT_UID}:{AGENT_UID}", "--env", "AGENT_SANDBOX_SESSION=control",
                  "-v", f"{probe_dir}:/probe:ro", *extra, IMAGE, *argv, socket=socket, check=False)


class ProbeSeat(SeatTest):
    """A rootful seat and the class's probe (SOURCE, LIBS), built once for the class."""
    SOURCE = None
    LIBS = ()

    @classmethod
    def setUpClass(cls):
        if not shutil.which("gcc"):
            raise unittest.SkipTest("gcc is missing")
        cls.probe_dir = build_static(cls.SOURCE, *cls.LIBS)
        cls.binary = pathlib.Path(cls.SOURCE).stem

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.probe_dir, ignore_errors=True)

    def probe_workspace(self, name):
        """A workspace of the agent's holding the probe."""
        ws = self.seat.workspaces / name
        ws.mkdir(exist_ok=True)
        shutil.copy2(self.probe_dir / self.binary, ws / self.binary)
        for p in (ws, ws / self.binary):
            os.chown(p, AGENT_UID, AGENT_UID)
        return ws


class RootlessProbeSeat(unittest.TestCase):
    """The rootless lab seat as its user, a workspace `self.ws` holding the class's probe."""
    SOURCE = None
    LIBS = ()

    def setUp(self):
        self.uid, self.socket = rootless_socket()
        if self.uid is None or not os.path.exists(self.socket):
            unavailable(self, "rootless seat not running (scripts/rootless-seat.sh start)")
        self.launcher, credtable = readable_copies()
        self.seat = Seat(socket=self.socket, extra=f'credtable = "{credtable}"\nwaive_unenforced_limits = true\n' +
                         LOCAL_ROOTLESS_SEAT)
        self.addCleanup(self.seat.cleanup)
        self.probe_dir = build_static(self.SOURCE, *self.LIBS)
        self.addCleanup(shutil.rmtree, self.probe_dir, True)
        binary = pathlib.Path(self.SOURCE).stem
        self.ws = self.seat.workspaces / "probe"
        self.ws.mkdir()
        shutil.copy2(self.probe_dir / binary, self.ws / binary)
        for path in [self.seat.dir, *self.seat.dir.rglob("*")]:
            shutil.chown(path, USER, USER)
        self.home = pwd.getpwnam(USER).pw_dir

    def run_as_user(self, *args):
        """The launcher as the seat's user, with a status file: (proc, record or None)."""
        status = self.seat.dir / "status.json"
        env = ["HOME=" + self.home, "PATH=/usr/bin:/bin", f"XDG_RUNTIME_DIR=/run/user/{self.uid}",
               f"XDG_CONFIG_HOME={self.seat.config_home}", f"XDG_STATE_HOME={self.seat.state_home}", "LANG=C.UTF-8"]
        proc = subprocess.run(["runuser", "-u", USER, "--", "env", "-i", *env, str(self.launcher),
                               "--status-file", str(status), *args], capture_output=True, timeout=180, cwd="/")
        record = json.loads(status.read_text()) if status.exists() else None
        return proc, record
