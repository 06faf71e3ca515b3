"""The tripwire (docs/EGRESS.md, "The tripwire"): every reach for the wall is on record.

A session in its own namespace (network none, with or without --egress) has one route out: the
launcher's TUN device `tripwire0`. What arrives there is parsed as data and answered at once
(TCP → reset, DNS → REFUSED, other UDP → port unreachable, ICMP echo → prohibited), never
forwarded, and counted in the record's `tripwire` object. Decoys in the tmpfs HOME are watched
from the seat side; opening one is on record too.

The addresses the agent tries belong to a network namespace this test makes (10.78.N.0/30 and
fd78:0:0:N::/64 on a veth pair of its own), with listeners and packet counters: the test asserts
that nothing of the agent's reaches it, and a control shows the same probes do reach it from the
seat. The host's node and npm are copied into the workspace for the ~/.npmrc cases (the image has
no node)."""
import ipaddress
import json
import os
import pathlib
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from harness import (CODES, GVISOR, LAUNCHER, ROOT, Seat, SeatTest, free_veth_slot, peak_rss_argv, peak_rss_bytes, readable_copies,
                     removals_done, session_containers, session_entries, unavailable)
import test_agents_e2e as e2e
from test_egress import EgressSeat, Upstream
from test_rootless import USER, rootless_socket

SEAT_STATE = pathlib.Path(os.environ.get("ASBX_SEAT_STATE", "/var/lib/agent-sandbox/seats"))
PREFIX = os.environ.get("ASBX_REMOTE_PREFIX", "rd")

LISTENER = r'''
import select, socket, sys
v4, v6, log = sys.argv[1], sys.argv[2], open(sys.argv[3], "a", buffering=1)
socks = {}
for fam, addr in ((socket.AF_INET, v4), (socket.AF_INET6, v6)):
    t = socket.socket(fam, socket.SOCK_STREAM)
    t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    t.bind((addr, 8080)); t.listen(16); socks[t] = "tcp"
    for port in (53, 9999):
        u = socket.socket(fam, socket.SOCK_DGRAM); u.bind((addr, port)); socks[u] = "udp %d" % port
raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); socks[raw] = "icmp"
print("READY", flush=True)
while True:
    for s in select.select(list(socks), [], [])[0]:
        if socks[s] == "tcp":
            c, _ = s.accept(); c.close(); log.write("tcp\n")
        else:
            data = s.recv(2048)
            if socks[s] != "icmp" or data[20] == 8:  # echo requests only (the kernel's replies too)
                log.write(socks[s] + "\n")
'''

# From inside: one of each kind, each timed. A connected ping socket gets the ICMP error back.
PROBE = r'''
use strict; use Socket qw(:all); use Time::HiRes qw(time); use IO::Socket::IP;
my ($v4, $v6) = @ARGV;
sub ms { sprintf "%d", (time - $_[0]) * 1000 }
sub answer { my ($s) = @_; my $r = ''; vec($r, fileno($s), 1) = 1; select($r, undef, undef, 5) }
for my $addr ($v4, $v6) {
  my $t = time; my $s = IO::Socket::IP->new(PeerHost => $addr, PeerPort => 8080, Timeout => 10);
  print "tcp ", ($s ? "connected" : "$!"), " ", ms($t), "\n";
}
my $q = pack("nnnnnn", 0x2727, 0x0100, 1, 0, 0, 0) . join("", map { chr(length) . $_ } split /\./, "exfil.tw-test.example")
      . "\0" . pack("nn", 16, 1);
socket(my $d, PF_INET, SOCK_DGRAM, 0); connect($d, pack_sockaddr_in(53, inet_aton($v4)));
my $t = time; send($d, $q, 0); my $a = ''; recv($d, $a, 512, MSG_DONTWAIT) if answer($d);
my ($id, $flags) = unpack("nn", $a . "\0\0\0\0");
printf "dns id %x rcode %d %s\n", $id, $flags & 15, ms($t);
socket(my $u, PF_INET, SOCK_DGRAM, 0); connect($u, pack_sockaddr_in(9999, inet_aton($v4)));
$t = time; send($u, "hello", 0); answer($u); my $got = recv($u, my $buf, 512, MSG_DONTWAIT);
print "udp ", (defined $got ? "answered" : "$!"), " ", ms($t), "\n";
# an unprivileged ping socket (the kernel sums it); the seat-side control, as root, a raw one
my $raw = !socket(my $p, PF_INET, SOCK_DGRAM, 1);
# (gVisor's sentry, network=host, opens neither: nothing can be sent, so there is no trip to count)
!$raw or socket($p, PF_INET, SOCK_RAW, 1) or do { print "icmp no socket: $! 0\n"; exit 0 };
my $echo = pack("CCnnn", 8, 0, 0, 0x7477, 1) . "tw-ping";
my $sum = unpack("%32n*", $echo . "\0"); $sum = ($sum & 0xffff) + ($sum >> 16) while $sum >> 16;
substr($echo, 2, 2) = pack("n", ~$sum & 0xffff) if $raw;
connect($p, pack_sockaddr_in(0, inet_aton($v4)));
$t = time; send($p, $echo, 0); answer($p); $got = recv($p, $buf, 512, MSG_DONTWAIT);
print "icmp ", (defined $got ? "answered" : "$!"), " ", ms($t), "\n";
'''

FLOOD = r'''
use strict; use Socket qw(:all); use Errno qw(ECONNREFUSED); use Time::HiRes qw(time);
my ($addr, $n) = @ARGV; my $dst = inet_aton($addr); my $refused = 0; my $t = time;
for my $i (0 .. $n - 1) {
  socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
  $refused++ if !connect($s, pack_sockaddr_in(1 + $i % 1000, $dst)) && $! == ECONNREFUSED;
  close($s);
}
printf "refused %d of %d in %.1f s\n", $refused, $n, time - $t;
'''

NODE_READS_NPMRC = "const fs = require('fs'), os = require('os'); fs.readFileSync(os.homedir() + '/.npmrc'); console.log('read');"

TRIP_LINE = "agent-sandbox: tripwire: "


def ip(*args, check=True):
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


class TargetNamespace:
    """A namespace of the test's own joined to the seat by a veth pair, with listeners that log
    what reaches them and the veth's packet counters."""

    def __init__(self):
        n = free_veth_slot("twh")
        self.name, self.host_if, self.ns_if = "tw-target-%d" % n, "twh%d" % n, "twn%d" % n
        self.v4, self.v4_gateway = "10.78.%d.2" % n, "10.78.%d.1" % n
        self.v6, self.v6_gateway = "fd78:0:0:%x::2" % n, "fd78:0:0:%x::1" % n
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="asbx-tw-target-"))
        self.log = self.dir / "seen.log"
        self.proc = None

    def start(self):
        ip("netns", "add", self.name)
        ip("-n", self.name, "link", "set", "lo", "up")
        ip("link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if)
        ip("link", "set", self.ns_if, "netns", self.name)
        # no link-local IPv6: past its first listener reports (settle) the veth pair is silent, so a counted packet is a probe
        ip("link", "set", self.host_if, "addrgenmode", "none")
        ip("-n", self.name, "link", "set", self.ns_if, "addrgenmode", "none")
        ip("addr", "add", self.v4_gateway + "/30", "dev", self.host_if)
        ip("addr", "add", self.v6_gateway + "/64", "dev", self.host_if, "nodad")
        ip("link", "set", self.host_if, "up")
        ip("-n", self.name, "addr", "add", self.v4 + "/30", "dev", self.ns_if)
        ip("-n", self.name, "addr", "add", self.v6 + "/64", "dev", self.ns_if, "nodad")
        ip("-n", self.name, "link", "set", self.ns_if, "up")
        script = self.dir / "listener.py"
        script.write_text(LISTENER)
        self.proc = subprocess.Popen(["ip", "netns", "exec", self.name, sys.executable, str(script), self.v4, self.v6,
                                      str(self.log)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if self.proc.stdout.readline().strip() != "READY":
            raise RuntimeError("the listener did not start")
        self.settle()
        return self

    def settle(self):
        """The veth's own multicast listener reports (two, for the IPv6 addresses) go out first."""
        last, steady = self.counters(), time.time()
        while time.time() - steady < 2.5:
            time.sleep(0.5)
            now = self.counters()
            if now != last:
                last, steady = now, time.time()

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc.stdout.close()
        ip("link", "delete", self.host_if, check=False)
        ip("netns", "delete", self.name, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)

    def counters(self):
        """(packets the seat sent towards the namespace, packets the namespace received)."""
        tx = int(pathlib.Path("/sys/class/net/%s/statistics/tx_packets" % self.host_if).read_text())
        rx = ip("netns", "exec", self.name, "cat", "/sys/class/net/%s/statistics/rx_packets" % self.ns_if).stdout
        return tx, int(rx)

    def seen(self):
        time.sleep(0.3)  # the listener logs asynchronously
        return self.log.read_text().split("\n")[:-1] if self.log.exists() else []


class TripwireSeat(SeatTest):
    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            unavailable(self, "network namespaces need root")
        self.target = TargetNamespace()
        try:
            self.target.start()
        except Exception as e:  # noqa: BLE001
            self.target.stop()
            unavailable(self, "cannot build the test's network namespace: %s" % e)
        self.addCleanup(self.target.stop)

    def workspace(self, name):
        ws = self.seat.workspaces / name
        ws.mkdir()
        os.chown(ws, 1000, 1000)  # the agent's, as docs/MOUNTS.md "Ownership" asks
        return ws

    def stage(self, ws, name, text):
        (ws / name).write_text(text)
        return "/sandbox/workspaces/%s/%s" % (ws.name, name)

    def assertLedgerHas(self, record):
        ledger = [json.loads(l) for l in self.seat.ledger.read_text().splitlines()]
        self.assertEqual(ledger[-1]["tripwire"], record["tripwire"])

    def network(self, record):
        return {(e["protocol"], e["destination"], e["port"]): e["count"] for e in record["tripwire"]["network"]}

    def canaries(self, record):
        return {e["path"]: e["count"] for e in record["tripwire"]["canaries"]}

    def trip_lines(self, proc):
        return [l for l in proc.stderr.decode().splitlines() if l.startswith(TRIP_LINE)]


class Network(TripwireSeat):
    def test_the_control_the_namespace_sees_what_the_seat_sends_it(self):
        """Without the wall the same probes arrive: the listeners and counters would see a leak."""
        before = self.target.counters()
        self.stage(self.workspace("tw-control"), "probe.pl", PROBE)
        proc = subprocess.run(["perl", str(self.seat.workspaces / "tw-control" / "probe.pl"), self.target.v4,
                               self.target.v6], capture_output=True, text=True, timeout=60)
        self.assertEqual([l.rsplit(" ", 1)[0] for l in proc.stdout.splitlines()][:2], ["tcp connected", "tcp connected"],
                         proc.stdout + proc.stderr)
        self.assertEqual(sorted(self.target.seen()), ["icmp", "tcp", "tcp", "udp 53", "udp 9999"], proc.stdout)
        after = self.target.counters()
        self.assertGreater(after[0], before[0])
        self.assertGreater(after[1], before[1])

    def test_tcp_dns_udp_and_ping_are_refused_at_once_on_record_and_nothing_leaves(self):
        ws = self.workspace("tw-probe")
        probe = self.stage(ws, "probe.pl", PROBE)
        before = self.target.counters()
        script = ("ls /sys/class/net | tr '\\n' ' '; echo; perl %s %s %s; getent hosts exfil-resolv.tw-test.example; "
                  "echo getent $?; cat ~/.ssh/id_rsa >/dev/null" % (probe, self.target.v4, self.target.v6))
        proc, record = self.seat.status("--id", "tw-probe", "--workspace", str(ws), "--", "bash", "-c", script)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.decode().splitlines()
        self.assertEqual(lines[0], "lo tripwire0 ")
        if GVISOR:  # the sentry's select on host sockets sometimes says ready early: the agent may read "connected"
            # a raw socket is refused by the profile (SOCK_RAW on AF_INET), which the sentry answers EPERM
            self.assertEqual(lines[5:], ["icmp no socket: Operation not permitted 0", "getent 2"])
        else:
            self.assertEqual([l.rsplit(" ", 1)[0] for l in lines[1:6]] + lines[6:],
                             ["tcp Connection refused", "tcp Connection refused", "dns id 2727 rcode 5",
                              "udp Connection refused", "icmp No route to host", "getent 2"], proc.stdout)
            for line in lines[1:6]:
                self.assertLess(int(line.rsplit(" ", 1)[1]), 1000, line)  # refused at once, not a timeout
        self.assertEqual(self.target.seen(), [])
        self.assertEqual(self.target.counters(), before)
        v6 = ipaddress.ip_address(self.target.v6).compressed
        self.assertEqual(self.network(record), {("tcp", self.target.v4, 8080): 1, ("tcp", v6, 8080): 1,
                                                ("udp", self.target.v4, 9999): 1,
                                                **({} if GVISOR else {("icmp", self.target.v4, None): 1})})
        dns = {e["name"]: e["count"] for e in record["tripwire"]["dns"]}
        self.assertEqual(dns.pop("exfil.tw-test.example"), 1)
        self.assertGreaterEqual(dns.pop("exfil-resolv.tw-test.example"), 1)  # via resolv.conf: the resolver retries
        self.assertEqual(dns, {})
        canaries = self.canaries(record)
        if GVISOR:  # the gofer opens the directory, then the file on the sentry's behalf (more than once)
            self.assertEqual(set(canaries) - {".ssh/"}, {".ssh/id_rsa"})
            canaries = {".ssh/id_rsa": min(canaries[".ssh/id_rsa"], 1)}
        self.assertEqual(canaries, {".ssh/id_rsa": 1})  # the third kind: a loot path
        self.assertEqual(record["tripwire"]["first"], "tcp connect to %s:8080" % self.target.v4)
        self.assertEqual(record["tripwire"]["mode"], "record")
        for e in record["tripwire"]["network"] + record["tripwire"]["dns"] + record["tripwire"]["canaries"]:
            self.assertLessEqual(abs(e["first_unix_ms"] / 1000 - record["started_unix"]), 120)
        self.assertEqual(self.trip_lines(proc), [
            TRIP_LINE + "tcp connect to %s:8080 (refused; the record counts every attempt)" % self.target.v4,
            TRIP_LINE + "dns query for exfil.tw-test.example (TXT) (refused; the record counts every attempt)",
            TRIP_LINE + "udp to %s:9999 (refused; the record counts every attempt)" % self.target.v4,
            *([] if GVISOR else [TRIP_LINE + "icmp echo to %s (refused; the record counts every attempt)" % self.target.v4]),
            TRIP_LINE + ("canary ~/.ssh/ listed" if ".ssh/" in self.canaries(record) else "canary ~/.ssh/id_rsa opened")
            + " (a decoy; the record counts every open)"])
        self.assertLedgerHas(record)
        print("\ntripwire record (network, DNS and a loot path): %s" % json.dumps(record["tripwire"]), file=sys.stderr)
        self.assertNoContainer("tw-probe")

    def test_the_egress_door_works_beside_it(self):
        script = ("exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT evil.example:443 HTTP/1.1\\r\\n\\r\\n' >&3; "
                  "head -1 <&3 | tr -d '\\r'; (exec 4<>/dev/tcp/%s/443) 2>&1 | head -1 | sed 's/.*: //'" % self.target.v4)
        proc, record = self.seat.status("--id", "tw-door", "--egress", "api.mock.test", "--", "bash", "-c", script)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), "HTTP/1.1 403 Forbidden\nConnection refused\n")
        self.assertEqual(record["egress"]["refused"], [{"host": "evil.example", "port": 443, "reason": "not_allowed", "count": 1}])
        self.assertEqual(self.network(record), {("tcp", self.target.v4, 443): 1})
        self.assertEqual(self.target.seen(), [])

    def test_a_joined_namespace_has_no_device_and_its_record_says_so(self):
        proc, record = self.seat.status("--id", "tw-slirp", "--network", "slirp4netns", "--", "bash", "-c",
                                        "ls /sys/class/net | grep -c tripwire0")
        self.assertEqual(proc.stdout, b"0\n")
        self.assertIsNone(record["tripwire"]["network"])
        self.assertIsNone(record["tripwire"]["dns"])
        self.assertEqual(record["tripwire"]["canaries"], [])


class Flood(TripwireSeat):
    def test_100000_connects_cost_a_bounded_record_and_memory(self):
        ws = self.workspace("tw-flood")
        flood = self.stage(ws, "flood.pl", FLOOD)
        baseline = self.run_measured("tw-flood-base", ws, "true")
        proc, record, peak = self.run_measured("tw-flood", ws, "perl %s %s 100000; echo still-here" % (flood, self.target.v4))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout.decode()
        # the sentry's select says a few refused connects were made (ISOLATION.md): the record counts each
        self.assertRegex(out, r"^refused %s of 100000 in [0-9.]+ s\nstill-here\n$" % (r"\d+" if GVISOR else "100000"))
        entries = record["tripwire"]["network"]
        self.assertEqual(len(entries), 257)  # 256 destinations, then "(other)"
        self.assertEqual(sum(e["count"] for e in entries), 100000)
        self.assertEqual([e["port"] for e in entries if e["protocol"] == "(other)"], [None])
        self.assertEqual(len(self.trip_lines(proc)), 1)
        self.assertLess(peak - baseline[2], 16 << 20, "launcher peak RSS %d vs %d bytes" % (peak, baseline[2]))
        self.assertLess(len(json.dumps(record["tripwire"])), 64 << 10)
        self.assertEqual(self.target.seen(), [])
        print("\nflood: %s; launcher peak RSS %.1f MiB (a session without the flood: %.1f MiB)"
              % (out.splitlines()[0], peak / 2**20, baseline[2] / 2**20), file=sys.stderr)

    def run_measured(self, session, ws, script):
        """The session, and the launcher's own peak RSS (harness.peak_rss_argv)."""
        status, report = self.seat.dir / ("%s.json" % session), self.seat.dir / ("%s.rss" % session)
        argv = [str(LAUNCHER), "--status-file", str(status), "--id", session, "--workspace", str(ws), "--timeout", "240s",
                "--", "bash", "-c", script]
        proc = subprocess.run(peak_rss_argv(argv, report), capture_output=True, env=self.seat.env())
        return proc, json.loads(status.read_text()), peak_rss_bytes(report)


def stage_node(ws):
    """The host's node (with the libraries the image lacks) and npm, copied into the workspace.
    Returns the command lines for node and npm inside. npm is either self-contained (its own
    node_modules, as npm's own installs are) or a distribution's, whose modules lie in the
    distribution's node module directories: those are copied too and named in NODE_PATH."""
    tools, inside = ws / ".tools", "/sandbox/workspaces/%s/.tools" % ws.name
    (tools / "lib").mkdir(parents=True)
    node = pathlib.Path(os.path.realpath(shutil.which("node")))
    shutil.copy2(node, tools / "node")
    for line in subprocess.check_output(["ldd", str(node)], text=True).splitlines():
        parts = line.split("=>")
        if len(parts) == 2 and parts[1].strip().startswith("/"):
            lib = parts[1].split()[0]
            if not os.path.basename(lib).startswith(("libc.so", "libm.so", "libpthread", "libdl", "librt", "ld-linux")):
                shutil.copy2(lib, tools / "lib" / os.path.basename(lib))
    cli = pathlib.Path(os.path.realpath(shutil.which("npm")))
    npm_root = cli.parents[1]
    shutil.copytree(npm_root, tools / "npm", symlinks=True)
    paths = []
    if not (npm_root / "node_modules").is_dir():
        for i, d in enumerate(d for d in ("/usr/share/nodejs", "/usr/lib/nodejs") if os.path.isdir(d)):
            shutil.copytree(d, tools / ("modules%d" % i), symlinks=True)
            paths.append("%s/modules%d" % (inside, i))
    env = "env LD_LIBRARY_PATH=%s/lib NODE_PATH=%s " % (inside, ":".join(paths))
    return env + inside + "/node", env + "%s/node %s/npm/%s" % (inside, inside, cli.relative_to(npm_root))


class Canaries(TripwireSeat):
    def setUp(self):
        super().setUp()
        self.ws = self.workspace("tw-canary")
        self.node, self.npm = stage_node(self.ws)

    def test_reads_of_the_loot_paths_are_on_record(self):
        script = ("cat ~/.ssh/id_ed25519 | head -1; find ~ -name credentials; %s -e \"%s\"; ls -a ~ | tr '\\n' ' '"
                  % (self.node, NODE_READS_NPMRC))
        proc, record = self.seat.status("--id", "tw-canary", "--workspace", str(self.ws), "--", "bash", "-c", script)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), "-----BEGIN OPENSSH PRIVATE KEY-----\n/sandbox/home/.aws/credentials\nread\n"
                                               ". .. .aws .config .docker .git-credentials .kube .npmrc .pypirc .ssh ")
        self.assertEqual(self.canaries(record), {
            ".ssh/id_ed25519": 1, ".npmrc": 1,
            ".ssh/": 1, ".aws/": 1, ".config/gh/": 1, ".config/gcloud/": 1, ".docker/": 1, ".kube/": 1})
        self.assertEqual(record["tripwire"]["first"], "canary ~/.ssh/id_ed25519 opened")
        self.assertEqual(self.trip_lines(proc),
                         [TRIP_LINE + "canary ~/.ssh/id_ed25519 opened (a decoy; the record counts every open)"])
        self.assertRegex(record["tripwire"]["mark"], "^[0-9a-f]{32}$")
        self.assertLedgerHas(record)
        self.assertNoContainer("tw-canary")

    def test_npm_reads_its_moved_user_config_and_trips_nothing_the_control_trips(self):
        quiet = "NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_CACHE=/tmp/npm-cache "
        proc, record = self.seat.status("--id", "tw-npm", "--workspace", str(self.ws), "--", "bash", "-c",
                                        "echo $NPM_CONFIG_USERCONFIG; %s%s config get registry" % (quiet, self.npm))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), "/sandbox/home/.config/npm/npmrc\nhttps://registry.npmjs.org/\n")
        self.assertEqual(record["tripwire"]["canaries"], [])
        self.assertEqual(record["tripwire"]["network"], [])
        proc, record = self.seat.status("--id", "tw-npm-control", "--workspace", str(self.ws), "--", "bash", "-c",
                                        "env -u NPM_CONFIG_USERCONFIG %s%s config get registry" % (quiet, self.npm))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertGreaterEqual(self.canaries(record).get(".npmrc", 0), 1)  # npm itself reads ~/.npmrc

    def test_a_decoy_read_through_a_mapping_is_on_record(self):
        """No read(2) reaches the decoy: under gVisor the sentry maps the seat's file into the agent,
        and its pages are read by faults the seat's inotify never sees. The stat first makes gVisor's
        gofer walk to it (an open the watch must not count)."""
        script = ("stat -c %s ~/.ssh/id_ed25519 >/dev/null; python3 -c 'import mmap, os; "
                  "fd = os.open(os.path.expanduser(\"~/.ssh/id_ed25519\"), os.O_RDONLY); "
                  "print(mmap.mmap(fd, 0, prot=mmap.PROT_READ)[:10].decode())'")
        proc, record = self.seat.status("--id", "tw-mmap", "--", "bash", "-c", script)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b"-----BEGIN\n")
        self.assertEqual(self.canaries(record), {".ssh/id_ed25519": 1})
        self.assertEqual(record["tripwire"]["first"], "canary ~/.ssh/id_ed25519 opened")

    def test_a_stat_or_a_listing_of_home_is_no_trip(self):
        proc, record = self.seat.status("--id", "tw-stat", "--", "bash", "-c",
                                        "ls -la ~ >/dev/null; test -f ~/.aws/credentials && stat -c %a ~/.ssh/id_rsa")
        self.assertEqual(proc.stdout, b"600\n")
        self.assertEqual(record["tripwire"]["canaries"], [])
        self.assertIsNone(record["tripwire"]["first"])

    def test_the_seat_names_the_list_and_can_turn_it_off(self):
        self.seat.write(self.seat.config_file.read_text() + 'tripwire_canaries = ["~/.netrc"]\n')
        proc, record = self.seat.status("--id", "tw-list", "--", "bash", "-c", "ls -a ~ | tr '\\n' ' '; cat ~/.netrc >/dev/null")
        self.assertEqual(proc.stdout, b". .. .netrc ")
        self.assertEqual(self.canaries(record), {".netrc": 1})
        self.seat.write(self.seat.config_file.read_text() + 'tripwire = "off"\n')
        proc, record = self.seat.status("--id", "tw-off", "--", "bash", "-c",
                                        "ls -a ~ | tr '\\n' ' '; ls /sys/class/net | tr '\\n' ' '; (exec 3<>/dev/tcp/%s/80) 2>&1 | head -1 | sed 's/.*: //'"
                                        % self.target.v4)
        self.assertEqual(proc.stdout.decode(), ". .. lo Network is unreachable\n")
        self.assertIsNone(record["tripwire"])


class Kill(TripwireSeat):
    def setUp(self):
        super().setUp()
        self.seat.write(self.seat.config_file.read_text() + 'tripwire = "kill"\n')

    def assertKilled(self, session, proc, record, attempt):
        message = 'killed by the tripwire at its first trip: %s (tripwire = "kill" in %s)' % (attempt, self.seat.config_file)
        self.assertEqual(proc.returncode, CODES["tripwire"], proc.stderr)
        self.assertEqual(proc.stdout, b"before\n")
        self.assertEqual((record["outcome"], record["error_kind"], record["cause"], record["exit_code"], record["message"]),
                         ("killed", "tripwire", "tripwire", CODES["tripwire"], message))
        self.assertEqual(record["agent_exit_code"], 137)
        self.assertEqual(record["tripwire"]["first"], attempt)
        self.assertIn("agent-sandbox: " + message + "\n", proc.stderr.decode())
        self.assertLess(record["durations_ms"]["run"], 10000)
        self.assertNoContainer(session)
        removals_done(self.seat.dir / "run")  # a session answered before its removal (deferred)
        self.assertEqual(session_entries(self.seat.dir / "run"), [])
        self.assertLedgerHas(record)

    def test_the_first_decoy_opened_ends_the_session(self):
        proc, record = self.seat.status("--id", "tw-kill-canary", "--", "bash", "-c",
                                        "echo before; cat ~/.aws/credentials >/dev/null; sleep 30; echo after")
        self.assertKilled("tw-kill-canary", proc, record, "canary ~/.aws/credentials opened")

    def test_the_first_connect_ends_the_session(self):
        proc, record = self.seat.status("--id", "tw-kill-tcp", "--", "bash", "-c",
                                        "echo before; (exec 3<>/dev/tcp/%s/8080) 2>/dev/null; sleep 30; echo after"
                                        % self.target.v4)
        self.assertKilled("tw-kill-tcp", proc, record, "tcp connect to %s:8080" % self.target.v4)
        self.assertEqual(self.target.seen(), [])

    def test_a_clean_session_runs_to_its_end(self):
        proc, record = self.seat.status("--id", "tw-kill-clean", "--", "bash", "-c", "echo before; exit 3")
        self.assertEqual((proc.returncode, proc.stdout, record["outcome"], record["tripwire"]["first"]),
                         (3, b"before\n", "exited", None))


class RealAgentsTripNothing(EgressSeat):
    """codex and claude do their normal work against the mock, through the door: no false alarm."""

    def test_codex_and_claude_trip_nothing(self):
        for row in e2e.E2E_ROWS:
            with self.subTest(runtime=row["runtime"]):
                self.clean_run(row)

    def clean_run(self, row):
        name = row["runtime"]
        self.up.stop()
        self.up = Upstream("tw" + name, command="echo hello-from-%s > note.txt && git add note.txt && "
                           "git -c user.email=agent@sandbox -c user.name=agent commit -q -m 'note from %s'" % (name, name),
                           final="Committed note.txt.").start()
        self.addCleanup(self.up.stop)
        text = self.seat.config_file.read_text()
        self.seat.write(text[:text.index("\n[egress]")] + self.up.seat_egress())
        session = "tw-%s-%d" % (name, os.getpid())
        worktree = self.linked_worktree("tw-" + name)
        credential = self.fake_credential("%s-%s" % (name, row["credential"]), row["content"]())
        proc, record = self.seat.status(
            "--id", session, "--runtime", name, "--credential", str(credential), "--workspace", str(worktree),
            "--git-mirror", str(self.git_root / (worktree.name + "-repo") / ".git"),
            "--egress", "http://api.mock.test:%d" % self.up.port, "--timeout", "120s", "--",
            *row["argv"](self.up, "Add note.txt and commit it."), timeout=e2e.RUN_TIMEOUT,
            env=self.seat.env(**row["env"](self.up)))
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        self.assertCommitted(worktree, "note from " + name, "note.txt", "hello-from-%s\n" % name)
        t = record["tripwire"]
        self.assertEqual((t["mode"], t["network"], t["dns"], t["canaries"], t["first"]), ("record", [], [], [], None),
                         json.dumps(t))
        self.assertNotIn(TRIP_LINE, proc.stderr.decode())
        print("\ntripwire record (clean %s): %s" % (name, json.dumps(t)), file=sys.stderr)
        self.assertNoContainer(session)


class RemoteRootlessSeat(TripwireSeat):
    """The tripwire on a rootless seat host over ssh: the seat's sandbox-run enters the
    container's user namespace before it creates the device. Seats running this build:
    ASBX_REMOTE_PREFIX=P for P-1 (scripts/seat-host/up.sh 2 --prefix P), else the shared rd-1."""

    def test_every_kind_is_on_record_on_a_rootless_seat(self):
        registry = SEAT_STATE / ("registry-%s.toml" % PREFIX)
        host = PREFIX + "-1"
        if not registry.exists():
            unavailable(self, "seats %s-* not up (%s)" % (PREFIX, registry))
        work = pathlib.Path(tempfile.mkdtemp(prefix="asbx-tw-remote-"))
        self.addCleanup(shutil.rmtree, work, True)
        status = work / "status.json"
        session = "tw-remote-%d" % os.getpid()
        before = self.target.counters()
        probe = ("ls /sys/class/net | tr '\\n' ' '; echo; (exec 3<>/dev/tcp/%s/8080) 2>&1 | head -1 | sed 's/.*: //'; "
                 "getent hosts exfil-remote.tw-test.example; echo getent $?; head -c 5 ~/.git-credentials; echo" % self.target.v4)
        env = dict(os.environ, XDG_STATE_HOME=str(work / "state"), XDG_CONFIG_HOME=str(work / "config"))
        proc = subprocess.run([str(LAUNCHER), "--registry", str(registry), "--host", host, "--status-file", str(status),
                               "--id", session, "--", "bash", "-c", probe], capture_output=True, timeout=180, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), "lo tripwire0 \nConnection refused\ngetent 2\nhttps\n")
        record = json.loads(status.read_text())
        self.assertEqual((record["seat"], record["mode"]), (host, "rootless"))
        t = record["tripwire"]
        self.assertEqual(self.network(record), {("tcp", self.target.v4, 8080): 1})
        self.assertGreaterEqual(sum(e["count"] for e in t["dns"] if e["name"] == "exfil-remote.tw-test.example"), 1)
        self.assertEqual(self.canaries(record), {".git-credentials": 1})
        self.assertIn(("sandbox-run: tripwire: tcp connect to %s:8080" % self.target.v4).encode(), proc.stderr)
        self.assertEqual((self.target.seen(), self.target.counters()), ([], before))
        left = subprocess.run([str(ROOT / "scripts" / "seat-host" / "ssh.sh"), host, "podman ps -a --filter "
                               "label=agent-sandbox.session=%s --format '{{.Names}}'" % session],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(left.stdout.split(), [])
        print("\ntripwire record (rootless seat %s): %s" % (host, json.dumps(t)), file=sys.stderr)


class LocalRootlessWithoutTun(unittest.TestCase):
    """This VM's /dev/net/tun is 0600 (no udev): a rootless seat user cannot create the device, and
    the session fails closed before anything runs, naming the device and the way out."""

    def test_fails_closed_with_the_remedy(self):
        uid, socket = rootless_socket()
        if uid is None or not os.path.exists(socket):
            unavailable(self, "rootless seat not running (scripts/rootless-seat.sh start)")
        if os.stat("/dev/net/tun").st_mode & 0o006:
            self.skipTest("/dev/net/tun is usable by every user here: nothing fails")
        launcher, credtable = readable_copies()
        seat = Seat(socket=socket, extra='credtable = "%s"\nwaive_unenforced_limits = true\n' % credtable)
        self.addCleanup(seat.cleanup)
        for path in [seat.dir, *seat.dir.rglob("*")]:
            shutil.chown(path, USER, USER)
        status = seat.dir / "status.json"
        env = ["HOME=" + pwd.getpwnam(USER).pw_dir, "PATH=/usr/bin:/bin", "XDG_RUNTIME_DIR=/run/user/%d" % uid,
               "XDG_CONFIG_HOME=%s" % seat.config_home, "XDG_STATE_HOME=%s" % seat.state_home, "LANG=C.UTF-8"]
        proc = subprocess.run(["runuser", "-u", USER, "--", "env", "-i", *env, str(launcher), "--status-file", str(status),
                               "--id", "tw-rootless-notun", "--", "true"], capture_output=True, timeout=120, cwd="/")
        message = ("tripwire: cannot open /dev/net/tun: Permission denied (it must be usable by this user: mode 0666, "
                   "as udev sets it); nothing ran (the seat owner may turn the tripwire off: tripwire = \"off\" in %s)"
                   % seat.config_file)
        record = json.loads(status.read_text())
        self.assertEqual(proc.returncode, CODES["tripwire"], proc.stderr)
        self.assertEqual((record["error_kind"], record["message"], record["container_removed"]), ("tripwire", message, True))
        self.assertEqual(session_containers("tw-rootless-notun", socket=socket), [])


if __name__ == "__main__":
    unittest.main()
