#!/usr/bin/python3
"""The cost of the egress wall on model-shaped traffic, next to a direct connection (root).

    bench/egress.py [--runs 30] [--build build] [--request-kib 100] [--response-kib 20]
                    [--events 2000] [--event-bytes 64] [--keepalive 20] [--tripwire record|off]

An upstream runs in a network namespace this script creates, joined by a veth pair of its own
(10.78.0.0/30; nothing outside this machine): plain HTTP on :8080 and TLS on :8443 (a self-signed
certificate for api.bench.test made here). The same curl binary talks to it, `direct` from the seat
straight to the address, `wall` from inside an agent-sandbox session with --egress (through the door
and the proxy). Three rows, each N runs:
  post       — a model-sized POST (default 100 KiB up, 20 KiB back) over plain HTTP, a new
               connection each (as a CLI's first request is);
  stream     — an SSE response of model-like shape over TLS through CONNECT (default 2000 events of
               64 bytes, each its own write): time to first byte and to the last byte;
  keep-alive — K small requests on one TLS connection (the tunnel kept open): time per request.
Prints mean / median / p90 (ms) per row and side; figures go into docs/BENCHMARKS.md.
"""
import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

NS, HOST_IF, NS_IF, GW, ADDR = "asbx-bench-egress", "asbxbeh", "asbxben", "10.78.0.1", "10.78.0.2"
NAME = "api.bench.test"
AGENT_UID = 1000  # a root caller's agent
SERVER = r'''
import http.server, ssl, sys, threading
addr, response, events, event_bytes, cert, key = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.reply(b"x" * response)
    def do_GET(self):
        if self.path != "/stream":
            return self.reply(b"{}")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        data = b"data: " + b"t" * max(0, event_bytes - 8) + b"\n\n"
        for _ in range(events):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
    def reply(self, body):
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
plain = http.server.ThreadingHTTPServer((addr, 8080), H)
tls = http.server.ThreadingHTTPServer((addr, 8443), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(cert, key)
tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
threading.Thread(target=plain.serve_forever, daemon=True).start()
tls.serve_forever()
'''


def make_cert(tmp):
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=" + NAME,
                    "-addext", "subjectAltName=DNS:" + NAME], check=True, capture_output=True)
    return cert, key


def up(args, cert, key, server=None, net=None):
    """The bench's server (`server`: Python source, SERVER by default) in a namespace of its own;
    net = (namespace, host side, its side, gateway, address)."""
    from harness import veth_namespace  # here: harness reads ASBX_BUILD when imported, main sets it first
    ns, host_if, ns_if, gw, addr = net or (NS, HOST_IF, NS_IF, GW, ADDR)
    veth_namespace(ns, host_if, ns_if, gw, addr)
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", server or SERVER, addr,
                             str(args.response_kib * 1024), str(args.events), str(args.event_bytes), str(cert), str(key)])


def down(server, net=None):
    if server:
        server.terminate()
        server.wait()
    from harness import drop_veth_namespace
    ns, host_if = (net or (NS, HOST_IF))[:2]
    drop_veth_namespace(ns, host_if)


def scripts(curl, body, args, direct):
    """The three loops as shell text; `direct` pins the name to the address instead of the proxy."""
    pin = "--noproxy '*' --resolve %s:8080:%s --resolve %s:8443:%s" % (NAME, ADDR, NAME, ADDR) if direct else ""
    c = "%s -sS %s" % (curl, pin)
    post = ("for i in $(seq %d); do %s -o /dev/null -w 'post %%{time_total}\\n' -H 'Content-Type: application/json' "
            "--data-binary @%s http://%s:8080/v1/responses; done" % (args.runs, c, body, NAME))
    stream = ("for i in $(seq %d); do %s -k -N -o /dev/null -w 'stream %%{time_starttransfer} %%{time_total}\\n' "
              "https://%s:8443/stream; done" % (args.runs, c, NAME))
    urls = " ".join("https://%s:8443/ping" % NAME for _ in range(args.keepalive))
    keep = ("for i in $(seq %d); do %s -k -o /dev/null -w 'keep %%{time_total}\\n' %s | "
            "awk '{s+=$2} END {print \"keep\", s/NR}'; done" % (args.runs, c, urls))
    return "; ".join([post, stream, keep])


def rows(text):
    """{'post': [s...], 'ttfb': [...], 'stream': [...], 'keep': [per-request s...]} from the loop output."""
    out = {"post": [], "ttfb": [], "stream": [], "keep": []}
    for line in text.splitlines():
        parts = line.split()
        if parts[:1] == ["post"]:
            out["post"].append(float(parts[1]))
        elif parts[:1] == ["stream"]:
            out["ttfb"].append(float(parts[1]))
            out["stream"].append(float(parts[2]))
        elif parts[:1] == ["keep"]:
            out["keep"].append(float(parts[1]))  # the mean of the K transfers on the connection
    return out


def summary(times):
    ms = sorted(t * 1000 for t in times)
    if not ms:
        return "no data"
    return "mean %8.2f  median %8.2f  p90 %8.2f" % (statistics.mean(ms), statistics.median(ms),
                                                    ms[int(0.9 * (len(ms) - 1))])


def common_arguments(ap):
    """The runs, the build and the sizes this bench and bench/inject.py share."""
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--request-kib", type=int, default=100)
    ap.add_argument("--response-kib", type=int, default=20)
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--event-bytes", type=int, default=64)
    return ap


def main():
    ap = common_arguments(argparse.ArgumentParser())
    ap.add_argument("--keepalive", type=int, default=20)
    ap.add_argument("--tripwire", choices=("record", "off"), default="record", help="the seat's tripwire mode")
    args = ap.parse_args()
    os.environ["ASBX_BUILD"] = args.build
    from harness import Seat  # noqa: E402
    from test_egress import stage_curl  # noqa: E402
    seat = Seat(extra='tripwire = "%s"\n' % args.tripwire + '\n[egress]\nhosts = { "%s" = "%s" }\nprivate_ok = ["%s/32"]\n' % (NAME, ADDR, ADDR))
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="asbx-bench-egress-"))
    server = None
    try:
        cert, key = make_cert(tmp)
        server = up(args, cert, key)
        ws = seat.workspaces / "bench"
        ws.mkdir()
        ws.chmod(0o777)  # the agent (uid 1000) must be able to write its workspace, or nothing starts
        curl = stage_curl(ws)
        (ws / "body.json").write_bytes(b'{"input":"' + b"a" * (args.request_kib * 1024) + b'"}')
        if os.getuid() == 0:  # a root caller's agent runs as 1000: its workspace must be its own
            for p in [ws, *ws.rglob("*")]:
                os.chown(p, AGENT_UID, AGENT_UID)
        time.sleep(0.5)
        direct = subprocess.run(["bash", "-c", scripts("curl", ws / "body.json", args, True)],
                                capture_output=True, text=True, check=True)
        proc = seat.run("--egress", "http://%s:8080" % NAME, "--egress", "%s:8443" % NAME, "--workspace", str(ws),
                        "--", "bash", "-c", scripts(curl, "/sandbox/workspaces/bench/body.json", args, False), timeout=1200)
        if proc.returncode != 0:
            sys.exit("session failed (%d): %s" % (proc.returncode, proc.stderr.decode()))
        d, w = rows(direct.stdout), rows(proc.stdout.decode())
        print("runs %d; post %d KiB up / %d KiB back, new connection each; stream %d SSE events of %d B over TLS; "
              "keep-alive %d requests on one TLS connection (ms)" % (args.runs, args.request_kib, args.response_kib,
                                                                     args.events, args.event_bytes, args.keepalive))
        for key, label in (("post", "post"), ("ttfb", "stream, first byte"), ("stream", "stream, last byte"),
                           ("keep", "keep-alive, per request")):
            if len(d[key]) != args.runs or len(w[key]) != args.runs:
                sys.exit("row %s: expected %d runs, got direct %d, wall %d" % (key, args.runs, len(d[key]), len(w[key])))
            print("%-24s direct %s" % (label, summary(d[key])))
            print("%-24s wall   %s" % ("", summary(w[key])))
    finally:
        down(server)
        seat.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
