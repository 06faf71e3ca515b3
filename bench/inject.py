#!/usr/bin/python3
"""What inject mode costs (root): the same TLS traffic direct, through the wall's blind tunnel, and
through the injecting wall (TLS terminated, the placeholder swapped, a second TLS leg upstream).

    bench/inject.py [--runs 30] [--build build] [--request-kib 100] [--response-kib 20]
                    [--events 2000] [--event-bytes 64]

An upstream runs in a network namespace this script creates, joined by a veth pair of its own
(10.75.0.0/30; nothing outside this machine), serving TLS on :443 with a certificate of a test CA
(tests/mock_model/test_ca.py) for api.anthropic.com (an inject host of the claude row) and
blind.bench.test (an allowed other host: a blind tunnel). The seat config maps both names to it and
names the test CA as `upstream_ca`. The same curl binary, N runs each:
  direct — from the seat straight to the address (trusting the test CA);
  blind  — from inside a claude session (inject mode) to blind.bench.test through the door;
  inject — from the same session to api.anthropic.com, its placeholder in Authorization.
Rows: a POST of REQUEST KiB up / RESPONSE KiB back on a new connection each; an SSE stream of EVENTS
events: time to first byte and to the last. Prints mean / median / p90 (ms); figures go into
docs/BENCHMARKS.md.
"""
import argparse
import json
import os
import pathlib
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "tests" / "mock_model"))
import egress  # noqa: E402  (its server, its rows and summary)
from test_ca import TestCa  # noqa: E402

NET = ("asbx-bench-inject", "asbxbih", "asbxbin", "10.75.0.1", "10.75.0.2")  # namespace, veth ends, gateway, address
ADDR = NET[4]
API, BLIND = "api.anthropic.com", "blind.bench.test"
SERVER = egress.SERVER.replace('self.path != "/stream"', 'not self.path.endswith("/stream")').replace(
    "plain = http.server.ThreadingHTTPServer((addr, 8080), H)\n", "").replace(
    "threading.Thread(target=plain.serve_forever, daemon=True).start()\n", "").replace("(addr, 8443)", "(addr, 443)")


def loops(curl, body, cacert, name, args, pin="", auth=""):
    """The two loops for one side, as shell text; each line of output is tagged with the row."""
    c = "%s -sS %s --cacert %s %s" % (curl, pin, cacert, auth)
    post = ("for i in $(seq %d); do %s -o /dev/null -w 'post %%{time_total}\\n' -H 'Content-Type: application/json' "
            "--data-binary @%s https://%s/v1/messages; done" % (args.runs, c, body, name))
    stream = ("for i in $(seq %d); do %s -N -o /dev/null -w 'stream %%{time_starttransfer} %%{time_total}\\n' "
              "https://%s/v1/stream; done" % (args.runs, c, name))
    return post + "; " + stream


def main():
    ap = egress.common_arguments(argparse.ArgumentParser())
    args = ap.parse_args()
    os.environ["ASBX_BUILD"] = args.build
    from harness import Seat  # noqa: E402
    from test_egress import stage_curl  # noqa: E402
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="asbx-bench-inject-"))
    ca = TestCa(tmp / "ca")
    hosts = '{ "%s" = "%s", "%s" = "%s" }' % (API, ADDR, BLIND, ADDR)
    seat = Seat(extra='\n[egress]\nhosts = %s\nprivate_ok = ["%s/32"]\nupstream_ca = "%s"\n' % (hosts, ADDR, ca.cert))
    server = None
    try:
        cert, key = ca.leaf("bench", [API, BLIND])
        server = egress.up(args, cert, key, SERVER, NET)
        ws = seat.workspaces / "bench"
        ws.mkdir()
        curl = stage_curl(ws)
        shutil.copy(ca.cert, ws / "test-ca.pem")
        (ws / "body.json").write_bytes(b'{"input":"' + b"a" * (args.request_kib * 1024) + b'"}')
        if os.getuid() == 0:  # a root caller's agent runs as 1000: its workspace must be its own
            for p in [ws, *ws.rglob("*")]:
                os.chown(p, egress.AGENT_UID, egress.AGENT_UID)
        credential = tmp / "claude.json"
        credential.write_text(json.dumps({"claudeAiOauth": {
            "accessToken": "sk-ant-oat01-" + secrets.token_hex(24), "refreshToken": "sk-ant-ort01-" + secrets.token_hex(24),
            "expiresAt": int(time.time() * 1000) + 86400 * 1000, "scopes": ["user:inference"], "subscriptionType": "max"}}))
        credential.chmod(0o600)
        time.sleep(0.5)
        pin = "--noproxy '*' --resolve %s:443:%s --resolve %s:443:%s" % (API, ADDR, BLIND, ADDR)
        direct = subprocess.run(["bash", "-c", loops("curl", ws / "body.json", ca.cert, API, args, pin=pin)],
                                capture_output=True, text=True, check=True)
        inside = "/sandbox/workspaces/bench"
        token = "$(grep -o 'sk-ant-oat01-[A-Za-z0-9_-]*' ~/.claude/.credentials.json | head -1)"
        script = ("echo '== blind'; %s; echo '== inject'; %s" % (
            loops(curl, inside + "/body.json", inside + "/test-ca.pem", BLIND, args),
            loops(curl, inside + "/body.json", "/sandbox/ca/session-ca.pem", API, args,
                  auth="-H \"Authorization: Bearer %s\"" % token)))
        proc, record = seat.status("--runtime", "claude", "--credential", str(credential), "--egress", "default",
                        "--egress", BLIND + ":443", "--workspace", str(ws), "--", "bash", "-c", script, timeout=1200)
        if proc.returncode != 0:
            sys.exit("session failed (%d): %s" % (proc.returncode, proc.stderr.decode()))
        cred = record["credentials"][0]
        if cred["mode"] != "inject" or cred["injected"].get(API, 0) != 2 * args.runs:
            sys.exit("the inject side was not injected: %s" % json.dumps(cred))
        blind_text, _, inject_text = proc.stdout.decode().partition("== inject")
        sides = [("direct", egress.rows(direct.stdout)), ("blind", egress.rows(blind_text)),
                 ("inject", egress.rows(inject_text))]
        print("mode %s, injected %s" % (cred["mode"], json.dumps(cred["injected"])))
        print("runs %d; post %d KiB up / %d KiB back over TLS, new connection each; stream %d SSE events of %d B (ms)"
              % (args.runs, args.request_kib, args.response_kib, args.events, args.event_bytes))
        for key, label in (("post", "post"), ("ttfb", "stream, first byte"), ("stream", "stream, last byte")):
            for side, r in sides:
                if len(r[key]) != args.runs:
                    sys.exit("row %s, %s: expected %d runs, got %d\n%s" % (key, side, args.runs, len(r[key]),
                                                                         proc.stderr.decode()[-2000:]))
                print("%-20s %-7s %s" % (label if side == "direct" else "", side, egress.summary(r[key])))
    finally:
        egress.down(server, NET)
        seat.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
