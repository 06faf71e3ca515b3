"""The NoNewPrivs preflight on a real systemd seat host (pf-1, booted by
scripts/test-prep.d/40-preflight-seat.sh), over real ssh: the systemd-run --user re-exec,
its failure modes, and `sandbox-run doctor`."""
import json
import os
import pathlib
import shlex
import subprocess
import time
import unittest

from harness import CODES, CONTAINERS_CONF, unavailable

SEAT = "pf-1"
STATE = pathlib.Path(os.environ.get("ASBX_SEAT_STATE", "/var/lib/agent-sandbox/seats"))
SSH_CONFIG = STATE / "ssh_config"
WHY = ("NoNewPrivs is 1, so rootless podman cannot map its user namespace here and the launcher must re-exec "
       "through systemd-run --user, but ")
NNP = "setpriv --no-new-privs "


def ssh(command, timeout=240, input=b""):
    return subprocess.run(["ssh", "-F", str(SSH_CONFIG), SEAT, command], input=input, capture_output=True,
                          timeout=timeout)


def as_root(*args):
    env = dict(os.environ, CONTAINERS_CONF=CONTAINERS_CONF)
    return subprocess.run(["podman", "exec", SEAT, *args], capture_output=True, text=True, env=env, check=True)


def quote(args):
    return " ".join(shlex.quote(a) for a in args)


class Preflight(unittest.TestCase):
    def setUp(self):
        if not (STATE / "ssh_config.d" / f"{SEAT}.conf").exists():
            unavailable(self, f"seat {SEAT} not booted (scripts/test-prep.d/40-preflight-seat.sh)")
        if ssh("true", timeout=30).returncode != 0:
            unavailable(self, f"seat {SEAT} does not answer ssh")

    def launch(self, session_id, command, nnp=True, extra=""):
        """sandbox-run on the seat; returns (process, status record or None)."""
        status = f"/tmp/{session_id}.json"
        line = (f"rm -f {status}; cd /tmp && {NNP if nnp else ''}sandbox-run --status-file {status} --id {session_id} "
                f"{extra} -- {quote(command)}")
        proc = ssh(line + f"; rc=$?; echo; echo '=====' >&2; cat {status} >&2 2>/dev/null; exit $rc")
        err, _, record = proc.stderr.decode(errors="replace").rpartition("=====\n")
        proc.stderr = err.encode()
        proc.stdout = proc.stdout[:-1] if proc.stdout.endswith(b"\n") else proc.stdout
        return proc, (json.loads(record) if record.strip() else None)

    def assertNothingLeft(self, session_id):
        out = ssh(f"podman ps -aq --filter label=agent-sandbox.session={session_id}; "
                  f"systemctl --user list-units --all --no-legend 'asbx-run-{session_id}*'").stdout.decode()
        self.assertEqual(out.strip(), "", "container or transient unit left behind")

    def assertPreflightError(self, proc, record, kind, message):
        self.assertEqual(proc.returncode, CODES[kind], proc.stderr)
        self.assertEqual(record["error_kind"], kind)
        self.assertEqual(record["message"], message)
        self.assertIn(message, proc.stderr.decode())

    def drop_pause(self):
        ssh("systemctl --user stop podman.socket podman.service; "
            "p=$(cat $XDG_RUNTIME_DIR/libpod/tmp/pause.pid 2>/dev/null) && kill $p; sleep 0.3; true")

    def test_nnp0_runs_here_without_reexec(self):
        proc, record = self.launch("pf-t-nnp0", ["sh", "-c", "echo hi"], nnp=False)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b"hi\n")
        self.assertEqual(record["preflight"], {"no_new_privs": 0, "reexecd": False, "unit": None})
        self.assertNothingLeft("pf-t-nnp0")

    def test_nnp1_reexecs_where_plain_podman_fails(self):
        self.drop_pause()
        plain = ssh(NNP + "podman run --rm localhost/agent-sandbox:latest true")
        self.assertEqual(plain.returncode, 1)
        self.assertIn(b"newuidmap: write to uid_map failed: Operation not permitted", plain.stderr)
        self.drop_pause()
        proc, record = self.launch("pf-t-nnp1", ["sh", "-c", "grep NoNewPrivs /proc/self/status"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b"NoNewPrivs:\t1\n")  # the container's own, always set
        self.assertEqual(record["outcome"], "exited")
        self.assertEqual(record["preflight"], {"no_new_privs": 0, "reexecd": True, "unit": "asbx-run-pf-t-nnp1.service"})
        print("\nNNP=1 session status record:\n" + json.dumps(record, indent=2))
        self.assertNothingLeft("pf-t-nnp1")

    def test_arguments_and_exit_codes_round_trip(self):
        corpus = ["plain", "two words", "  lead and trail  ", "", "'single'", '"double"', "$HOME", "${HOME}", "$$",
                  "a$", "back\\slash", "\\$x", "new\nline", "tab\there", "grüße", "日本語", "emoji 😀", "%n %h %%",
                  ";&|<>*?~`#!", "-", "--", "--id"]
        proc, record = self.launch("pf-t-args", ["sh", "-c", 'printf "%s\\0" "$@"', "sh", *corpus])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode().split("\0")[:-1], corpus)
        self.assertTrue(record["preflight"]["reexecd"])
        for code in (0, 3, 42, 255):
            proc, record = self.launch(f"pf-t-exit{code}", ["sh", "-c", f"cat; exit {code}"])
            self.assertEqual(proc.returncode, code, proc.stderr)
            self.assertEqual(record["agent_exit_code"], code)

    def test_stdin_reaches_the_agent(self):
        proc = ssh(NNP + "sandbox-run --id pf-t-stdin -- sh -c 'wc -c; exit 7'", input=b"x" * 100000)
        self.assertEqual(proc.returncode, 7, proc.stderr)
        self.assertEqual(proc.stdout.strip(), b"100000")

    def test_linger_off_fails_naming_enable_linger(self):
        as_root("loginctl", "disable-linger", "seat")
        self.addCleanup(self.restore_linger)
        proc, record = self.launch("pf-t-linger", ["true"])
        self.assertPreflightError(proc, record, "seat_preflight", WHY + "user seat does not linger (no "
                                  "/var/lib/systemd/linger/seat); fix: loginctl enable-linger seat")
        self.assertNothingLeft("pf-t-linger")
        doctor = ssh("sandbox-run doctor")
        self.assertEqual(doctor.returncode, CODES["seat_preflight"])
        self.assertIn(b"FAIL  linger        user seat does not linger\n"
                      b"                    fix: loginctl enable-linger seat\n", doctor.stdout)

    def restore_linger(self):
        as_root("loginctl", "enable-linger", "seat")
        for _ in range(100):
            if ssh("test -S /run/user/1000/bus").returncode == 0:
                return
            time.sleep(0.1)

    def test_bus_missing_fails_in_the_same_family(self):
        proc = ssh("mv /run/user/1000/bus /run/user/1000/bus.away; " + NNP +
                   "sandbox-run --id pf-t-bus -- true; rc=$?; mv /run/user/1000/bus.away /run/user/1000/bus; exit $rc")
        message = WHY + ("the user bus /run/user/1000/bus is missing; fix: install dbus-user-session, then "
                         "loginctl enable-linger seat")
        self.assertEqual(proc.returncode, CODES["seat_preflight"], proc.stderr)
        self.assertEqual(proc.stderr.decode(), "sandbox-run: " + message + "\n")
        proc = ssh("env XDG_RUNTIME_DIR=/tmp " + NNP + "sandbox-run --id pf-t-bus -- true")
        self.assertEqual(proc.returncode, CODES["seat_preflight"], proc.stderr)
        self.assertIn(b"XDG_RUNTIME_DIR is '/tmp', not /run/user/1000; fix:", proc.stderr)
        self.assertNothingLeft("pf-t-bus")

    def test_systemd_run_failure_has_its_own_code(self):
        # A unit of that name already runs: systemd-run cannot start ours.
        ssh("systemd-run --user --quiet --unit=asbx-run-pf-t-dup sleep 120")
        self.addCleanup(ssh, "systemctl --user stop asbx-run-pf-t-dup.service")
        proc, record = self.launch("pf-t-dup", ["sh", "-c", "echo ran"])
        self.assertPreflightError(proc, record, "systemd_run_failed", "systemd-run --user could not start the transient "
                                  "unit asbx-run-pf-t-dup.service (systemd-run exited 1)")
        self.assertNotIn(b"ran", proc.stdout)
        self.assertEqual(ssh("podman ps -aq --filter label=agent-sandbox.session=pf-t-dup").stdout, b"")

    def test_sigterm_stops_the_unit_and_the_container(self):
        script = (f"{NNP}sandbox-run --id pf-t-term -- sleep 300 & pid=$!; "
                  "for i in $(seq 200); do [ -n \"$(podman ps -q --filter label=agent-sandbox.session=pf-t-term)\" ] && break; sleep 0.2; done; "
                  "systemctl --user is-active --quiet asbx-run-pf-t-term.service && echo unit-active; "
                  "kill -TERM $pid; wait $pid; echo rc=$?")
        proc = ssh(script)
        out = proc.stdout.decode()
        self.assertIn("unit-active\n", out, proc.stderr)
        self.assertIn("rc=143\n", out, proc.stderr)
        self.assertNothingLeft("pf-t-term")

    def test_recursion_guard(self):
        # A user manager that sets NoNewPrivileges= on every service: the re-exec'd launcher still sees 1.
        ssh("mkdir -p ~/.config/systemd/user/service.d && printf '[Service]\\nNoNewPrivileges=yes\\n' "
            ">~/.config/systemd/user/service.d/asbx-test-nnp.conf && systemctl --user daemon-reload")
        self.addCleanup(ssh, "rm -f ~/.config/systemd/user/service.d/asbx-test-nnp.conf; systemctl --user daemon-reload")
        proc, record = self.launch("pf-t-loop", ["sh", "-c", "echo ran"])
        self.assertPreflightError(proc, record, "reexec_loop", "NoNewPrivs is still 1 in the launcher that systemd-run "
                                  "--user started; refusing to re-exec again (does the user manager set "
                                  "NoNewPrivileges= for its services?)")
        self.assertNotIn(b"ran", proc.stdout)
        self.assertNothingLeft("pf-t-loop")

    def test_doctor_on_a_healthy_seat(self):
        proc = ssh("sandbox-run doctor")
        self.assertEqual(proc.returncode, 0, proc.stdout)
        print("\n" + proc.stdout.decode())
        report = json.loads(ssh("sandbox-run doctor --json").stdout)
        self.assertTrue(report["ok"])
        names = [c["name"] for c in report["checks"]]
        self.assertIn(f"\n{len(names)} passed, 0 failed\n".encode(), proc.stdout)
        head = ["seat_config", "no_new_privs", "linger", "runtime_dir", "user_bus", "podman_socket", "image",
                "image_contract", "image_tools", "subuid", "subgid", "cgroup", "limits"]
        self.assertEqual(names[:len(head)], head)
        rest = names[len(head):]
        disks = rest.index("cred:codex") if "cred:codex" in rest else -1
        self.assertGreaterEqual(disks, 2, names)  # one line per workspace root and git root, then the pool's
        self.assertEqual(set(rest[:disks - 1]), {"disk"})
        self.assertEqual(rest[disks - 1], "pool")  # the warm pool: off, or its members (docs/LIFECYCLE.md)
        # the package's credential table: one line per runtime, its credential and time left
        self.assertEqual(rest[disks:disks + 3], ["cred:codex", "cred:claude", "cred:cursor-agent"])
        # gVisor: "runsc" (installed or not), then its platform when it is
        self.assertIn(rest[disks + 3:-2], (["runsc"], ["runsc", "runsc_platform"]))
        # the seat kernel's knobs seccomp cannot stand in for (warnings, never a failure)
        self.assertEqual(rest[-2:], ["ldisc_autoload", "ptrace_scope"])


if __name__ == "__main__":
    unittest.main()
