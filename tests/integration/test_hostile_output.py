"""The launcher holds under a hostile agent's output, paths and requests (docs/THREATS.md, "The
launcher's own streams, files and forwarding"). Each class is one attack; each test asserts the
control that stops it and shows the attack is real (what a naive reader, writer or upstream would
have met). Session ids start with `ho-`.

Figures (peak RSS, time to end, what the upstream received) are printed on stderr with
ASBX_FIGURES=1; bench/hostile_output.py measures the same against any build."""
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from harness import (CODES, LAUNCHER, ROOT, SeatTest, drop_veth_namespace, free_veth_slot, peak_rss_argv, peak_rss_bytes,
                     serve_in_namespace, stop_server, unavailable, veth_namespace)
from test_agents_e2e import AgentSeat

AGENT_UID = 1000  # a root caller's agent
MiB = 1024 * 1024
FIGURES = os.environ.get("ASBX_FIGURES") == "1"
RECORDER = ROOT / "tests" / "integration" / "http_recorder.py"
# A caller-side bound far below what the output would cost if it were held: the launcher's own
# RSS is ~10 MiB, its sinks hold at most 2 x (256 + 64) KiB per stream.
RSS_BOUND = 48 * MiB


def figure(text):
    if FIGURES:
        print("FIGURE " + text, file=sys.stderr, flush=True)


def slow_read(stream, seen, chunk=64 * 1024, pause=0.005):
    """Reads `chunk` bytes every `pause` seconds until EOF; seen[0] counts the bytes."""
    while True:
        data = stream.read1(chunk) if hasattr(stream, "read1") else stream.read(chunk)
        if not data:
            return
        seen[0] += len(data)
        time.sleep(pause)


def run_measured(argv, env, slow, timeout=300):
    """Runs the launcher with stdout and stderr as pipes, `slow` ("out" or "err") read slowly and
    the other fast; returns (exit code, peak RSS bytes, seconds, {stream: bytes}, the bytes of
    the slow stream read when the agent's end marker arrived on the fast one)."""
    t0 = time.monotonic()
    report = tempfile.NamedTemporaryFile(prefix="asbx-rss-")
    p = subprocess.Popen(peak_rss_argv(argv, report.name), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    seen = {"out": [0], "err": [0]}
    fast_text, marker_at = bytearray(), [None]
    slow_stream = p.stdout if slow == "out" else p.stderr
    fast_stream = p.stderr if slow == "out" else p.stdout

    def fast():
        while True:
            data = fast_stream.read1(65536)
            if not data:
                return
            fast_text.extend(data)
            if marker_at[0] is None and b"agent-done" in fast_text:
                marker_at[0] = seen[slow][0]

    threads = [threading.Thread(target=slow_read, args=(slow_stream, seen[slow])), threading.Thread(target=fast)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    p.wait()
    p.stdout.close()
    p.stderr.close()
    return p.returncode, peak_rss_bytes(report.name), time.monotonic() - t0, {k: v[0] for k, v in seen.items()}, marker_at[0]


def flood_script(connections, name):
    return (
        "yes hostile-stderr >&2 &\n"  # the caller's stderr pipe is full from the start
        "name=%s\n"
        "for i in $(seq %d); do\n"
        "  exec 3<>/dev/tcp/127.0.0.1/3128 || continue\n"
        "  printf 'CONNECT %%s:443 HTTP/1.1\\r\\nHost: %%s:443\\r\\n\\r\\n' \"$name\" \"$name\" >&3\n"
        "  exec 3>&-\n"
        "done\n"
        "sleep 600\n" % (name, connections))


class SlowReader(SeatTest):
    """`head -c 128M /dev/zero` to a caller that reads 64 KiB every 5 ms: the launcher's memory
    stays bounded (it held every byte before: 522 MiB for 600 MiB read that way) and the agent's
    writer is paced by the reader (it ends only when nearly all of its output has been read)."""

    SIZE = 128 * MiB

    def check(self, slow, script):
        argv = [str(LAUNCHER), "--id", "ho-slow-" + slow, "--", "sh", "-c", script]
        code, rss, seconds, seen, marker_at = run_measured(argv, self.seat.env(), slow)
        figure("slow reader on std%s: %d MiB through, peak RSS %.1f MiB, %.1f s" % (slow, seen[slow] // MiB, rss / MiB,
                                                                                  seconds))
        self.assertEqual((code, seen[slow]), (0, self.SIZE))
        self.assertLess(rss, RSS_BOUND)
        # Paced: the agent's last write returned only when what is in flight (pipes, podman's
        # buffers, our two sinks) was all that was left to read.
        self.assertIsNotNone(marker_at)
        self.assertGreater(marker_at, self.SIZE - 24 * MiB, "the agent ran ahead of its reader")
        self.assertNoContainer("ho-slow-" + slow)

    def test_stdout(self):
        self.check("out", "head -c %d /dev/zero; echo agent-done >&2" % self.SIZE)

    def test_stderr(self):
        self.check("err", "head -c %d /dev/zero >&2; echo agent-done" % self.SIZE)

    def test_capture_log(self):
        """The capture log is a file: nothing waits, and nothing is held either."""
        log = self.seat.dir / "capture.log"
        self.addCleanup(lambda: log.unlink(missing_ok=True))
        argv = [str(LAUNCHER), "--id", "ho-slow-log", "--capture-log", str(log), "--", "sh", "-c",
                "head -c %d /dev/zero; head -c %d /dev/zero >&2" % (self.SIZE, self.SIZE)]
        code, rss, seconds, seen, _ = run_measured(argv, self.seat.env(), "out")
        figure("capture log: %d MiB written, peak RSS %.1f MiB, %.1f s" % (log.stat().st_size // MiB, rss / MiB, seconds))
        self.assertEqual((code, log.stat().st_size, seen["out"]), (0, 2 * self.SIZE, len(str(log)) + 1))
        self.assertLess(rss, RSS_BOUND)


class RemoteSlowReader(unittest.TestCase):
    """The same slow caller of a session dispatched to a seat host over ssh: the caller's relay
    stops reading the channel while its queues are full, so the ssh window closes and the seat
    (then the agent) waits; the caller's memory stays bounded."""

    SIZE = 64 * MiB

    def setUp(self):
        from test_remote import R1, REGISTRY
        if not LAUNCHER.exists() or not REGISTRY.exists():
            unavailable(self, "seat %s not up (%s)" % (R1, REGISTRY))
        self.seat_name, self.registry = R1, REGISTRY
        self.dir = pathlib.Path(subprocess.check_output(["mktemp", "-d", "/tmp/asbx-ho-remote-XXXXXX"], text=True).strip())
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def test_stdout_through_the_relay(self):
        env = dict(os.environ, XDG_CONFIG_HOME=str(self.dir / "config"), XDG_STATE_HOME=str(self.dir / "state"))
        argv = [str(LAUNCHER), "--registry", str(self.registry), "--host", self.seat_name, "--id", "ho-remote-slow", "--",
                "sh", "-c", "head -c %d /dev/zero; echo agent-done >&2" % self.SIZE]
        code, rss, seconds, seen, marker_at = run_measured(argv, env, "out")
        figure("remote slow reader: %d MiB through, caller peak RSS %.1f MiB, %.1f s" % (seen["out"] // MiB, rss / MiB,
                                                                                       seconds))
        self.assertEqual((code, seen["out"]), (0, self.SIZE))
        self.assertLess(rss, RSS_BOUND)
        self.assertIsNotNone(marker_at)
        self.assertGreater(marker_at, self.SIZE - 24 * MiB, "the agent ran ahead of its reader")


class RefusalFlood(SeatTest):
    """An --egress session whose agent fills stderr and opens 1500 connections asking for a long
    unlisted name, its caller holding stdout and stderr as pipes and reading neither: the launcher still ends at the
    timeout with the record written and the container removed (it hung past 60 s before, a proxy
    thread blocked writing a refusal line), and stderr carries a bounded number of lines."""

    def test_the_timeout_record_and_removal_hold_while_nobody_reads(self):
        name = ".".join(c * 60 for c in "abc") + ".example"
        status = self.seat.dir / "status-flood.json"
        t0 = time.monotonic()
        p = subprocess.Popen([str(LAUNCHER), "--id", "ho-flood", "--status-file", str(status), "--egress",
                              "api.mock.test:443", "--timeout", "10s", "--", "bash", "-c", flood_script(1500, name)],
                             env=self.seat.env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            code = p.wait(timeout=90)
        except subprocess.TimeoutExpired:
            figure("refusal flood: still running at 90 s, status file %s" % ("written" if status.exists() else "absent"))
            p.kill()
            p.wait()
            raise
        finally:
            err = p.stderr.read().decode()
            p.stdout.close()
            p.stderr.close()
        seconds = time.monotonic() - t0
        record = json.loads(status.read_text())
        refused = {(r["host"], r["reason"]): r["count"] for r in record["egress"]["refused"]}
        lines = err.count("egress: refused")
        figure("refusal flood: ended after %.1f s, %d refusals recorded, %d refusal lines on stderr (%d bytes)"
               % (seconds, refused.get((name, "not_allowed"), 0), lines, len(err)))
        self.assertEqual((code, record["error_kind"], record["cause"]), (CODES["killed_timeout"], "killed_timeout", "timeout"))
        self.assertTrue(record["container_removed"])
        self.assertLess(seconds, 10 + 30)
        self.assertGreater(refused.get((name, "not_allowed"), 0), 300)  # more than the pipe and the queue hold
        self.assertLessEqual(lines, 300)
        self.assertLessEqual(len(err), 64 * 1024 + 1024)  # the pipe's own capacity: nothing else waited
        self.assertNoContainer("ho-flood")


class PlantedParents(AgentSeat):
    """The agent swaps directories above the files a root launcher writes (status file, ledger,
    state dir, capture log) for symlinks to somewhere else: nothing is written there, each is
    refused with the component named, and the session's own outcome is unchanged."""

    def setUp(self):
        super().setUp()
        self.ws = self.seat.workspaces / "ho-files"
        self.ws.mkdir()
        os.chown(self.ws, AGENT_UID, AGENT_UID)
        for sub in ("out", "logs"):
            (self.ws / sub).mkdir()
            os.chown(self.ws / sub, AGENT_UID, AGENT_UID)
        self.victims = {name: self.seat.dir / ("victim-" + name) for name in ("out", "logs", "kept")}
        for path in self.victims.values():
            path.mkdir()
        (self.victims["out"] / "status.json").write_text("precious\n")

    def assertVictimsIntact(self):
        self.assertEqual(sorted(os.listdir(self.victims["out"])), ["status.json"])
        self.assertEqual((self.victims["out"] / "status.json").read_text(), "precious\n")
        self.assertEqual(os.listdir(self.victims["logs"]), [])
        self.assertEqual(os.listdir(self.victims["kept"]), [])

    def test_status_file_ledger_and_state_dir_under_swapped_parents(self):
        ws = self.ws
        plant = ("cd %s && rm -rf out logs && ln -s %s out && ln -s %s logs && ln -s %s kept && "
                 "mkdir -p ~/.codex/sessions && echo kept > ~/.codex/sessions/r.jsonl && echo planted; exit 7"
                 % ("/sandbox/workspaces/" + ws.name, self.victims["out"], self.victims["logs"], self.victims["kept"]))
        credential = self.fake_credential("codex.json", {"auth_mode": "apikey", "OPENAI_API_KEY": "sk-mock-ho"})
        proc = self.seat.run("--id", "ho-parents", "--workspace", str(ws), "--status-file", str(ws / "out/status.json"),
                             "--ledger", str(ws / "logs/ledger.jsonl"), "--runtime", "codex", "--credential",
                             str(credential), "--state-dir", str(ws / "kept"), "--", "bash", "-c", plant)
        err = proc.stderr.decode()
        figure("planted parents: exit %d; in the victims: %r" % (proc.returncode, {
            k: sorted(os.listdir(v)) for k, v in self.victims.items()}))
        self.assertEqual((proc.returncode, proc.stdout), (7, b"planted\n"), err)
        # The attack is real: each path now leads into a victim directory.
        for sub in ("out", "logs", "kept"):
            self.assertEqual(os.path.realpath(ws / sub), str(self.victims[sub]))
        for line in ("warning: cannot write status file %s/out/status.json: '%s/out' is a symlink (refused)" % (ws, ws),
                     "warning: cannot append to ledger %s/logs/ledger.jsonl: '%s/logs' is a symlink (refused)" % (ws, ws),
                     "warning: state: '%s/kept' is a symlink (refused)" % ws):
            self.assertIn("agent-sandbox: " + line + "\n", err)
        self.assertVictimsIntact()
        self.assertNoContainer("ho-parents")

    def test_a_capture_log_under_a_parent_left_by_an_earlier_session(self):
        shutil.rmtree(self.ws / "out")
        os.symlink(self.victims["out"], self.ws / "out")
        os.lchown(self.ws / "out", AGENT_UID, AGENT_UID)  # what the earlier session's agent made
        status = self.seat.dir / "status-capture.json"
        proc = self.seat.run("--id", "ho-capture", "--status-file", str(status), "--capture-log",
                             str(self.ws / "out/capture.log"), "--", "true")
        self.assertLauncherError(proc, json.loads(status.read_text()), "usage",
                                 "--capture-log: '%s/out' is a symlink (refused)" % self.ws)
        self.assertEqual(proc.stdout, b"")
        self.assertVictimsIntact()
        self.assertNoContainer("ho-capture")

    def test_a_root_owned_system_link_is_still_followed(self):
        """The rule refuses the agent's links, not the system's: /var/run -> /run on a seat."""
        if not os.path.islink("/var/run") or os.lstat("/var/run").st_uid != 0:
            self.skipTest("this seat has no root-owned /var/run link")
        status = pathlib.Path("/var/run/asbx-ho-status-%d.json" % os.getpid())
        self.addCleanup(lambda: status.unlink(missing_ok=True))
        proc = self.seat.run("--id", "ho-varrun", "--status-file", str(status), "--", "true")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(status.read_text())["outcome"], "exited")


class Recorder:
    """http_recorder.py on a veth address inside a network namespace of the test's own."""

    def __init__(self):
        n = free_veth_slot("hoh")
        self.name, self.host_if, self.ns_if = "ho-rec-%d" % n, "hoh%d" % n, "hon%d" % n
        self.address, self.gateway = "10.79.%d.2" % n, "10.79.%d.1" % n
        self.dir = pathlib.Path(subprocess.check_output(["mktemp", "-d", "/tmp/asbx-ho-XXXXXX"], text=True).strip())
        self.log = self.dir / "received.jsonl"
        self.proc = None

    def start(self):
        veth_namespace(self.name, self.host_if, self.ns_if, self.gateway, self.address)
        self.proc, self.port = serve_in_namespace(
            self.name, [sys.executable, str(RECORDER), "--host", self.address, "--log", str(self.log)], "recorder")
        return self

    def stop(self):
        if self.proc:
            stop_server(self.proc)
        drop_veth_namespace(self.name, self.host_if)
        shutil.rmtree(self.dir, ignore_errors=True)

    def received(self):
        return [json.loads(l)["bytes"] for l in self.log.read_text().splitlines()] if self.log.exists() else []


# name -> (the raw request the agent sends, the status line it gets back). HOST is the listed
# authority, api.mock.test:PORT; evil.example and /smuggled must never reach the upstream.
CORPUS = [
    ("pipelined", "GET http://HOST/one HTTP/1.1\\r\\nHost: HOST\\r\\n\\r\\n"
                  "GET http://HOST/two HTTP/1.1\\r\\nHost: evil.example\\r\\n\\r\\n", "200 OK"),
    ("host-twice", "GET http://HOST/x HTTP/1.1\\r\\nHost: HOST\\r\\nHost: evil.example\\r\\n\\r\\n", "400 Bad Request"),
    ("cl-te", "POST http://HOST/x HTTP/1.1\\r\\nHost: HOST\\r\\nContent-Length: 62\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n"
              "0\\r\\n\\r\\nGET http://HOST/smuggled HTTP/1.1\\r\\nHost: evil.example\\r\\n\\r\\n", "400 Bad Request"),
    ("cl-twice", "POST http://HOST/x HTTP/1.1\\r\\nHost: HOST\\r\\nContent-Length: 3\\r\\nContent-Length: 40\\r\\n\\r\\nabc"
                 "GET http://HOST/smuggled HTTP/1.1\\r\\n\\r\\n", "400 Bad Request"),
    ("obs-fold", "GET http://HOST/x HTTP/1.1\\r\\nHost: HOST\\r\\nX-A: 1\\r\\n Host: evil.example\\r\\n\\r\\n", "400 Bad Request"),
    ("bare-lf", "GET http://HOST/x HTTP/1.1\\nHost: HOST\\nHost: evil.example\\n\\n", "400 Bad Request"),
    ("te-gzip", "POST http://HOST/x HTTP/1.1\\r\\nHost: HOST\\r\\nTransfer-Encoding: gzip\\r\\n\\r\\nxx", "501 Not Implemented"),
    ("no-host", "GET http://HOST/x HTTP/1.1\\r\\nX-Host: evil.example\\r\\n\\r\\n", "400 Bad Request"),
    ("chunked", "POST http://HOST/c HTTP/1.1\\r\\nHost: HOST\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n"
                "5;x=y\\r\\nhello\\r\\n0\\r\\n\\r\\nGET http://HOST/smuggled HTTP/1.1\\r\\nHost: evil.example\\r\\n\\r\\n", "200 OK"),
    ("plain", "POST http://HOST/v HTTP/1.1\\r\\nHost: HOST\\r\\nContent-Length: 5\\r\\n\\r\\nhello", "200 OK"),
]


class PlainHttpCorpus(SeatTest):
    """Pipelined, duplicate-Host, CL+TE and the rest of the corpus through `--egress http://…`:
    only what the checks framed reaches the upstream (which records every byte it gets)."""

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            unavailable(self, "network namespaces for the upstream need root")
        self.up = Recorder()
        try:
            self.up.start()
        except Exception as e:  # noqa: BLE001
            self.up.stop()
            unavailable(self, "cannot build the test's network namespace: %s" % e)
        self.addCleanup(self.up.stop)
        self.seat.write(self.seat.config_file.read_text() + '\n[egress]\nhosts = { "api.mock.test" = "%s" }\n'
                        'private_ok = ["%s/32"]\n' % (self.up.address, self.up.address))

    def test_the_corpus_never_reaches_the_upstream(self):
        host = "api.mock.test:%d" % self.up.port
        lines = ["send() { exec 3<>/dev/tcp/127.0.0.1/3128; printf \"$2\" >&3; "
                 "timeout 20 head -1 <&3 | tr -d '\\r' | sed \"s/^/$1 /\"; exec 3>&-; }"]
        for name, raw, _ in CORPUS:
            lines.append("send %s '%s'" % (name, raw.replace("HOST", host)))
        proc, record = self.seat.status("--id", "ho-corpus", "--egress", "http://" + host, "--timeout", "120s", "--",
                                        "bash", "-c", "\n".join(lines), timeout=180)
        received = self.up.received()
        figure("plain-HTTP corpus: the agent got %r; the upstream received %d connection(s): %r"
               % (proc.stdout.decode(), len(received), received))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), "".join("%s HTTP/1.1 %s\n" % (n, s) for n, _, s in CORPUS))
        head = "host: %s\r\nconnection: close\r\n\r\n" % host
        self.assertEqual(sorted(received), sorted([
            "GET /one HTTP/1.1\r\n" + head,
            "POST /c HTTP/1.1\r\nhost: %s\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n" % host,
            "POST /v HTTP/1.1\r\nhost: %s\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello" % host,
        ]))
        refused = {(r["host"], r["reason"]): r["count"] for r in record["egress"]["refused"]}
        self.assertEqual(refused, {("api.mock.test", "pipelined"): 2, ("api.mock.test", "host_repeated"): 1,
                                   ("api.mock.test", "bad_framing"): 2, ("(malformed)", "bad_request"): 2,
                                   ("api.mock.test", "unsupported_coding"): 1, ("api.mock.test", "host_missing"): 1})
        self.assertEqual([a["connections"] for a in record["egress"]["allowed"]], [3])
        self.assertIn("agent-sandbox: egress: refused api.mock.test:%d: bad_framing (both Content-Length and "
                      "Transfer-Encoding)\n" % self.up.port, proc.stderr.decode())
        self.assertNoContainer("ho-corpus")
        # The control: the same pipelined bytes sent straight to the upstream do reach it.
        with socket.create_connection((self.up.address, self.up.port), timeout=10) as s:
            s.sendall(CORPUS[0][1].replace("HOST", host).replace("\\r", "\r").replace("\\n", "\n").encode())
            s.recv(100)
        deadline = time.monotonic() + 10
        while len(self.up.received()) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertIn("Host: evil.example", self.up.received()[-1])


if __name__ == "__main__":
    unittest.main()
