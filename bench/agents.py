#!/usr/bin/python3
"""Measure real containerized runs of codex and claude through the launcher (root, local seat).

    bench/agents.py [--runs 5] [--cli codex,claude] [--build build] [--json out.json] [--limit memory=256m ...]

Each run is the e2e scenario (tests/integration/test_agents_e2e.py): the mock model server in a
network namespace of its own, the agent CLI in the image, a fresh git workspace, a fake staged
credential, one tool turn that edits and commits a file. While the container lives, a sampler
reads its cgroup (v1: memory.max_usage_in_bytes, pids.current every 10 ms, cpuacct.usage) from
the host; the status record's counters are printed beside them when the launcher fills them.
Prints one line per run and a summary (max / median). Figures go into docs/RESOURCES.md.
"""
import argparse
import http.client
import json
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "mock_model"))
from netns_mock import MockInNetns  # noqa: E402

SOCKET = "/run/agent-sandbox/podman.sock"
CGROUP = "/sys/fs/cgroup"
COMMAND = ("echo hello > note.txt && git add note.txt && "
           "git -c user.email=agent@sandbox -c user.name=agent commit -q -m note")


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("d", timeout=5)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


def container_id(name):
    conn = UnixHTTP(SOCKET)
    try:
        conn.request("GET", "/v4.0.0/libpod/containers/%s/json" % name)
        resp = conn.getresponse()
        body = resp.read()
        return json.loads(body)["Id"] if resp.status == 200 else None
    finally:
        conn.close()


def read_int(path):
    try:
        return int(pathlib.Path(path).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


class Sampler(threading.Thread):
    """Follows the container's v1 cgroups from the host until they disappear."""

    def __init__(self, name):
        super().__init__(daemon=True)
        self.name = name
        self.stop = threading.Event()
        self.memory_peak = self.pids_peak = self.cpu_ns = None
        self.cores_peak = 0.0  # most CPU used over any 100 ms window, in cores
        self.window = []       # (monotonic s, cpuacct ns) samples of the last 100 ms

    def run(self):
        cid = None
        while cid is None and not self.stop.is_set():
            cid = container_id(self.name)
            time.sleep(0.01)
        leaf = "libpod_parent/libpod-%s" % cid
        seen = False
        while not self.stop.is_set():
            mem = read_int("%s/memory/%s/memory.max_usage_in_bytes" % (CGROUP, leaf))
            pids = read_int("%s/pids/%s/pids.current" % (CGROUP, leaf))
            cpu = read_int("%s/cpuacct/%s/cpuacct.usage" % (CGROUP, leaf))
            if mem is None:
                if seen:
                    return
            else:
                seen = True
                self.memory_peak = max(self.memory_peak or 0, mem)
                self.pids_peak = max(self.pids_peak or 0, pids or 0)
                self.cpu_ns = max(self.cpu_ns or 0, cpu or 0)
                self.track_cores(time.monotonic(), cpu or 0)
            time.sleep(0.01)

    def track_cores(self, now, cpu_ns):
        self.window.append((now, cpu_ns))
        while now - self.window[0][0] > 0.1:
            first = self.window.pop(0)
            self.cores_peak = max(self.cores_peak, (cpu_ns - first[1]) / 1e9 / (now - first[0]))


def git(*args, cwd):
    subprocess.run(["git", "-c", "safe.directory=*", *args], cwd=cwd, check=True, capture_output=True)


def workspace(root, name):
    ws = root / "workspaces" / name
    git("init", "-q", "-b", "main", str(ws), cwd=root)
    git("-c", "user.email=b@b", "-c", "user.name=b", "commit", "-q", "--allow-empty", "-m", "seed", cwd=ws)
    subprocess.run(["chown", "-R", "1000:1000", str(ws)], check=True)
    return ws


def credential(root, cli):
    path = root / ("%s-cred.json" % cli)
    if cli == "codex":
        content = {"auth_mode": "apikey", "OPENAI_API_KEY": "sk-mock-bench"}
    else:
        content = {"claudeAiOauth": {"accessToken": "sk-ant-oat01-mock-bench", "refreshToken": "r",
                                     "expiresAt": int(time.time() * 1000) + 86400000, "scopes": ["user:inference"]}}
    path.write_text(json.dumps(content))
    path.chmod(0o600)
    return path


def argv_for(cli, mock):
    if cli == "codex":
        provider = ('{name="Mock",base_url="%s/v1",wire_api="responses",requires_openai_auth=true,'
                    'request_max_retries=0,stream_max_retries=0}' % mock.base_url)
        return ["codex", "exec", "-c", "model=mock-model", "-c", "model_provider=mock",
                "-c", "model_providers.mock=" + provider, "-c", "analytics.enabled=false",
                "-c", "features.plugins=false", "--dangerously-bypass-approvals-and-sandbox", "Add a note."]
    return ["claude", "-p", "Add a note.", "--dangerously-skip-permissions"]


def limit_args(args):
    return [a for opt in args.limit for a in ("--" + opt.split("=", 1)[0], opt.split("=", 1)[1])]


def one_run(args, root, cli, n):
    session = "agents-bench-%s-%d-%d" % (cli, os.getpid(), n)
    ws = workspace(root, "%s-%d" % (cli, n))
    with MockInNetns("agents-bench-%d-%d" % (os.getpid(), n), command=COMMAND, final="done") as mock:
        env = dict(os.environ, XDG_CONFIG_HOME=str(root / "config"), XDG_STATE_HOME=str(root / "state"),
                   LANG="C.UTF-8", ANTHROPIC_BASE_URL=mock.base_url, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                   DISABLE_AUTOUPDATER="1")
        status = root / ("%s.json" % session)
        sampler = Sampler("asbx-" + session)
        sampler.start()
        t0 = time.monotonic()
        proc = subprocess.run([str(args.build / "agent-sandbox"), "--id", session, "--status-file", str(status),
                               "--runtime", cli, "--credential", str(credential(root, cli)), "--network", mock.network,
                               "--workspace", str(ws), "--timeout", "120s", *limit_args(args), "--", *argv_for(cli, mock)],
                              env=env, capture_output=True, timeout=180)
        wall = time.monotonic() - t0
        sampler.stop.set()
        sampler.join()
    record = json.loads(status.read_text())
    committed = subprocess.run(["git", "-c", "safe.directory=*", "log", "-1", "--format=%s"], cwd=ws,
                               capture_output=True, text=True).stdout.strip() == "note"
    if proc.returncode != 0 or not committed:
        raise SystemExit("run %s failed (exit %d, committed=%s): %s" % (session, proc.returncode, committed,
                                                                         proc.stderr.decode(errors="replace")))
    return {"cli": cli, "wall_s": round(wall, 2), "memory_peak_mib": round(sampler.memory_peak / 2**20, 1),
            "pids_peak": sampler.pids_peak, "cpu_s": round(sampler.cpu_ns / 1e9, 2),
            "cores_peak_100ms": round(sampler.cores_peak, 2),
            "record_counters": record.get("counters"), "durations_ms": record["durations_ms"]}


def summary(rows):
    out = {}
    for key in ("wall_s", "memory_peak_mib", "pids_peak", "cpu_s", "cores_peak_100ms"):
        values = [r[key] for r in rows]
        out[key] = {"max": max(values), "median": statistics.median(values), "min": min(values)}
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--cli", default="codex,claude")
    p.add_argument("--build", type=pathlib.Path, default=ROOT / "build")
    p.add_argument("--json", type=pathlib.Path)
    p.add_argument("--limit", action="append", default=[], metavar="OPT=VALUE",
                   help="a launcher limit for every run, e.g. --limit memory=256m --limit pids=48")
    args = p.parse_args()
    root = pathlib.Path(tempfile.mkdtemp(prefix="asbx-bench-"))
    for d in ("config/agent-sandbox", "state", "workspaces"):
        (root / d).mkdir(parents=True)
    (root / "config/agent-sandbox/seat.toml").write_text(
        'socket = "%s"\nworkspace_root = "%s/workspaces"\nruntime_dir = "%s/run"\n' % (SOCKET, root, root))
    results = {}
    try:
        for cli in args.cli.split(","):
            rows = []
            for n in range(args.runs):
                rows.append(one_run(args, root, cli, n))
                print(json.dumps(rows[-1]), flush=True)
            results[cli] = {"runs": rows, "summary": summary(rows)}
            print("%s summary: %s" % (cli, json.dumps(results[cli]["summary"])), flush=True)
    finally:
        subprocess.run(["rm", "-rf", str(root)])
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
