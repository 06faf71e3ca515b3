"""The second pass over the seccomp profile (issue 34): the holes a hostile pass found, each closed
in the table (seccomp/table.cc, seccomp/profile.cc) and shown from inside real sessions.

A probe compiled static on the host (probes/surface_probe.c) runs in a session, rootful and
rootless: the i386 and x32 ABIs die with SIGSYS, AF_INET/AF_INET6 only by stream/TCP and
datagram/UDP/ICMP, socketpair AF_UNIX only, MSG_OOB refused, modify_ldt, memfd_secret and
pidfd_getfd refused, while ordinary sockets still work. The CONTROL runs the same probe in a
container made the same way under podman's installed default profile: there each call reaches
the kernel. The masks of /proc/key-users, /proc/config.gz and /sys/kernel/notes likewise.
"""
import functools
import os
import subprocess
import unittest

from harness import SOCKET
from probe_seat import AGENT_UID, ProbeSeat, RootlessProbeSeat
from probe_seat import control_run as run_in_control

# Under the project's profile.
REFUSED = {
    "i386_getpid": "SIGSYS", "x32_getpid": "SIGSYS",
    "inet_mptcp": "EPROTONOSUPPORT", "inet6_mptcp": "EPROTONOSUPPORT", "inet_udplite": "EPROTONOSUPPORT",
    "inet_tcp_high_bits": "EPROTONOSUPPORT",
    "inet_sock_packet": "ESOCKTNOSUPPORT", "inet_raw": "ESOCKTNOSUPPORT", "inet_seqpacket_sctp": "ESOCKTNOSUPPORT",
    "socketpair_netlink": "EAFNOSUPPORT",
    "send_oob": "EOPNOTSUPP", "sendmsg_oob": "EOPNOTSUPP", "recv_oob": "EOPNOTSUPP",
    "modify_ldt": "ENOSYS", "memfd_secret": "ENOSYS", "pidfd_getfd": "EPERM",
    "setsockopt_tcp_ulp": "ENOPROTOOPT", "setsockopt_udp_encap": "ENOPROTOOPT",
    "setsockopt_udp_encap_high_bits": "ENOSYS",  # no allow matches: the default action
}
STILL_WORKS = ["inet_tcp", "inet_udp", "inet6_tcp", "inet6_udp", "socketpair_unix", "send_plain",
               "setsockopt_nodelay", "setsockopt_reuseaddr"]
# Under podman's default: each reaches the kernel (ok, or the kernel's own answer after the filter).
OPEN_UNDER_DEFAULT = {
    "i386_getpid": "ok", "x32_getpid": "ENOSYS",  # no x32 in this kernel: it answers, the filter let it by
    "inet_mptcp": "ok", "inet6_mptcp": "ok", "inet_udplite": "ok", "inet_tcp_high_bits": "ok",
    "inet_sock_packet": "EPERM", "inet_raw": "EPERM",  # packet_create/inet_create's capability check ran
    "socketpair_netlink": "EOPNOTSUPP",  # netlink_create ran
    "send_oob": "ok", "sendmsg_oob": "ok", "recv_oob": "ok",
    "modify_ldt": "ok", "memfd_secret": "ok", "pidfd_getfd": "ok",
    "setsockopt_tcp_ulp": "ENOENT",  # tcp_set_ulp ran: no "tls" module in this kernel
    "setsockopt_udp_encap": "ok", "setsockopt_udp_encap_high_bits": "ok",  # the kernel truncated it to SOL_UDP
}
MASKED = ["/proc/key-users", "/sys/kernel/notes"] + (["/proc/config.gz"] if os.path.exists("/proc/config.gz") else [])
READ_MASKED = "for f in %s; do printf '%%s\\t%%s\\n' \"$f\" \"$(head -c 64 \"$f\" | wc -c)\"; done" % " ".join(MASKED)


# The sockets real work opens, over loopback: node's http, python's TCP and UDP, bun's server and
# fetch, a compiler and make (nothing here may trip the new rules; the session ends 0).
SOCKET_WORK = r"""#!/bin/bash
set -euo pipefail
cd "$(mktemp -d)"
node -e 'const http=require("http");const s=http.createServer((q,r)=>r.end("ok")).listen(0,"127.0.0.1",()=>{http.get("http://127.0.0.1:"+s.address().port,r=>{r.on("data",d=>{console.log("node http "+d);s.close()})})})'
python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
c = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.sendall(b"x"); assert a.recv(1) == b"x"
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP); u.bind(("127.0.0.1", 0))
v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); v.sendto(b"y", u.getsockname()); assert u.recv(1) == b"y"
socket.socket(socket.AF_INET6, socket.SOCK_STREAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC).close()
print("python sockets ok")'
if command -v bun >/dev/null; then
  bun -e 'const s=Bun.serve({port:0,hostname:"127.0.0.1",fetch(){return new Response("ok")}});console.log("bun "+await (await fetch("http://127.0.0.1:"+s.port)).text());s.stop()'
fi
echo 'int main(void){return 0;}' > t.c && cc t.c -o t && ./t
printf 'all:
	true
' > Makefile && make -s
echo socket work ok
"""


@functools.lru_cache(maxsize=None)
def host_i386(probe):
    """What this host's kernel does with an i386 call (`int 0x80`) outside any container: "ok", or
    "SIGSEGV" where the kernel takes no i386 call at all (a VM kernel seen here): then no filter is
    ever reached, the hole does not exist, and the i386 rows expect the kernel's own answer."""
    # The probe refuses to run outside a session; its i386 mode makes that one call and nothing else.
    proc = subprocess.run([str(probe), "i386"], capture_output=True, timeout=30,
                          env=dict(os.environ, AGENT_SANDBOX_SESSION="host-check"))
    return {0: "ok", -11: "SIGSEGV"}.get(proc.returncode, f"exit {proc.returncode}")


def i386_rows(probe, rows, answer):
    """`rows` with the i386 row the host's kernel decides (`answer` where it takes i386 calls)."""
    return dict(rows, i386_getpid=answer if host_i386(probe) == "ok" else host_i386(probe))


def table(text):
    return dict(line.split("\t", 1) for line in text.splitlines() if "\t" in line)


def control_run(probe_dir, socket, *argv, extra=()):
    return run_in_control(probe_dir, socket, *argv, extra=extra, tag="surface-control")


class Surface(ProbeSeat):
    SOURCE = "surface_probe.c"

    def assertClosed(self, got):
        for name, errno in i386_rows(self.probe_dir / "surface_probe", REFUSED, "SIGSYS").items():
            self.assertEqual(got.get(name), errno, f"{name}: {got.get(name)}")
        for name in STILL_WORKS:
            self.assertEqual(got.get(name), "ok", name)
        self.assertNotIn(got.get("inet_icmp"), ("EPROTONOSUPPORT", "ESOCKTNOSUPPORT"))  # the tripwire's ping

    def test_the_holes_are_closed_rootful(self):
        ws = self.probe_workspace("probe")
        proc, record = self.seat.status("--id", "surface-probe", "--workspace", str(ws), "--", "./surface_probe")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.assertClosed(table(proc.stdout.decode()))
        self.assertEqual(record["outcome"], "exited")
        self.assertNoContainer("surface-probe")

    def test_the_sockets_real_work_opens_still_work(self):
        ws = self.probe_workspace("work")
        script = ws / "work.sh"
        script.write_text(SOCKET_WORK)
        script.chmod(0o755)
        os.chown(script, AGENT_UID, AGENT_UID)
        proc, record = self.seat.status("--id", "surface-work", "--workspace", str(ws), "--", "./work.sh")
        self.assertEqual(proc.returncode, 0, proc.stdout.decode() + proc.stderr.decode())
        self.assertIn(b"node http ok", proc.stdout)
        self.assertIn(b"python sockets ok", proc.stdout)
        self.assertIn(b"socket work ok", proc.stdout)
        self.assertEqual((record["outcome"], record["warnings"]), ("exited", []))

    def test_control_under_podmans_default_each_reaches_the_kernel(self):
        proc = control_run(self.probe_dir, SOCKET, "/probe/surface_probe")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        got = table(proc.stdout)
        for name, answer in i386_rows(self.probe_dir / "surface_probe", OPEN_UNDER_DEFAULT, "ok").items():
            self.assertEqual(got.get(name), answer, f"{name} under podman's default: {got.get(name)}")

    def test_an_i386_call_ends_the_agent_with_159_and_the_record_says_why(self):
        ws = self.probe_workspace("i386")
        proc, record = self.seat.status("--id", "surface-i386", "--workspace", str(ws), "--", "./surface_probe", "i386")
        if host_i386(self.probe_dir / "surface_probe") == "SIGSEGV":  # no i386 entry: the kernel kills it first
            self.assertEqual((proc.returncode, record["agent_exit_code"]), (139, 139), proc.stdout + proc.stderr)
            return
        self.assertEqual(proc.returncode, 159, proc.stdout + proc.stderr)
        self.assertNotIn(b"i386_self", proc.stdout)  # killed at the call: it never returned
        self.assertEqual((record["outcome"], record["agent_exit_code"], record["exit_code"]), ("exited", 159, 159))
        self.assertTrue(any("exit code 159 is a process killed by SIGSYS" in w for w in record["warnings"]),
                        record["warnings"])
        self.assertIn(b"exit code 159 is a process killed by SIGSYS", proc.stderr)

    def test_control_an_i386_call_under_podmans_default_returns(self):
        proc = control_run(self.probe_dir, SOCKET, "/probe/surface_probe", "i386")
        if host_i386(self.probe_dir / "surface_probe") == "SIGSEGV":
            self.assertEqual(proc.returncode, 139, proc.stderr)
            return
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(table(proc.stdout).get("i386_self"), "ok")

    def test_host_wide_kernel_facts_are_masked(self):
        proc, record = self.seat.status("--id", "surface-masks", "--workspace", str(self.probe_workspace("m")), "--",
                                        "sh", "-c", READ_MASKED)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.assertEqual(table(proc.stdout.decode()), {path: "0" for path in MASKED})

    def test_control_without_the_masks_they_are_readable(self):
        proc = control_run(self.probe_dir, SOCKET, "sh", "-c", READ_MASKED)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        got = table(proc.stdout)
        for path in MASKED:
            self.assertNotEqual(got.get(path), "0", path)


class SurfaceRootless(RootlessProbeSeat):
    SOURCE = "surface_probe.c"

    def test_the_holes_are_closed_rootless(self):
        proc, _ = self.run_as_user("--id", "surface-probe-rl", "--workspace", str(self.ws), "--", "./surface_probe")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        Surface.assertClosed(self, table(proc.stdout.decode()))

    def test_control_rootless_under_podmans_default_each_reaches_the_kernel(self):
        proc = control_run(self.probe_dir, self.socket, "/probe/surface_probe", extra=("--userns=keep-id",))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        got = table(proc.stdout)
        rows = i386_rows(self.probe_dir / "surface_probe", OPEN_UNDER_DEFAULT, "ok")
        for name in ("i386_getpid", "inet_mptcp", "send_oob", "modify_ldt", "memfd_secret", "pidfd_getfd"):
            self.assertEqual(got.get(name), rows[name], f"{name} under podman's default: {got.get(name)}")


if __name__ == "__main__":
    unittest.main()
