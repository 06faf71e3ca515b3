"""gVisor on a rootful seat installed from the package (docs/ISOLATION.md "A seat installed from the package").

On the provisioned seat rd-1 (scripts/test-prep.d/40-remote-seats.sh), as its root: the package's
`agent-sandbox-runsc.socket` starts a podman service whose runtime is the packaged runsc wrapper; a
session of a seat.toml with `runtime = "runsc"` runs there with its refusals read from the sentry's
log (the packaged wrapper's FIFO path); and the seat's other podman (Debian's podman.socket) knows the
wrappers through the package's containers.conf.d drop-in, so its `rm -f` of a gVisor session's
container ends the sandbox — the CONTROL without the drop-in leaves the sandbox running. The
package's prerm stops and disables the service an admin enabled when the package is removed, not
when it is upgraded.
"""
import json
import os
import subprocess
import time
import unittest

from harness import BASE_IMAGE, CONTAINERS_CONF, unavailable

PREFIX = os.environ.get("ASBX_REMOTE_PREFIX", "rd")
SEAT = f"{PREFIX}-1"
ENV = dict(os.environ, CONTAINERS_CONF=CONTAINERS_CONF)
RUNSC_SOCK = "/run/podman/podman-runsc.sock"
RUNC_SOCK = "/run/podman/podman.sock"
DROP_IN = "/etc/containers/containers.conf.d/50-agent-sandbox-runsc.conf"
WRAPPER = "/usr/libexec/agent-sandbox/runsc-ptrace"


def as_root(command, timeout=180, **kw):
    return subprocess.run(["podman", "exec", "-i", SEAT, "sh", "-c", command], capture_output=True, text=True,
                          timeout=timeout, env=ENV, **kw)


def api(sock, path, method="GET"):
    out = as_root(f"curl -s -w '\\n%{{http_code}}' -X {method} --unix-socket {sock} 'http://d/v4.0.0/libpod{path}'")
    body, _, code = out.stdout.rpartition("\n")
    return int(code or 0), body


class PackagedGvisorSeat(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.error = None
        ready = as_root("command -v runsc && command -v agent-sandbox && test -e /lib/systemd/system/agent-sandbox-runsc.socket")
        if ready.returncode != 0:
            cls.error = f"{SEAT} has no runsc or no package with the runsc socket: {ready.stdout}{ready.stderr}"
            return
        if as_root(f"podman image exists {BASE_IMAGE}").returncode != 0:  # root's store on the seat: the small image
            save = subprocess.Popen(["podman", "save", BASE_IMAGE], stdout=subprocess.PIPE, env=ENV)
            load = as_root("podman load -q", stdin=save.stdout, timeout=600)
            save.wait()
            if load.returncode != 0:
                cls.error = "cannot load the image as the seat's root: " + load.stderr
                return
        as_root("mkdir -p /root/.config/agent-sandbox /root/ws && "
                f"printf 'image = \"{BASE_IMAGE}\"\\nruntime = \"runsc\"\\n' >/root/.config/agent-sandbox/seat.toml")
        # podman.service (socket-activated) reads containers.conf.d when it starts: one started before
        # the package was installed would not know the wrappers yet.
        start = as_root("systemctl stop podman.service; systemctl start agent-sandbox-runsc.socket && "
                        "systemctl is-active agent-sandbox-runsc.socket")
        if start.returncode != 0:
            cls.error = "agent-sandbox-runsc.socket did not start: " + start.stdout + start.stderr

    @classmethod
    def tearDownClass(cls):
        as_root("rm -rf /root/.config/agent-sandbox /root/ws /root/bg.*; systemctl stop agent-sandbox-runsc.socket "
                "agent-sandbox-runsc.service")

    def setUp(self):
        if self.error:
            unavailable(self, self.error)

    def test_the_packaged_socket_starts_a_service_whose_runtime_is_the_wrapper(self):
        code, body = api(RUNSC_SOCK, "/info")
        self.assertEqual(code, 200, body)
        runtime = json.loads(body)["host"]["ociRuntime"]
        self.assertEqual((runtime["name"], runtime["path"]), ("runsc-ptrace", WRAPPER))
        self.assertEqual(as_root("systemctl is-enabled agent-sandbox-runsc.socket").stdout.strip(), "disabled")

    def test_a_session_of_a_seat_requiring_runsc_runs_under_gvisor_with_its_refusals_on_record(self):
        # unshare(2) is refused whatever its arguments: the sentry logs it, the launcher counts it.
        out = as_root("cd /root/ws && agent-sandbox --status-file /root/ws.status -- sh -c 'uname -r; unshare -U true; "
                      "exit 0' >/root/ws.out 2>/root/ws.err; echo $?; cat /root/ws.status")
        code, _, record = out.stdout.partition("\n")
        self.assertEqual(code, "0", out.stderr)
        status = json.loads(record)
        self.assertEqual(status["isolation"]["wall"], "gvisor")
        self.assertEqual(status["isolation"]["required_by"], "/root/.config/agent-sandbox/seat.toml")
        self.assertEqual(status["seccomp"]["source"], "sentry_log")  # the packaged wrapper opened the FIFO
        self.assertEqual((status["seccomp"]["first"], status["seccomp"]["calls"].get("unshare")), ("unshare", 1),
                         json.dumps(status["seccomp"]))
        self.assertIn("agent-sandbox: seccomp: refused unshare", as_root("cat /root/ws.err").stdout)
        self.assertEqual(as_root("head -n1 /root/ws.out").stdout, "4.4.0\n")

    def start_background_session(self, session):
        as_root(f"rm -f /root/bg.*; (cd /root/ws && agent-sandbox --id {session} -- sleep 300 >/root/bg.out 2>&1; "
                "echo $? >/root/bg.rc) </dev/null >/dev/null 2>&1 &")
        for _ in range(100):
            _, body = api(RUNSC_SOCK, "/containers/json")
            running = [c["Id"] for c in json.loads(body or "[]")
                       if c["State"] == "running" and c["Labels"].get("agent-sandbox.session") == session]
            if running:
                return running[0]
            time.sleep(0.2)
        self.fail("the background gVisor session did not start: " + as_root("cat /root/bg.out").stdout)

    def sandboxes(self):
        """The ids of the sandboxes runsc runs on the seat (stopped ones' state left aside)."""
        rows = as_root("runsc --root /var/run/runsc list").stdout.splitlines()[1:]
        return [r.split()[0] for r in rows if len(r.split()) > 2 and r.split()[2] == "running"]

    def session_ended(self):
        for _ in range(100):
            if as_root("test -s /root/bg.rc").returncode == 0:
                return as_root("cat /root/bg.rc").stdout
            time.sleep(0.2)
        return None

    def test_the_seats_other_podman_removes_a_gvisor_sessions_container(self):
        cid = self.start_background_session("pkg-bg-1")
        self.assertIn(cid, self.sandboxes())
        code, body = api(RUNC_SOCK, f"/containers/{cid}?force=true", "DELETE")
        self.assertEqual(code, 200, body)
        self.assertEqual(self.session_ended(), "143\n")
        self.assertNotIn(cid, self.sandboxes())

    def test_control_without_the_drop_in_the_other_podman_leaves_the_sandbox_running(self):
        as_root(f"mv {DROP_IN} /root/drop-in.conf && systemctl stop podman.service")
        self.addCleanup(as_root, f"mv /root/drop-in.conf {DROP_IN}; systemctl stop podman.service")
        cid = self.start_background_session("pkg-bg-2")
        code, body = api(RUNC_SOCK, f"/containers/{cid}?force=true", "DELETE")
        self.assertEqual(code, 500, body)
        self.assertIn("runsc-ptrace", body)
        self.assertIn(cid, self.sandboxes())  # still running, out of that podman's reach
        # What THREATS describes next: the runsc service then drops the half-stopped container from
        # its list while runsc still runs the sandbox — the test ends it with runsc itself.
        self.addCleanup(as_root, f"runsc --root /var/run/runsc delete -force {cid}")
        api(RUNSC_SOCK, f"/containers/{cid}?force=true", "DELETE")

    def units(self):  # the socket's enablement and state, then the service's (it ends 5 s after its last call)
        return as_root("systemctl is-enabled agent-sandbox-runsc.socket; systemctl is-active agent-sandbox-runsc.socket "
                       "agent-sandbox-runsc.service").stdout.split()

    def test_removal_stops_and_disables_the_service_an_admin_enabled_and_an_upgrade_leaves_it(self):
        # The package's own prerm as dpkg runs it (not the removal itself: the other tests share this seat).
        self.addCleanup(as_root, "systemctl disable agent-sandbox-runsc.socket; systemctl start agent-sandbox-runsc.socket")
        as_root("systemctl enable --now agent-sandbox-runsc.socket")
        self.assertEqual(self.units()[:2], ["enabled", "active"])
        upgrade = as_root("/var/lib/dpkg/info/agent-sandbox.prerm upgrade 0.1.0-1")
        self.assertEqual((upgrade.returncode, self.units()[:2]), (0, ["enabled", "active"]), upgrade.stderr)
        as_root(f"curl -s --unix-socket {RUNSC_SOCK} http://d/_ping")  # the service itself running too
        remove = as_root("/var/lib/dpkg/info/agent-sandbox.prerm remove")
        self.assertEqual((remove.returncode, self.units()), (0, ["disabled", "inactive", "inactive"]), remove.stderr)

if __name__ == "__main__":
    unittest.main()
