#!/usr/bin/python3
"""The cost of the egress wall on a model-sized request, next to a direct connection (root).

    bench/egress.py [--runs 30] [--build build] [--request-kib 100] [--response-kib 20] [--tripwire record|off]

An upstream HTTP server runs in a network namespace this script creates, joined by a veth pair of
its own (10.78.0.0/30; nothing outside this machine). The same curl binary POSTs a model-sized
request (default 100 KiB up, 20 KiB back) to it N times:
  direct — from the seat, straight to the address;
  wall   — from inside an agent-sandbox session with --egress, through the door and the proxy
           (each request a new connection, as a CLI's first request is).
Prints per-request time (mean / median / p90, ms) for both; figures go into docs/BENCHMARKS.md.
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

NS, HOST_IF, NS_IF, GW, ADDR = "asbx-bench-egress", "asbxbeh", "asbxben", "10.78.0.1", "10.78.0.2"
SERVER = r'''
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        body = b"x" * int(sys.argv[2])
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer((sys.argv[1], 8080), H).serve_forever()
'''


def ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True)


def up(response_bytes):
    ip("netns", "add", NS)
    ip("-n", NS, "link", "set", "lo", "up")
    ip("link", "add", HOST_IF, "type", "veth", "peer", "name", NS_IF)
    ip("link", "set", NS_IF, "netns", NS)
    ip("addr", "add", GW + "/30", "dev", HOST_IF)
    ip("link", "set", HOST_IF, "up")
    ip("-n", NS, "addr", "add", ADDR + "/30", "dev", NS_IF)
    ip("-n", NS, "link", "set", NS_IF, "up")
    return subprocess.Popen(["ip", "netns", "exec", NS, sys.executable, "-c", SERVER, ADDR, str(response_bytes)])


def down(server):
    if server:
        server.terminate()
        server.wait()
    subprocess.run(["ip", "link", "delete", HOST_IF], capture_output=True)
    subprocess.run(["ip", "netns", "delete", NS], capture_output=True)


def loop_script(curl, url, runs, body):
    return ("for i in $(seq %d); do %s -sS -o /dev/null -w '%%{time_total}\\n' -H 'Content-Type: application/json' "
            "--data-binary @%s %s; done" % (runs, curl, body, url))


def summary(name, times):
    ms = sorted(t * 1000 for t in times)
    return "%-7s n=%d mean %.2f ms  median %.2f ms  p90 %.2f ms" % (
        name, len(ms), statistics.mean(ms), statistics.median(ms), ms[int(0.9 * (len(ms) - 1))])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--request-kib", type=int, default=100)
    ap.add_argument("--response-kib", type=int, default=20)
    ap.add_argument("--tripwire", choices=("record", "off"), default="record", help="the seat's tripwire mode")
    args = ap.parse_args()
    os.environ["ASBX_BUILD"] = args.build
    from harness import Seat  # noqa: E402
    from test_egress import stage_curl  # noqa: E402
    seat = Seat(extra='tripwire = "%s"\n' % args.tripwire + '\n[egress]\nhosts = { "api.bench.test" = "%s" }\nprivate_ok = ["%s/32"]\n' % (ADDR, ADDR))
    server = None
    try:
        server = up(args.response_kib * 1024)
        ws = seat.workspaces / "bench"
        ws.mkdir()
        ws.chmod(0o777)  # the agent (uid 1000) must be able to write its workspace, or nothing starts
        curl = stage_curl(ws)
        (ws / "body.json").write_bytes(b'{"input":"' + b"a" * (args.request_kib * 1024) + b'"}')
        import time
        time.sleep(0.5)
        direct = subprocess.run(["bash", "-c", loop_script("curl", "http://%s:8080/v1/responses" % ADDR, args.runs,
                                                           ws / "body.json")], capture_output=True, text=True, check=True)
        proc = seat.run("--egress", "http://api.bench.test:8080", "--workspace", str(ws), "--", "bash", "-c",
                        loop_script(curl, "http://api.bench.test:8080/v1/responses", args.runs,
                                    "/sandbox/workspaces/bench/body.json"), timeout=600)
        if proc.returncode != 0:
            sys.exit("session failed: %s" % proc.stderr.decode())
        print("request %d KiB, response %d KiB, each on a new connection" % (args.request_kib, args.response_kib))
        print(summary("direct", [float(x) for x in direct.stdout.split()]))
        print(summary("wall", [float(x) for x in proc.stdout.decode().split()]))
    finally:
        down(server)
        seat.cleanup()


if __name__ == "__main__":
    main()
