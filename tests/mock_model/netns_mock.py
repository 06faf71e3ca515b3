"""The mock model server inside a network namespace of its own (stdlib only, root).

    with MockInNetns("agents-e2e-1", command=CMD, final="done") as mock:
        launcher(..., "--network", mock.network, ...)   # ns:/run/netns/agents-e2e-1
        mock.requests()                                  # the request log, parsed

The namespace holds only `lo`. An agent container joining it (`--network ns:PATH`) reaches
the mock at 127.0.0.1:PORT over real TCP, and can reach nothing else: no other interface,
no route, no DNS server. The namespace and the server are removed on exit, by pid.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

SERVER = pathlib.Path(__file__).resolve().parent / "server.py"


class MockInNetns:
    def __init__(self, name, command, final="Done.", max_seconds=300):
        self.name = name
        self.path = "/run/netns/" + name
        self.network = "ns:" + self.path
        self.command = command
        self.final = final
        self.max_seconds = max_seconds
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="asbx-mock-"))
        self.log = self.dir / "requests.jsonl"
        self.proc = None
        self.port = None

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        subprocess.run(["ip", "netns", "add", self.name], check=True, capture_output=True)
        subprocess.run(["ip", "-n", self.name, "link", "set", "lo", "up"], check=True, capture_output=True)
        with open(self.dir / "stderr", "wb") as stderr:
            self.proc = subprocess.Popen(
                ["ip", "netns", "exec", self.name, sys.executable, str(SERVER), "--port", "0",
                 "--command", self.command, "--final", self.final, "--log", str(self.log),
                 "--max-seconds", str(self.max_seconds)],
                stdout=subprocess.PIPE, stderr=stderr, text=True)
        first = self.proc.stdout.readline().strip()
        if not first.startswith("PORT="):
            raise RuntimeError("mock did not start: %r %s" % (first, (self.dir / "stderr").read_text()))
        self.port = int(first[5:])

    @property
    def base_url(self):
        return "http://127.0.0.1:%d" % self.port

    def requests(self):
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()  # `ip netns exec` execs python: this pid is the server
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc.stdout.close()
            self.proc = None
        if os.path.exists(self.path):
            subprocess.run(["ip", "netns", "delete", self.name], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)
