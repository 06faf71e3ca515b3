#!/usr/bin/env python3
"""What the disk watcher costs a session (docs/BENCHMARKS.md, "The disk watcher"): the launcher's
CPU time (user + system, from wait4) for `sleep SECONDS` in a session with a workspace (the watcher
armed: statvfs every 20 ms) against the same without one (nothing writable: no watcher), RUNS each,
on the local seat; and the record's own figures (ticks = wake-ups, walks, walk time).

    bench/disk_watch.py [--build DIR] [--runs 5] [--seconds 10] [--files 0]

--files N puts N small files into the workspace first (the baseline and the final walk grow with it).
"""
import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOCKET = os.environ.get("ASBX_SOCKET", "/run/agent-sandbox/podman.sock")
IMAGE = os.environ.get("ASBX_IMAGE", "localhost/agent-sandbox:latest")


def session(launcher, env, seconds, workspace):
    status = tempfile.NamedTemporaryFile(suffix=".json")
    more = ["--workspace", str(workspace)] if workspace else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([str(launcher), "--status-file", status.name, *more, "--", "sleep", str(seconds)], env=env,
                   check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(pathlib.Path(status.name).read_text())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--files", type=int, default=0)
    a = ap.parse_args()
    seat = pathlib.Path(tempfile.mkdtemp(prefix="asbx-bench-disk-"))
    (seat / "config" / "agent-sandbox").mkdir(parents=True)
    (seat / "ws" / "w").mkdir(parents=True)
    os.chown(seat / "ws" / "w", 1000, 1000)
    for i in range(a.files):
        (seat / "ws" / "w" / f"f{i}").write_text("x")
    (seat / "config" / "agent-sandbox" / "seat.toml").write_text(
        f'socket = "{SOCKET}"\nimage = "{IMAGE}"\nworkspace_root = "{seat}/ws"\nruntime_dir = "{seat}/run"\n')
    env = dict(os.environ, XDG_CONFIG_HOME=str(seat / "config"), XDG_STATE_HOME=str(seat / "state"))
    launcher = pathlib.Path(a.build) / "agent-sandbox"
    rows = {"without a workspace (no watcher)": [], "with a workspace (watcher)": []}
    figures = []
    for _ in range(a.runs):
        rows["without a workspace (no watcher)"].append(session(launcher, env, a.seconds, None)[0])
        cpu, rec = session(launcher, env, a.seconds, seat / "ws" / "w")
        rows["with a workspace (watcher)"].append(cpu)
        figures.append(rec["disk"])
    for name, cpus in rows.items():
        print(f"{name:34s} launcher CPU median {statistics.median(cpus) * 1000:7.1f} ms  (min {min(cpus) * 1000:.1f}, max {max(cpus) * 1000:.1f})")
    delta = statistics.median(rows["with a workspace (watcher)"]) - statistics.median(rows["without a workspace (no watcher)"])
    ticks = statistics.median(f["ticks"] for f in figures)
    print(f"watcher: {delta * 1000:.1f} ms CPU per {a.seconds} s session ({delta / a.seconds * 100:.2f} % of a core), "
          f"{ticks / a.seconds:.0f} wake-ups/s, walks {statistics.median(f['walks'] for f in figures)}, "
          f"walk time {statistics.median(f['walk_ms'] for f in figures)} ms, files {a.files}")
    subprocess.run(["rm", "-rf", str(seat)])


if __name__ == "__main__":
    main()
