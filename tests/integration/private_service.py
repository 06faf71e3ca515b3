"""A podman API service of the test's own, for faults that kill or restart it.

The shared service (/run/agent-sandbox/podman.sock) is never touched: this one listens on a
socket in a private directory under /run, runs with a copy of scripts/containers.conf (podman
hands CONTAINERS_CONF on to every `podman container cleanup` that conmon runs) and is killed by
the PID this object started.

It has its own container storage (graphroot under /var/tmp, runroot under /run), reading the
images of the machine's storage as an additional image store: a container of its sessions is
invisible to every other podman and gc on the machine, and theirs to it (a gc removes any
orphan it can see, other tests' deliberate orphans included).
"""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time

from harness import CONTAINERS_CONF


class PrivateService:
    def __init__(self, prefix="asbx-priv-", conf=CONTAINERS_CONF):
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix=prefix, dir="/run"))
        self.socket = str(self.dir / "podman.sock")
        self.conf = self.dir / "containers.conf"
        shutil.copyfile(conf, self.conf)
        conf = self.conf.read_text()  # libpod's tmp dir of its own too (exit files, locks)
        self.conf.write_text(conf.replace("[engine]\n", f'[engine]\ntmp_dir = "{self.dir}/libpod-tmp"\n', 1))
        self.graphroot = pathlib.Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
        self.storage_conf = self.dir / "storage.conf"
        self.storage_conf.write_text(
            '[storage]\ndriver = "overlay"\n'
            f'graphroot = "{self.graphroot}"\nrunroot = "{self.dir}/runroot"\n'
            '[storage.options]\nadditionalimagestores = ["/var/lib/containers/storage"]\n')
        self.proc = None

    def env(self):
        return dict(os.environ, CONTAINERS_CONF=str(self.conf), CONTAINERS_STORAGE_CONF=str(self.storage_conf))

    def start(self, timeout=60):
        env = self.env()
        log = open(self.dir / "podman.log", "ab")
        # cwd: conmon drops its oom marker there (podman 4.3); own session: no terminal signals.
        self.proc = subprocess.Popen(["podman", "system", "service", "--time=0", "unix://" + self.socket],
                                     cwd=self.dir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("podman system service exited %s: %s" % (self.proc.returncode, self.log()))
            if self.answers():
                return self
            time.sleep(0.1)
        raise RuntimeError("podman system service did not answer on %s: %s" % (self.socket, self.log()))

    def answers(self):
        return subprocess.run(["curl", "-fsS", "--max-time", "2", "--unix-socket", self.socket, "http://d/_ping"],
                              capture_output=True).returncode == 0

    def kill(self):
        """SIGKILL, by the PID this object started: nothing of podman gets to clean up."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)
        if os.path.exists(self.socket):
            os.unlink(self.socket)

    def pid(self):
        return self.proc.pid

    def fds(self):
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def log(self):
        try:
            return (self.dir / "podman.log").read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def podman(self, *args, check=True):
        env = self.env()
        return subprocess.run(["podman", "--url", "unix://" + self.socket, *args], capture_output=True, text=True,
                              check=check, env=env)

    def containers(self, session_id=None):
        label = "agent-sandbox.session" + ("=" + session_id if session_id else "")
        out = self.podman("ps", "-a", "--filter", "label=" + label, "--format", "{{.Names}} {{.State}}").stdout
        return [line for line in out.splitlines() if line]

    def stop(self):
        """Removes what its storage still holds (only its own: the image store is read-only to it),
        then ends the service."""
        if self.proc and self.proc.poll() is None:
            self.podman("rm", "--all", "--force", check=False)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        # Our storage's overlay mounts go with it (only this storage's; the image store is read-only).
        # containers/storage bind-mounts its overlay dir onto itself (private propagation); a
        # bind on the same filesystem is invisible to os.path.ismount, so it is just unmounted.
        subprocess.run(["umount", str(self.graphroot / "overlay")], capture_output=True)
        shutil.rmtree(self.graphroot, ignore_errors=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def slot_claims(slot_dir):
    """Slot files (slots.h) some process still holds (flock -n fails on them)."""
    held = []
    for f in sorted(pathlib.Path(slot_dir).glob("*.lock")) if pathlib.Path(slot_dir).is_dir() else []:
        if subprocess.run(["flock", "-n", str(f), "true"]).returncode != 0:
            held.append(f.name)
    return held


def processes_with(marker):
    """PIDs of processes whose command line contains `marker` (the agent's own argv)."""
    out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    rows = [line.strip().split(None, 1) for line in out.splitlines() if line.strip()]
    # The marker is looked for in the arguments only: `sleep 3607` must not match pid 3607.
    return [row[0] for row in rows if len(row) == 2 and marker in row[1] and not row[1].startswith("ps -eo")]


def ledger_records(path):
    path = pathlib.Path(path)
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
