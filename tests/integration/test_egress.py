"""The egress wall (docs/EGRESS.md): a session with --egress keeps podman's `none` network (only
`lo`); the only way out is the door the launcher opens into that namespace, 127.0.0.1:3128, behind
which the launcher's proxy allows exactly the listed names.

The upstream is the mock model server in a network namespace this test creates, joined to the
seat by a veth pair of its own (10.77.N.0/30): never anything outside this machine. The seat config
maps api.mock.test to the mock's address (`hosts`) and excepts that one address (`private_ok`).
curl is the host's own binary with its libraries, copied into the workspace (the image has none)."""
import json
import os
import pathlib
import pwd
import shutil
import subprocess
import sys
import tempfile
import unittest

from harness import (LAUNCHER, LOCAL_ROOTLESS_SEAT, ROOT, drop_veth_namespace, free_veth_slot, readable_copies, session_containers, unavailable,
                     without_gvisor_lines,
                     serve_in_namespace, stop_server, veth_namespace)
import test_agents_e2e as e2e

sys.path.insert(0, str(ROOT / "tests" / "mock_model"))
SERVER = ROOT / "tests" / "mock_model" / "server.py"
DOOR = "http://127.0.0.1:3128"
ROOTLESS_USER = "asbx-rootless"


class Upstream:
    """The mock model server on a veth address inside a namespace of the test's own."""

    def __init__(self, tag, command="true", final="Done."):
        n = free_veth_slot("egh")
        self.name = "eg-%s-%d" % (tag, n)
        self.host_if, self.ns_if = "egh%d" % n, "egn%d" % n
        self.address = "10.77.%d.2" % n
        self.gateway = "10.77.%d.1" % n
        self.dir = pathlib.Path(subprocess.check_output(["mktemp", "-d", "/tmp/asbx-egress-XXXXXX"], text=True).strip())
        self.log = self.dir / "requests.jsonl"
        self.command, self.final = command, final
        self.proc = None

    def start(self):
        veth_namespace(self.name, self.host_if, self.ns_if, self.gateway, self.address)
        self.proc, self.port = serve_in_namespace(
            self.name, [sys.executable, str(SERVER), "--host", self.address, "--port", "0", "--command", self.command,
                        "--final", self.final, "--log", str(self.log), "--max-seconds", "300"],
            "mock", stderr=subprocess.DEVNULL)
        return self

    def stop(self):
        if self.proc:
            stop_server(self.proc)
        drop_veth_namespace(self.name, self.host_if)
        shutil.rmtree(self.dir, ignore_errors=True)

    def requests(self):
        return [json.loads(l) for l in self.log.read_text().splitlines() if l] if self.log.exists() else []

    @property
    def base_url(self):
        return "http://api.mock.test:%d" % self.port

    def seat_egress(self):
        return ('\n[egress]\nhosts = { "api.mock.test" = "%s" }\nprivate_ok = ["%s/32"]\n' % (self.address, self.address))


def stage_curl(workspace):
    """The host's curl and its libraries (not the C library's own, the image has those)."""
    tools = workspace / ".tools"
    tools.mkdir()
    shutil.copy2("/usr/bin/curl", tools / "curl")
    for line in subprocess.check_output(["ldd", "/usr/bin/curl"], text=True).splitlines():
        parts = line.split("=>")
        if len(parts) != 2 or not parts[1].strip().startswith("/"):
            continue
        lib = parts[1].split()[0]
        if not any(os.path.basename(lib).startswith(p) for p in ("libc.so", "libm.so", "libpthread", "libdl", "librt", "ld-linux")):
            shutil.copy2(lib, tools / os.path.basename(lib))
    return "env LD_LIBRARY_PATH=/sandbox/workspaces/%s/.tools /sandbox/workspaces/%s/.tools/curl" % (workspace.name, workspace.name)


def client_hello(name):
    """A TLS 1.2 ClientHello asking for `name`, as printf escapes."""
    n = name.encode()
    entry = b"\x00" + len(n).to_bytes(2, "big") + n
    lst = len(entry).to_bytes(2, "big") + entry
    ext = b"\x00\x00" + len(lst).to_bytes(2, "big") + lst
    body = b"\x03\x03" + b"r" * 32 + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00" + len(ext).to_bytes(2, "big") + ext
    hs = b"\x01" + len(body).to_bytes(3, "big") + body
    rec = b"\x16\x03\x01" + len(hs).to_bytes(2, "big") + hs
    return "".join("\\x%02x" % b for b in rec)


class EgressSeat(e2e.AgentSeat):
    def setUp(self):
        super().setUp()
        self.up = Upstream("t")
        try:
            self.up.start()
        except Exception as e:  # noqa: BLE001
            self.up.stop()
            unavailable(self, "cannot build the test's network namespace: %s" % e)
        self.addCleanup(self.up.stop)
        self.seat.write(self.seat.config_file.read_text() + self.up.seat_egress())

    def workspace(self, name):
        ws = self.seat.workspaces / name
        ws.mkdir()
        os.chown(ws, 1000, 1000)  # the agent's, as docs/MOUNTS.md "Ownership" asks
        return ws

    def assertEgress(self, record, allowed, refused):
        """allowed: {(host, port): connections}; refused: {(host, port, reason): count}."""
        got_allowed = {(a["host"], a["port"]): a["connections"] for a in record["egress"]["allowed"]}
        got_refused = {(r["host"], r["port"], r["reason"]): r["count"] for r in record["egress"]["refused"]}
        self.assertEqual((got_allowed, got_refused), (allowed, refused), json.dumps(record["egress"], indent=2))
        for a in record["egress"]["allowed"]:
            self.assertGreater(a["bytes_out"], 0)
            self.assertGreater(a["bytes_in"], 0)
        ledger = [json.loads(l) for l in self.seat.ledger.read_text().splitlines()]
        self.assertEqual(ledger[-1]["egress"], record["egress"])


class FromInside(EgressSeat):
    def test_only_the_listed_name_passes_and_every_other_way_out_is_shut(self):
        ws = self.workspace("inside")
        curl = stage_curl(ws)
        port = self.up.port
        script = r'''
C="%(curl)s -sS --max-time 20"
echo "env $HTTPS_PROXY $HTTP_PROXY $NO_PROXY"
echo "ifaces $(ls /sys/class/net | tr '\n' ' ')"
echo "allowed $($C -o /dev/null -w '%%{http_code}' http://api.mock.test:%(port)d/v1/models)"
echo "listed-elsewhere $($C -o /dev/null -w '%%{http_connect}' https://evil.example/ 2>/dev/null)"
$C -D - -o /dev/null https://evil.example/ 2>/dev/null | tr -d '\r' | grep -i '^x-proxy-error'
echo "ip-literal $($C -o /dev/null -w '%%{http_code}' http://%(addr)s:%(port)d/ 2>/dev/null)"
echo "ip-literal-tls $($C -o /dev/null -w '%%{http_connect}' https://1.1.1.1/ 2>/dev/null)"
(exec 3<>/dev/tcp/%(addr)s/%(port)d) 2>&1 | head -1 | sed 's/.*: //' | sed 's/^/raw-tcp /'
getent hosts api.mock.test >/dev/null; echo "dns $?"
echo "unset $(env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy $C -o /dev/null http://api.mock.test:%(port)d/v1/models 2>&1)"
echo "noproxy $($C --noproxy '*' -o /dev/null http://%(addr)s:%(port)d/ 2>&1 | sed 's/ after .*//')"
exec 4<>/dev/tcp/127.0.0.1/3128
printf 'CONNECT api.mock.test:%(port)d HTTP/1.1\r\nHost: api.mock.test:%(port)d\r\n\r\n' >&4
read -r line <&4; echo "sni-connect ${line%%$'\r'}"
printf '%(hello)s' >&4
if timeout 5 cat <&4 >/dev/null; then echo "sni closed"; fi
''' % dict(curl=curl, port=port, addr=self.up.address, hello=client_hello("evil.example"))
        proc, record = self.seat.status("--id", "eg-inside", "--egress", "http://api.mock.test:%d" % port,
                                        "--egress", "api.mock.test:%d" % port, "--workspace", str(ws),
                                        "--timeout", "120s", "--", "bash", "-c", script, timeout=180)
        out = proc.stdout.decode()
        err = proc.stderr.decode()
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(out, "".join([
            "env %s %s localhost,127.0.0.1,::1\n" % (DOOR, DOOR),
            "ifaces lo tripwire0 \n",
            "allowed 200\n",
            "listed-elsewhere 403\n",
            "X-Proxy-Error: not_allowed\n",
            "ip-literal 403\n",
            "ip-literal-tls 403\n",
            "raw-tcp Connection refused\n",  # the tripwire's reset (test_tripwire.py): nothing leaves
            "dns 2\n",
            "unset curl: (6) Could not resolve host: api.mock.test\n",
            "noproxy curl: (7) Failed to connect to %s port %d\n" % (self.up.address, port),
            "sni-connect HTTP/1.1 200 Connection Established\n",
            "sni closed\n",
        ]), out)
        self.assertEqual([r["path"] for r in self.up.requests()], ["/v1/models"])
        self.assertEgress(record, {("api.mock.test", port): 1},
                          {("evil.example", 443, "not_allowed"): 2, (self.up.address, port, "ip_literal"): 1,
                           ("1.1.1.1", 443, "ip_literal"): 1, ("api.mock.test", port, "sni_mismatch"): 1})
        for line in ("egress: refused evil.example:443: not_allowed", "egress: refused 1.1.1.1:443: ip_literal",
                     "egress: refused api.mock.test:%d: sni_mismatch (TLS name evil.example)" % port):
            self.assertIn("agent-sandbox: " + line + "\n", err)
        self.assertEqual(err.count("egress: refused"), 5, err)
        # the ways around the door, on the tripwire's record: the raw connect and curl --noproxy, the lookups
        self.assertEqual([(e["protocol"], e["destination"], e["port"], e["count"]) for e in record["tripwire"]["network"]],
                         [("tcp", self.up.address, port, 2)])
        self.assertEqual([e["name"] for e in record["tripwire"]["dns"]], ["api.mock.test"])
        self.assertNoContainer("eg-inside")

    def test_a_session_without_egress_has_only_lo_and_the_tripwire_and_no_proxy(self):
        proc, record = self.seat.status("--id", "eg-none", "--", "bash", "-c",
                                        "ls /sys/class/net; env | grep -ci proxy; "
                                        "(exec 3<>/dev/tcp/127.0.0.1/3128) 2>&1 | head -1 | sed 's/.*: //'")
        self.assertEqual(proc.stdout.decode(), "lo\ntripwire0\n0\nConnection refused\n")
        self.assertIsNone(record["egress"])
        self.assertEqual(record["network"], "none")

    def test_a_name_beyond_the_seat_cap_is_refused_before_anything_exists(self):
        self.seat.write(self.seat.config_file.read_text().replace("[egress]\n", '[egress]\nallow = ["*.mock.test:443"]\n'))
        proc, record = self.seat.status("--id", "eg-capped", "--egress", "evil.example", "--", "true")
        self.assertLauncherError(proc, record, "usage",
                                 "--egress: 'evil.example:443' is beyond this seat's [egress] allow (%s: "
                                 "*.mock.test:443)" % self.seat.config_file)
        self.assertNoContainer("eg-capped")


class RealAgentsThroughTheWall(EgressSeat):
    def test_codex_and_claude_reach_the_mock_only_through_the_door_and_commit(self):
        for row in e2e.E2E_ROWS:
            with self.subTest(runtime=row["runtime"]):
                self.through_the_wall(row)

    def through_the_wall(self, row):
        name = row["runtime"]
        self.up.stop()
        self.up = Upstream(name, command="echo hello-from-%s > note.txt && git add note.txt && "
                           "git -c user.email=agent@sandbox -c user.name=agent commit -q -m 'note from %s'" % (name, name),
                           final="Committed note.txt.").start()
        self.addCleanup(self.up.stop)
        text = self.seat.config_file.read_text()
        self.seat.write(text[:text.index("\n[egress]")] + self.up.seat_egress())
        session = "eg-%s-%d" % (name, os.getpid())
        worktree = self.linked_worktree("eg-" + name)
        credential = self.fake_credential("%s-%s" % (name, row["credential"]), row["content"]())
        env = self.seat.env(**row["env"](self.up))
        proc, record = self.seat.status(
            "--id", session, "--runtime", name, "--credential", str(credential), "--workspace", str(worktree),
            "--git-mirror", str(self.git_root / (worktree.name + "-repo") / ".git"),
            "--egress", "http://api.mock.test:%d" % self.up.port, "--timeout", "120s", "--",
            *row["argv"](self.up, "Add note.txt and commit it."), timeout=e2e.RUN_TIMEOUT, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        self.assertEqual(proc.stdout, b"Committed note.txt.\n")
        self.assertCommitted(worktree, "note from " + name, "note.txt", "hello-from-%s\n" % name)
        turns = [r["turn"] for r in self.up.requests() if r["api"] == row["api"]]
        self.assertEqual(turns, [1, 2])
        self.assertEqual(record["network"], "none")
        allowed = record["egress"]["allowed"]
        self.assertEqual([(a["host"], a["port"]) for a in allowed], [("api.mock.test", self.up.port)])
        self.assertGreaterEqual(allowed[0]["connections"], 2)
        self.assertGreater(allowed[0]["bytes_in"], 1000)
        self.assertGreater(allowed[0]["bytes_out"], 1000)
        print("\negress record (%s): %s" % (name, json.dumps(record["egress"])), file=sys.stderr)
        self.assertNoContainer(session)


class Rootless(EgressSeat):
    """The same door on a rootless seat: the launcher enters the container's user namespace first."""

    def test_the_door_opens_in_a_rootless_container(self):
        try:
            uid = pwd.getpwnam(ROOTLESS_USER).pw_uid
        except KeyError:
            unavailable(self, "no rootless seat user")
        socket = "/run/user/%d/podman/podman.sock" % uid
        if not os.path.exists(socket):
            unavailable(self, "rootless seat not running (scripts/rootless-seat.sh start)")
        launcher, credtable = readable_copies()
        ws = self.workspace("rootless")
        curl = stage_curl(ws)
        text = without_gvisor_lines(self.seat.config_file.read_text())
        self.seat.write(text.replace('socket = "', 'socket = "%s"\n#' % socket, 1).replace(
            "\n[egress]", 'credtable = "%s"\nwaive_unenforced_limits = true\n%s\n[egress]' % (credtable, LOCAL_ROOTLESS_SEAT), 1))
        for path in [self.seat.dir, *self.seat.dir.rglob("*")]:
            shutil.chown(path, ROOTLESS_USER, ROOTLESS_USER)
        status = self.seat.dir / "status.json"
        port = self.up.port
        script = ("C='%s -sS --max-time 20'; echo $($C -o /dev/null -w '%%{http_code}' http://api.mock.test:%d/v1/models) "
                  "$($C -o /dev/null -w '%%{http_connect}' https://evil.example/ 2>/dev/null); ls /sys/class/net" % (curl, port))
        env = ["HOME=" + pwd.getpwnam(ROOTLESS_USER).pw_dir, "PATH=/usr/bin:/bin", "XDG_RUNTIME_DIR=/run/user/%d" % uid,
               "XDG_CONFIG_HOME=%s" % self.seat.config_home, "XDG_STATE_HOME=%s" % self.seat.state_home, "LANG=C.UTF-8"]
        proc = subprocess.run(["runuser", "-u", ROOTLESS_USER, "--", "env", "-i", *env, str(launcher), "--status-file",
                               str(status), "--id", "eg-rootless", "--workspace", str(ws), "--egress",
                               "http://api.mock.test:%d" % port, "--", "bash", "-c", script],
                              capture_output=True, timeout=180, cwd="/")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), "200 403\nlo\n" if LOCAL_ROOTLESS_SEAT else "200 403\nlo\ntripwire0\n")
        record = json.loads(status.read_text())
        self.assertEqual(record["mode"], "rootless")
        self.assertEgress(record, {("api.mock.test", port): 1}, {("evil.example", 443, "not_allowed"): 1})
        self.assertEqual(session_containers("eg-rootless", socket=socket), [])


class RemoteRootlessSeat(unittest.TestCase):
    """Remote dispatch to a rootless seat host (rd-1, scripts/test-prep.d/40-remote-seats.sh): the
    seat's sandbox-run opens the door from a systemd user session over ssh. The seat's own sshd on
    127.0.0.1:22 is the upstream (tests/integration/remote/seat.toml maps api.seat.test to it)."""

    def test_the_wall_on_a_remote_rootless_seat(self):
        registry = pathlib.Path(os.environ.get("ASBX_EGRESS_REGISTRY", "/var/lib/agent-sandbox/seats/registry-rd.toml"))
        host = os.environ.get("ASBX_EGRESS_SEAT", "rd-1")
        if not registry.exists():
            unavailable(self, "seats rd-1/rd-2 not up (%s; scripts/test-prep.d/40-remote-seats.sh)" % registry)
        work = pathlib.Path(tempfile.mkdtemp(prefix="asbx-egress-remote-"))
        self.addCleanup(shutil.rmtree, work, True)
        status = work / "status.json"
        probe = ("ls /sys/class/net; exec 3<>/dev/tcp/127.0.0.1/3128; "
                 "printf 'GET http://api.seat.test:22/ HTTP/1.1\\r\\nHost: api.seat.test:22\\r\\n\\r\\n' >&3; "
                 "head -c 7 <&3; echo; exec 4<>/dev/tcp/127.0.0.1/3128; "
                 "printf 'CONNECT evil.example:443 HTTP/1.1\\r\\n\\r\\n' >&4; head -1 <&4 | tr -d '\\r'; "
                 "(exec 5<>/dev/tcp/127.0.0.1/22) 2>&1 | head -1 | sed 's/.*: //'")
        env = dict(os.environ, XDG_STATE_HOME=str(work / "state"), XDG_CONFIG_HOME=str(work / "config"))
        proc = subprocess.run([str(LAUNCHER), "--registry", str(registry), "--host", host, "--status-file", str(status),
                               "--id", "eg-remote-%d" % os.getpid(), "--egress", "http://api.seat.test:22", "--",
                               "bash", "-c", probe], capture_output=True, timeout=180, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), "lo\ntripwire0\nSSH-2.0\nHTTP/1.1 403 Forbidden\nConnection refused\n")
        self.assertIn(b"sandbox-run: egress: refused evil.example:443: not_allowed\n", proc.stderr)
        record = json.loads(status.read_text())
        self.assertEqual((record["seat"], record["mode"], record["network"]), (host, "rootless", "none"))
        allowed = record["egress"]["allowed"]
        self.assertEqual([(a["host"], a["port"], a["connections"]) for a in allowed], [("api.seat.test", 22, 1)])
        self.assertGreater(allowed[0]["bytes_in"], 0)
        self.assertEqual(record["egress"]["refused"],
                         [{"host": "evil.example", "port": 443, "reason": "not_allowed", "count": 1}])


if __name__ == "__main__":
    unittest.main()
