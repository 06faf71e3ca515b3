#!/usr/bin/env python3
"""The launcher's peak RSS while an agent floods one stream and the caller reads it slowly
(docs/BENCHMARKS.md, "The launcher under a flooding agent"): `head -c SIZE /dev/zero` inside a
session, the caller reading CHUNK bytes every PAUSE ms (the other stream read as it comes), on the
local seat. Prints one line per build: MiB through, peak RSS (time(1)'s figure for the launcher),
seconds. With --before DIR the same run with another build's agent-sandbox, side by side.

    bench/hostile_output.py [--build DIR] [--before DIR] [--mib 600] [--chunk-kib 64] [--pause-ms 2]
                            [--stream out|err]
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOCKET = os.environ.get("ASBX_SOCKET", "/run/agent-sandbox/podman.sock")
IMAGE = os.environ.get("ASBX_IMAGE", "localhost/agent-sandbox:latest")


def drain(stream, seen, chunk, pause):
    while True:
        data = stream.read1(chunk)
        if not data:
            return
        seen[0] += len(data)
        if pause:
            time.sleep(pause)


def run(launcher, env, size, stream, chunk, pause):
    target = "" if stream == "out" else " >&2"
    t0 = time.monotonic()
    report = tempfile.NamedTemporaryFile()  # time(1): wait4 here would carry this process's own peak
    p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", report.name, str(launcher), "--", "sh", "-c",
                          "head -c %d /dev/zero%s" % (size, target)], env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = {"out": [0], "err": [0]}
    slow = p.stdout if stream == "out" else p.stderr
    fast = p.stderr if stream == "out" else p.stdout
    readers = [threading.Thread(target=drain, args=(slow, seen[stream], chunk, pause)),
               threading.Thread(target=drain, args=(fast, seen["err" if stream == "out" else "out"], 65536, 0))]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    p.wait()
    p.stdout.close()
    p.stderr.close()
    return p.returncode, seen[stream][0], int(pathlib.Path(report.name).read_text().split()[-1]) / 1024, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("ASBX_BUILD", str(ROOT / "build")))
    ap.add_argument("--before", help="another build dir to measure the same way")
    ap.add_argument("--mib", type=int, default=600)
    ap.add_argument("--chunk-kib", type=int, default=64)
    ap.add_argument("--pause-ms", type=float, default=2)
    ap.add_argument("--stream", choices=("out", "err"), default="out")
    args = ap.parse_args()
    cfg = pathlib.Path(tempfile.mkdtemp(prefix="asbx-bench-hostile-"))
    try:
        (cfg / "agent-sandbox").mkdir()
        (cfg / "agent-sandbox" / "seat.toml").write_text(
            'socket = "%s"\nimage = "%s"\nledger = "%s/ledger.jsonl"\n' % (SOCKET, IMAGE, cfg))
        env = dict(os.environ, XDG_CONFIG_HOME=str(cfg), XDG_STATE_HOME=str(cfg))
        print("std%s, %d MiB, the reader taking %d KiB every %g ms" % (args.stream, args.mib, args.chunk_kib,
                                                                      args.pause_ms))
        for build in [b for b in (args.before, args.build) if b]:
            code, through, rss_mib, seconds = run(pathlib.Path(build) / "agent-sandbox", env, args.mib << 20, args.stream,
                                                  args.chunk_kib << 10, args.pause_ms / 1000)
            print("%-40s exit %d  %5d MiB through  peak RSS %7.1f MiB  %6.1f s" % (build, code, through >> 20, rss_mib,
                                                                                  seconds))
            if code != 0 or through != args.mib << 20:
                raise SystemExit("the session did not deliver every byte")
    finally:
        shutil.rmtree(cfg, ignore_errors=True)


if __name__ == "__main__":
    main()
