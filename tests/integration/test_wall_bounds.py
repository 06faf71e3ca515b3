"""The wall's bounds under a hostile agent (issue 33, docs/EGRESS.md "Bounds").
TokenFlood: clients pipeline POST /v1/oauth/token on the refresh host (answered by the wall itself)
and never read. The wall stops reading a connection while its answers wait (backpressure), answers
the first refusal past the session's refresh limit with `connection: close` and closes: the
launcher's peak RSS stays near a session without the flood, the record counts one refusal a
connection. Without the fix the answers queued without end (205 MB → 1.18 GB in 27 s) and the
record counted millions of refusals: the asserted counts fail there.
SilentConnections: 64 connections that never send a head hold every slot for kHeadMs (10 s), not
for the idle limit (300 s); past the limit each refusal is answered at once, never lingering on the
accept thread (before: about a second each)."""
import json
import os
import re
import subprocess
import sys
import unittest

from harness import LAUNCHER, peak_rss_argv, peak_rss_bytes
import test_agents_e2e as e2e
from test_inject import InjectSeat, claude_real

S_CLIENT = ("openssl s_client -quiet -proxy 127.0.0.1:3128 -connect %s:443 -servername %s "
            "-CAfile /sandbox/ca/session-ca.pem 2>/dev/null")
FLOOD = r"""b='{"grant_type":"refresh_token","refresh_token":"sk-ant-ort01-placeholder"}'
req=$(printf 'POST /v1/oauth/token HTTP/1.1\r\nHost: platform.claude.com\r\nContent-Type: application/json\r\nContent-Length: %%d\r\n\r\n%%s' ${#b} "$b")
worker() {
  end=$(( $(date +%%s) + %d )); n=0
  while [ $(date +%%s) -lt $end ]; do
    n=$((n+1))
    while :; do printf '%%s' "$req"; done 2>/dev/null | timeout 8 %s | { sleep 6; cat >/dev/null; }
  done
  echo $n
}
for w in 1 2 3 4; do worker > /tmp/w$w & done; wait
awk '{s+=$1} END {print "connections", s}' /tmp/w1 /tmp/w2 /tmp/w3 /tmp/w4"""
SILENT = r"""ms() { echo $(( $(date +%%s%%N) / 1000000 )); }
for i in $(seq 64); do exec {fd}<>/dev/tcp/127.0.0.1/3128; done
t0=$(ms)
for i in $(seq 16); do exec {fd}<>/dev/tcp/127.0.0.1/3128; timeout 5 head -c 12 <&$fd; echo; done | sort | uniq -c | sed 's/^ *//'
echo refused_ms $(( $(ms) - t0 ))
t0=$(ms)
until printf 'GET /v1/models HTTP/1.1\r\nHost: api.anthropic.com\r\nConnection: close\r\n\r\n' |
      timeout 20 %s | head -1 | grep -q '^HTTP/1.1 200'; do
  [ $(( $(ms) - t0 )) -gt 120000 ] && break; sleep 1
done
echo through_ms $(( $(ms) - t0 ))"""


class WallBounds(InjectSeat):
    def measured(self, tag, script):
        """The session under time(1): (process, record, the launcher's own peak RSS)."""
        up = self.upstream(tag)
        self.seat.write(self.base_config + up.seat_egress(self.ca))
        credential = self.fake_credential("%s.json" % tag, claude_real())
        session = "wb-%s-%d" % (tag, os.getpid())
        status, report = self.seat.dir / ("%s.json" % session), self.seat.dir / ("%s.rss" % session)
        argv = [str(LAUNCHER), "--status-file", str(status), "--id", session, "--runtime", "claude", "--credential",
                str(credential), "--egress", "default", "--timeout", "240s", "--", "bash", "-c", script]
        proc = subprocess.run(peak_rss_argv(argv, report), capture_output=True, env=self.seat.env(), timeout=e2e.RUN_TIMEOUT)
        self.assertNoContainer(session)
        return proc, json.loads(status.read_text()), peak_rss_bytes(report), up

    @staticmethod
    def refused(record, reason):
        return sum(r["count"] for r in record["egress"]["refused"] if r["reason"] == reason)


class TokenFlood(WallBounds):
    def test_pipelined_token_requests_never_read_keep_the_launcher_bounded(self):
        _, _, baseline, _ = self.measured("wbb", "true")
        proc, record, peak, up = self.measured("wbf", FLOOD % (24, S_CLIENT % (("platform.claude.com",) * 2)))
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        connections = int(re.search(rb"connections (\d+)", proc.stdout).group(1))
        self.assertGreaterEqual(connections, 4)
        self.assertEqual(record["credentials"][0]["refreshes_answered"], 100)
        # one 429 a connection (the first, after the 100 answers, may be one of them): not one per request
        limited = self.refused(record, "refresh_limit")
        self.assertGreaterEqual(limited, 1)
        self.assertLessEqual(limited, connections, json.dumps(record["egress"]["refused"]))
        self.assertLess(len(json.dumps(record)), 64 << 10)
        self.assertLess(peak - baseline, 48 << 20, "launcher peak RSS %d vs %d bytes" % (peak, baseline))
        self.assertEqual(up.requests(), [], "the token endpoint was reached")
        print("\ntoken flood: %d connections, %d refusals on record; launcher peak RSS %.1f MiB (without the flood: "
              "%.1f MiB)" % (connections, limited, peak / 2**20, baseline / 2**20), file=sys.stderr)


class SilentConnections(WallBounds):
    def test_silent_connections_free_their_slots_and_refusals_never_wait(self):
        proc, record, _, up = self.measured("wbs", SILENT % (S_CLIENT % (("api.anthropic.com",) * 2)))
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        out = proc.stdout.decode()
        self.assertIn("16 HTTP/1.1 403\n", out)  # each connection past the limit answered
        refused_ms = int(re.search(r"refused_ms (\d+)", out).group(1))
        through_ms = int(re.search(r"through_ms (\d+)", out).group(1))
        # before: each refusal lingered about a second on the accept thread (16 of them: ≥ 16 s)
        self.assertLess(refused_ms, 8000, out)
        # before: the slots stayed held for the idle limit (300 s); the head timeout is 10 s
        self.assertLess(through_ms, 60000, out)
        self.assertTrue([r for r in up.requests() if r.get("path") == "/v1/models"], "the real request never arrived")
        self.assertEqual(self.refused(record, "head_timeout"), 64, json.dumps(record["egress"]["refused"]))
        self.assertGreaterEqual(self.refused(record, "connection_limit"), 16)
        self.assertIn("egress: refused (unknown):0: head_timeout (no request head within 10 s)", proc.stderr.decode())
        print("\nsilent connections: 16 refusals answered in %d ms; a real request through after %d ms; refused: %s"
              % (refused_ms, through_ms, json.dumps(record["egress"]["refused"])), file=sys.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
