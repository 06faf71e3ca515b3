"""Rootless sessions on this cgroup-v1 VM, where podman ignores every resource limit.

The launcher must refuse to start (limits_unenforced) unless the seat's own config file
waives it; with the waiver the session runs and the record says the limits were not
enforced and which file waived them.
"""
import json
import os
import pwd
import shutil
import subprocess
import unittest

from harness import CODES, LOCAL_ROOTLESS_SEAT, Seat, readable_copies, session_containers, unavailable

USER = "asbx-rootless"


def rootless_socket():
    try:
        uid = pwd.getpwnam(USER).pw_uid
    except KeyError:
        return None, None
    return uid, f"/run/user/{uid}/podman/podman.sock"


class RootlessSeatBase(unittest.TestCase):
    """A private seat config for the rootless user, and its launcher run as that user."""

    def setUp(self):
        self.uid, self.socket = rootless_socket()
        if self.uid is None or not os.path.exists(self.socket):
            unavailable(self, "rootless seat not running (scripts/rootless-seat.sh start)")
        self.launcher, credtable = readable_copies()
        self.seat = Seat(socket=self.socket, extra=f'credtable = "{credtable}"\n' + LOCAL_ROOTLESS_SEAT)
        self.addCleanup(self.seat.cleanup)
        shutil.chown(self.seat.dir, USER, USER)
        for path in self.seat.dir.rglob("*"):
            shutil.chown(path, USER, USER)
        self.home = pwd.getpwnam(USER).pw_dir

    def run_as_user(self, *args, extra_env=(), timeout=180):
        status = self.seat.dir / "status.json"
        env = ["HOME=" + self.home, "PATH=/usr/bin:/bin", f"XDG_RUNTIME_DIR=/run/user/{self.uid}",
               f"XDG_CONFIG_HOME={self.seat.config_home}", f"XDG_STATE_HOME={self.seat.state_home}", "LANG=C.UTF-8", *extra_env]
        proc = subprocess.run(["runuser", "-u", USER, "--", "env", "-i", *env, str(self.launcher),
                               "--status-file", str(status), *args],
                              capture_output=True, timeout=timeout, cwd="/")
        record = json.loads(status.read_text()) if status.exists() else None
        return proc, record

    def containers(self, session_id):
        """Waits for the session's deferred removal (a stopped container counts after 30 s)."""
        return session_containers(session_id, socket=self.socket)


class RootlessSeat(RootlessSeatBase):
    def test_unenforced_limits_are_refused_without_a_waiver(self):
        proc, record = self.run_as_user("--id", "rl-refused", "--", "bash", "-c", "touch /tmp/x; echo ran")
        message = ('podman will not enforce the memory/pids/cpu limits on this seat ("Resource limits are not '
                   'supported and ignored"); refusing to start. The seat owner may waive this with '
                   f'waive_unenforced_limits = true in {self.seat.config_file}')
        self.assertEqual(proc.returncode, CODES["limits_unenforced"], proc.stderr)
        self.assertEqual(record["error_kind"], "limits_unenforced")
        self.assertEqual(record["message"], message)
        self.assertIn(message, proc.stderr.decode())
        self.assertNotIn(b"ran", proc.stdout)
        self.assertFalse(record["limits"]["enforced"])
        self.assertEqual(self.containers("rl-refused"), [])

    def test_waiver_in_the_seat_file_runs_and_is_recorded(self):
        self.seat.write(self.seat.config_file.read_text() + "waive_unenforced_limits = true\n")
        proc, record = self.run_as_user("--id", "rl-waived", "--", "bash", "-c",
                                        "id -u; grep NoNewPrivs /proc/self/status; grep CapEff /proc/self/status")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout.decode()
        self.assertIn(f"{self.uid}\n", out)  # keep-id: the agent is the caller, not a subordinate uid
        self.assertIn("NoNewPrivs:\t1", out)
        self.assertIn("CapEff:\t0000000000000000", out)
        self.assertEqual(record["mode"], "rootless")
        self.assertFalse(record["limits"]["enforced"])
        self.assertEqual(record["limits"]["waiver"], str(self.seat.config_file))
        self.assertEqual(self.containers("rl-waived"), [])

    def test_no_flag_or_variable_can_waive(self):
        for extra_env in (["ASBX_WAIVE_UNENFORCED_LIMITS=1"], ["AGENT_SANDBOX_WAIVE=true"],
                          ["WAIVE_UNENFORCED_LIMITS=true"], ["CONTAINERS_CONF=/dev/null"]):
            with self.subTest(env=extra_env):
                proc, record = self.run_as_user("--id", "rl-env", "--", "true", extra_env=extra_env)
                self.assertEqual(proc.returncode, CODES["limits_unenforced"], proc.stderr)
                self.assertEqual(self.containers("rl-env"), [])
        proc, _ = self.run_as_user("--waive-unenforced-limits", "--", "true")
        self.assertEqual(proc.returncode, CODES["usage"])


if __name__ == "__main__":
    unittest.main()
