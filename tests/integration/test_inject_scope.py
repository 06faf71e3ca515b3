"""Inject mode's authority, narrowed (issue 33; docs/CREDENTIALS.md "Inject mode"). Against the TLS
mock's header-echoing paths (tests/mock_model/server.py --log-secrets: /v1/echo-auth,
/v1/echo-headers), from inside a real session:
- the refresh token's placeholder in Authorization goes up as it is: the echo hands back a
  placeholder (the control: the access token's placeholder is swapped, its echo is the real token;
  without the fix the refresh placeholder was swapped too and the real refresh token arrived);
- a duplicated credential field, TRACE/PROPFIND, Upgrade: h2c are refused before a byte goes up;
  Connection, Keep-Alive, TE never reach the upstream;
- the real token the echo handed back, stored base64, hex, reversed or printed base64url, is found
  by the end-of-session scan: exit 226 credential_exposed naming each place (the control: a
  base64 of a value that is not the real one is no finding)."""
import json
import os
import sys
import unittest

import test_agents_e2e as e2e
from test_inject import InjectSeat, claude_real

S_CLIENT = ("timeout 20 openssl s_client -quiet -proxy 127.0.0.1:3128 -connect api.anthropic.com:443 "
            "-servername api.anthropic.com -CAfile /sandbox/ca/session-ca.pem 2>/dev/null")
PROBES = r"""cred=~/.claude/.credentials.json; W=/sandbox/workspaces/%s
a=$(grep -o 'sk-ant-oat01-[A-Za-z0-9_-]*' $cred | head -1); r=$(grep -o 'sk-ant-ort01-[A-Za-z0-9_-]*' $cred | head -1)
send() { printf "$@" | S_CLIENT; }
H='Host: api.anthropic.com\r\nConnection: close\r\n'
send "GET /v1/echo-headers HTTP/1.1\r\n${H}Authorization: Bearer %%s\r\n\r\n" "$r" > $W/echo-refresh
send "GET /v1/echo-headers HTTP/1.1\r\n${H}Authorization: Bearer %%s\r\n\r\n" "$a" > $W/echo-access
send "GET /v1/echo-headers HTTP/1.1\r\n${H}Authorization: Bearer %%s\r\nAuthorization: Bearer %%s\r\n\r\n" "$a" "$r" | head -1 > $W/dup
send "GET /v1/echo-headers HTTP/1.1\r\n${H}Authorization: Bearer %%s\r\nx-api-key: %%s\r\n\r\n" "$a" "$a" | head -1 > $W/dup2
send "TRACE /v1/models HTTP/1.1\r\n${H}\r\n" | head -1 > $W/trace
send "PROPFIND /v1/ HTTP/1.1\r\n${H}\r\n" | head -1 > $W/propfind
send "GET /v1/models HTTP/1.1\r\n${H}Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n" | head -1 > $W/h2c
printf "GET /v1/echo-headers HTTP/1.1\r\nHost: api.anthropic.com\r\nConnection: keep-alive, x-keep\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\nX-Keep: 1\r\n\r\n" |
  S_CLIENT4 > $W/hop
true""".replace("S_CLIENT4", S_CLIENT.replace("timeout 20", "timeout 4")).replace("S_CLIENT", S_CLIENT)
ENCODED = r"""W=/sandbox/workspaces/%s
a=$(grep -o 'sk-ant-oat01-[A-Za-z0-9_-]*' ~/.claude/.credentials.json | head -1)
printf 'GET /v1/echo-auth HTTP/1.1\r\nHost: api.anthropic.com\r\nAuthorization: Bearer %%s\r\nConnection: close\r\n\r\n' "$a" | S_CLIENT > /tmp/echoed
t=$(grep -o 'sk-ant-oat01-[A-Za-z0-9_-]*' /tmp/echoed); rm /tmp/echoed; [ -n "$t" ] || exit 9
printf '%%s' "$t" | base64 -w0 > $W/stored.b64
printf '%%s' "$t" | perl -ne 'print unpack("H*", $_)' > /dev/shm/stored.hex
printf '%%s' "$t" | perl -ne 'print scalar reverse $_' > ~/stored.rev
printf 'sk-ant-oat01-notthereal%%s' "${t#sk-ant-oat01-}" | base64 -w0 > $W/other.b64
printf '{"token":"%%s"}' "$t" | base64 -w0 | tr '+/' '-_'; echo
exit 4""".replace("S_CLIENT", S_CLIENT)

NAMES = r"""W=/sandbox/workspaces/%s
a=$(grep -o 'sk-ant-oat01-[A-Za-z0-9_-]*' ~/.claude/.credentials.json | head -1)
printf 'GET /v1/echo-auth HTTP/1.1\r\nHost: api.anthropic.com\r\nAuthorization: Bearer %%s\r\nConnection: close\r\n\r\n' "$a" | S_CLIENT > /tmp/echoed
t=$(grep -o 'sk-ant-oat01-[A-Za-z0-9_-]*' /tmp/echoed); rm /tmp/echoed; [ -n "$t" ] || exit 9
touch "$W/n-$t"
ln -s "x$t" $W/l
git init -q $W/g && git -C $W/g -c user.name=a -c user.email=a@a commit -q --allow-empty -m x && git -C $W/g branch "k$t"
D=$W/$(printf 'a/%%.0s' $(seq 66)); mkdir -p $D && printf '%%s' "$t" > $D/deep
exit 4""".replace("S_CLIENT", S_CLIENT)
WITHHELD = "(a name holding the value)"


class Scope(InjectSeat):
    def workspace(self, name):
        ws = self.seat.workspaces / name
        ws.mkdir()
        os.chown(ws, 1000, 1000)  # the agent's, as docs/MOUNTS.md "Ownership" asks
        return ws

    def run_session(self, tag, script):
        up = self.upstream(tag)
        self.seat.write(self.base_config + up.seat_egress(self.ca))
        real = claude_real()
        credential = self.fake_credential("%s.json" % tag, real)
        ws = self.workspace("isc-" + tag)
        session = "isc-%s-%d" % (tag, os.getpid())
        proc, record = self.seat.status("--id", session, "--runtime", "claude", "--credential", str(credential),
                                        "--workspace", str(ws), "--egress", "default", "--", "bash", "-c",
                                        script % ws.name, timeout=e2e.RUN_TIMEOUT)
        self.assertNoContainer(session)
        return proc, record, up, real["claudeAiOauth"], ws

    @staticmethod
    def echoed(path):
        head, _, body = path.read_bytes().decode().partition("\r\n\r\n")  # read_text() would turn CRLF into LF
        return head, {k.lower(): v for k, v in json.loads(body)["headers"]} if body else {}

    def test_only_the_access_token_is_swapped_and_the_request_carries_nothing_else(self):
        proc, record, up, real, ws = self.run_session("scp", PROBES)
        # 226: the control's echo of the real access token was kept in the workspace (below)
        self.assertEqual((proc.returncode, record["agent_exit_code"]), (226, 0), proc.stderr.decode(errors="replace"))
        head, fields = self.echoed(ws / "echo-refresh")
        self.assertRegex(head, "^HTTP/1.1 200")
        self.assertRegex(fields["authorization"], r"^Bearer sk-ant-ort01-")
        self.assertNotEqual(fields["authorization"], "Bearer " + real["refreshToken"], "the real refresh token came back")
        _, control = self.echoed(ws / "echo-access")  # the control: the access token is swapped, the echo is real
        self.assertEqual(control["authorization"], "Bearer " + real["accessToken"])
        for name, status in (("dup", 400), ("dup2", 400), ("trace", 405), ("propfind", 405), ("h2c", 426)):
            self.assertRegex((ws / name).read_bytes().decode(), "^HTTP/1.1 %d " % status, name)
        _, hop = self.echoed(ws / "hop")
        self.assertEqual(hop.get("x-keep"), "1", hop)
        self.assertEqual([f for f in ("connection", "keep-alive", "te") if f in hop], [], hop)
        sent = up.requests()
        self.assertEqual([r["method"] for r in sent if r["method"] not in ("GET", "POST")], [])
        self.assertEqual(len([r for r in sent if r.get("api") == "echo_headers"]), 3, json.dumps(sent))
        self.assertNotIn(real["refreshToken"], json.dumps(sent))
        reasons = {r["reason"]: r["count"] for r in record["egress"]["refused"]}
        self.assertEqual(reasons, {"credential_repeated": 2, "inject_method_refused": 2, "upgrade_refused": 1}, reasons)
        # the real access token the echo handed back sits in the workspace: found (the scan's own control)
        self.assertEqual([e["where"] for e in record["credential_exposed"]],
                         ["/sandbox/workspaces/isc-scp/echo-access"], json.dumps(record["credential_exposed"]))
        print("\nscope: refused %s; the upstream saw %s" % (json.dumps(reasons), json.dumps(
            sorted({f for r in sent for f in r.get("fields", [])}))), file=sys.stderr)

    def test_the_real_token_stored_encoded_or_printed_is_found(self):
        proc, record, up, real, ws = self.run_session("enc", ENCODED)
        self.assertEqual(proc.returncode, 226, proc.stderr.decode(errors="replace"))
        self.assertEqual((record["error_kind"], record["agent_exit_code"]), ("credential_exposed", 4))
        self.assertEqual(sorted(e["where"] for e in record["credential_exposed"]),
                         sorted(["(stdout)", "/dev/shm/stored.hex", "/sandbox/home/stored.rev",
                                 "/sandbox/workspaces/isc-enc/stored.b64"]), json.dumps(record["credential_exposed"]))
        self.assertTrue((ws / "other.b64").exists())  # the control: written, and no finding
        self.assertNotIn(real["accessToken"], json.dumps(record) + proc.stderr.decode())
        print("\nencoded: found %s" % json.dumps(record["credential_exposed"]), file=sys.stderr)

    def test_the_real_token_as_a_name_a_link_target_or_a_ref_is_found_and_a_deep_tree_is_said(self):
        proc, record, up, real, ws = self.run_session("nam", NAMES)
        self.assertEqual(proc.returncode, 226, proc.stderr.decode(errors="replace"))
        self.assertEqual((record["error_kind"], record["agent_exit_code"]), ("credential_exposed", 4))
        w = "/sandbox/workspaces/isc-nam"
        self.assertEqual(sorted(e["where"] for e in record["credential_exposed"]),
                         sorted([f"{w}/{WITHHELD}", f"{w}/l (its link target)", f"{w}/g/.git/refs/heads/{WITHHELD}",
                                 f"{w}/g/.git/logs/refs/heads/{WITHHELD}"]), json.dumps(record["credential_exposed"]))
        self.assertIn(f"the end-of-session secret scan did not search {w}/{'/'.join(['a'] * 65)}: deeper than its "
                      "bound (64 directory levels)", record["warnings"])
        self.assertFalse(any("stopped at its bound" in x for x in record["warnings"]), record["warnings"])
        self.assertTrue(any(p.name.startswith("n-") for p in ws.iterdir()))  # planted as named
        self.assertNotIn(real["accessToken"], json.dumps(record) + proc.stderr.decode())
        print("\nnames: found %s" % json.dumps(record["credential_exposed"]), file=sys.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
