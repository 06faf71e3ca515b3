"""The project's seccomp profile (seccomp/table.h), from inside real sessions.

A probe compiled static on the host (probes/seccomp_probe.c) runs in a session, rootful and
rootless: every call of the table is refused with its errno, while fork, threads and the
socket families real work needs still work. The control runs the same probe in a container made
the same way but under podman's installed default profile: there the nested user namespace and
everything it opens succeed, so the test can fail.
"""
import json
import os
import unittest

from probe_seat import AGENT_UID, ProbeSeat, RootlessProbeSeat, build_static
from probe_seat import control_run as run_in_control

# What the project's profile answers (the table's errno; ENOSYS where the default action answers).
REFUSED = {
    "clone_newuser": "EPERM", "clone_newnet": "EPERM", "clone3": "ENOSYS", "setns": "EPERM",
    "mount": "EPERM", "umount2": "EPERM", "pivot_root": "EPERM", "fsopen": "EPERM", "fsconfig": "EPERM",
    "fsmount": "EPERM", "fspick": "EPERM", "open_tree": "EPERM", "move_mount": "EPERM", "mount_setattr": "EPERM",
    "keyctl": "EPERM", "add_key": "EPERM", "request_key": "EPERM",
    "socket_netlink_netfilter": "EAFNOSUPPORT", "socket_packet": "EAFNOSUPPORT", "socket_alg": "EAFNOSUPPORT",
    "socket_vsock": "EAFNOSUPPORT", "socket_high_bits": "EAFNOSUPPORT",
    "ptrace_traceme": "EPERM", "process_vm_readv": "EPERM", "personality_linux32": "ENOSYS",
    "personality_no_aslr": "ENOSYS", "syslog": "EPERM", "io_uring_setup": "EPERM", "bpf": "EPERM",
    "userfaultfd": "EPERM", "unshare_user_net_mnt": "EPERM",
}
STILL_WORKS = ["fork", "thread", "socket_unix", "socket_inet", "socket_inet6", "socket_netlink_route", "personality_query"]
# Under podman's default, the door the profile closes: a nested user namespace and what it opens.
OPEN_UNDER_DEFAULT = ["clone_newuser", "clone3", "keyctl", "ptrace_traceme", "process_vm_readv", "socket_vsock",
                      "socket_netlink_netfilter", "open_tree", "personality_linux32", "unshare_user_net_mnt",
                      "nested_mount_tmpfs", "nested_fsopen", "nested_socket_packet", "nested_socket_netlink_netfilter"]


# Ordinary work: git (init, commit, log, gc), perl, a shell pipeline with threads and
# subprocesses, ps, name lookup (netlink route for AI_ADDRCONFIG), and the probe's allowed calls.
WORKLOAD = r"""#!/bin/bash
set -euo pipefail
export HOME=$(mktemp -d) GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b
cd "$(mktemp -d)"
git init -q . && for i in $(seq 1 20); do echo "$i" > "f$i"; git add "f$i"; git commit -qm "c$i"; done
git log --oneline | wc -l | grep -qx 20 && git gc -q && git fsck --no-progress
perl -e 'use strict; my %h = map { $_ => $_ * 2 } 1..1000; print scalar(keys %h), "\n"' | grep -qx 1000
seq 1 100000 | sort -r | uniq | wc -l | grep -qx 100000
ps -eo pid,comm >/dev/null
getent ahosts localhost >/dev/null
if command -v python3 >/dev/null; then python3 -c 'import threading, subprocess; t = threading.Thread(target=lambda: None); t.start(); t.join(); subprocess.run(["true"], check=True)'; fi
if command -v node >/dev/null; then node -e 'require("os").networkInterfaces(); require("child_process").execSync("true")'; fi
echo workload ok
"""


def build_probe():
    return build_static("seccomp_probe.c", "-lpthread")


def table(stdout):
    rows = {}
    for line in stdout.decode().splitlines():
        name, _, result = line.partition("\t")
        rows[name] = result
    return rows


def control_run(probe_dir, socket, extra=()):
    """The probe in a container made like a session's, under podman's own default profile."""
    return run_in_control(probe_dir, socket, "/probe/seccomp_probe", extra=extra, tag="seccomp-control")


class SeccompProbe(ProbeSeat):
    SOURCE, LIBS = "seccomp_probe.c", ("-lpthread",)

    def test_every_call_of_the_table_is_refused_rootful(self):
        ws = self.probe_workspace("probe")
        proc, record = self.seat.status("--id", "seccomp-probe", "--workspace", str(ws), "--", "./seccomp_probe")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        got = table(proc.stdout)
        for name, errno in REFUSED.items():
            self.assertEqual(got.get(name), errno, f"{name}: {got.get(name)}")
        for name in STILL_WORKS:
            self.assertEqual(got.get(name), "ok", name)
        self.assertNotIn("nested_mount_tmpfs", got)
        self.assertNoContainer("seccomp-probe")

    def test_ordinary_work_runs_unchanged_under_the_profile(self):
        ws = self.probe_workspace("work")
        script = ws / "work.sh"
        script.write_text(WORKLOAD)
        script.chmod(0o755)
        os.chown(script, AGENT_UID, AGENT_UID)
        proc, record = self.seat.status("--id", "seccomp-work", "--workspace", str(ws), "--", "./work.sh")
        self.assertEqual(proc.returncode, 0, proc.stdout.decode() + proc.stderr.decode())
        self.assertIn(b"workload ok", proc.stdout)
        self.assertEqual(record["outcome"], "exited")

    def test_control_under_podmans_default_the_door_is_open(self):
        proc = control_run(self.probe_dir, self.seat_socket())
        self.assertEqual(proc.returncode, 0, proc.stderr)
        got = table(proc.stdout.encode())
        for name in OPEN_UNDER_DEFAULT:
            self.assertEqual(got.get(name), "ok", f"{name} under podman's default: {got.get(name)}")

    def test_dry_run_names_the_profile_by_digest(self):
        proc = self.seat.run("--dry-run", "--", "true")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        plan = json.loads(proc.stdout)
        s = plan["seccomp"]
        self.assertEqual(s["base"], "/usr/share/containers/seccomp.json")
        self.assertRegex(s["digest"], r"^sha256:[0-9a-f]{64}$")
        self.assertEqual(plan["create_body"]["seccomp_profile_path"],
                         f"{self.seat.dir}/run/seccomp-{plan['session_id']}-{s['digest'][7:]}.json")

    def seat_socket(self):
        from harness import SOCKET
        return SOCKET


class SeccompProbeRootless(RootlessProbeSeat):
    SOURCE, LIBS = "seccomp_probe.c", ("-lpthread",)

    def test_every_call_of_the_table_is_refused_rootless(self):
        proc, record = self.run_as_user("--id", "seccomp-probe-rl", "--workspace", str(self.ws), "--", "./seccomp_probe")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.assertEqual(record["mode"], "rootless")
        got = table(proc.stdout)
        for name, errno in REFUSED.items():
            self.assertEqual(got.get(name), errno, f"{name}: {got.get(name)}")
        for name in STILL_WORKS:
            self.assertEqual(got.get(name), "ok", name)

    def test_control_rootless_under_podmans_default_the_door_is_open(self):
        os.chmod(self.probe_dir, 0o755)
        proc = control_run(self.probe_dir, self.socket, extra=("--userns=keep-id",))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        got = table(proc.stdout.encode())
        for name in OPEN_UNDER_DEFAULT:
            self.assertEqual(got.get(name), "ok", f"{name} under podman's default: {got.get(name)}")


if __name__ == "__main__":
    unittest.main()
