#!/usr/bin/python3
"""What the tripwire costs a session, next to the same session without it (root, the local seat).

    bench/tripwire.py [--runs 20] [--egress-runs 30] [--build build]

1. start to end of `agent-sandbox -- true`, seat tripwire = "record" (the device and the decoys,
   the default) next to tripwire = "off" (hyperfine, one after the other); and the record's own `checks`
   phase (between init and start, where the device and the decoys are made), median of RUNS each;
2. the egress wall's per-request time (bench/egress.py) with and without it;
3. how fast the device refuses: 20 000 TCP connects from inside a session to an address of a network
   namespace this script creates (10.78.0.2, bench/egress.py's; nothing leaves the machine), and the
   launcher's peak RSS meanwhile (time(1)), next to the same session running `true`.
Figures go into docs/BENCHMARKS.md.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import egress  # noqa: E402  (its namespace: 10.78.0.2 on a veth pair of its own)

FLOOD = ('use Socket; use Time::HiRes qw(time); my $d = inet_aton("%s"); my $t = time; my $n = 0;'
         'for my $i (1 .. 20000) { socket(my $s, PF_INET, SOCK_STREAM, 0); $n++ unless connect($s, pack_sockaddr_in(1 + $i %% 1000, $d)); close $s }'
         'printf "%%d of 20000 connects refused in %%.0f ms\\n", $n, (time - $t) * 1000' % egress.ADDR)


def seat(dir, mode):
    (dir / "agent-sandbox").mkdir(parents=True)
    (dir / "agent-sandbox" / "seat.toml").write_text(
        'socket = "/run/agent-sandbox/podman.sock"\nimage = "localhost/agent-sandbox:latest"\n'
        'ledger = "%s/ledger.jsonl"\ntripwire = "%s"\n' % (dir, mode))
    return dir


def checks_ms(launcher, config, runs):
    """Median of the status record's `checks` phase (ms) over `runs` sessions."""
    status, phases = pathlib.Path(config) / "status.json", []
    for _ in range(runs):
        subprocess.run([launcher, "--status-file", str(status), "--", "true"], check=True, capture_output=True,
                       env=dict(os.environ, XDG_CONFIG_HOME=str(config)))
        phases.append(json.loads(status.read_text())["durations_ms"]["phases"]["checks"])
    return sorted(phases)[len(phases) // 2]


def measured(launcher, config, *argv):
    """(stdout, the launcher's peak RSS in MiB)."""
    with tempfile.NamedTemporaryFile() as report:  # time(1): wait4 here would carry this process's own peak
        out = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report.name, launcher, *argv], capture_output=True,
                             env=dict(os.environ, XDG_CONFIG_HOME=str(config))).stdout
        return out.decode().strip(), int(pathlib.Path(report.name).read_text().split()[-1]) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--egress-runs", type=int, default=30)
    ap.add_argument("--build", default=str(ROOT / "build"))
    args = ap.parse_args()
    launcher = str(pathlib.Path(args.build) / "agent-sandbox")
    with tempfile.TemporaryDirectory() as tmp:
        on, off = seat(pathlib.Path(tmp) / "on", "record"), seat(pathlib.Path(tmp) / "off", "off")
        report = pathlib.Path(tmp) / "h.json"
        subprocess.run(["hyperfine", "--warmup", "2", "--runs", str(args.runs), "--export-json", str(report),
                        "-n", "tripwire record", "XDG_CONFIG_HOME=%s %s -- true" % (on, launcher),
                        "-n", "tripwire off", "XDG_CONFIG_HOME=%s %s -- true" % (off, launcher)],
                       check=True, stdout=subprocess.DEVNULL)
        for r in json.loads(report.read_text())["results"]:
            print("%s: mean %.0f ms, median %.0f ms, min %.0f ms" % (r["command"], r["mean"] * 1000, r["median"] * 1000,
                                                                    r["min"] * 1000))
        print("checks phase (median of %d): tripwire record %d ms, off %d ms"
              % (args.runs, checks_ms(launcher, on, args.runs), checks_ms(launcher, off, args.runs)))
        for mode in ("record", "off"):
            out = subprocess.run([sys.executable, str(ROOT / "bench" / "egress.py"), "--runs", str(args.egress_runs),
                                  "--build", args.build, "--tripwire", mode], capture_output=True, text=True, check=True)
            walls = [l.split("wall", 1)[1].strip() for l in out.stdout.splitlines() if l.lstrip().startswith("wall ")]
            if not walls:
                sys.exit("bench/egress.py printed no wall row:\n" + out.stdout)
            print("egress (post, through the wall), tripwire %s: %s" % (mode, walls[0]))
        server = None
        try:
            server = egress.up(argparse.Namespace(response_kib=16, events=1, event_bytes=64),
                               *egress.make_cert(pathlib.Path(tmp)))
            flood, peak = measured(launcher, on, "--", "perl", "-e", FLOOD)
            _, idle = measured(launcher, on, "--", "true")
            print("flood: %s; launcher peak RSS %.1f MiB (the same session running true: %.1f MiB)" % (flood, peak, idle))
        finally:
            egress.down(server)


if __name__ == "__main__":
    main()
