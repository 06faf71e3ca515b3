#!/usr/bin/python3
"""A real CLI's first model request: the time from the call until the request reaches the model
server, warm against cold against the podman CLI, side by side in one run (root, local seat).

    bench/first_request.py [--runs 6] [--warmup 1] [--cli codex,claude] [--build build]

The mock model server (tests/mock_model/server.py) runs in a network namespace of this script's
own, behind a veth pair. The sessions reach it only through the egress wall (`--egress`, copy
mode, which the pool carries). There are two seats alike but for `pool_size`: 0 (cold) and 1
(warm). Before each warm call the pool is filled and the script waits for a ready member, off the
timed path. The launcher gets bench/lib.sh's LIMITS, and the podman CLI row joins the mock's namespace directly (no wall, no staging: the
credential is copied into HOME by the container's own shell), with the flags bench/compare.sh
gives it. Each call starts from a fresh git workspace. The end mark is the mock's wall clock for
the first request of the CLI's model API (its log's `at`). A row whose record names the other
path is an error, not a sample.
Prints the median (min-max) per CLI and row, and the ratios; figures go into docs/BENCHMARKS.md.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
AGENT_UID = 1000
HOME_FILE = {"codex": ".codex/auth.json", "claude": ".claude/.credentials.json"}  # where each CLI reads it


def fresh_workspace(seat, n):
    ws = seat.workspaces / ("fr-%d" % n)
    ws.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True)
    (ws / ".git" / "logs").mkdir()  # the launcher asks for it (git writes there)
    subprocess.run(["chown", "-R", "%d:%d" % (AGENT_UID, AGENT_UID), str(ws)], check=True)
    return ws


def wait_for_member(seat):
    """A ready member on the warm seat: `pool fill` until no refill is at work, then one a claim
    could take (a ready file no claim file names: podman says `running` of a claimed one too)."""
    run = seat.dir / "run"
    until, said = time.monotonic() + 60, b""
    while time.monotonic() < until:
        said = seat.run("pool", "fill").stderr
        busy = b"another fill is at work" in said
        ids = [json.loads(f.read_text()).get("id", "") for f in run.glob("pool-*/ready")]
        if not busy and any(i and not (run / ".pool" / (i + ".claim")).exists() for i in ids):
            return
        time.sleep(0.1)
    sys.exit("the warm seat made no ready member in 60 s: " + said.decode(errors="replace"))


def first_request_ms(up, before, api, t0):
    mine = [r for r in up.requests()[before:] if r.get("api") == api]
    if not mine:
        return None
    return (mine[0]["at"] - t0) * 1000


def session(seat, row, up, cred, ws, path, limits):
    before = len(up.requests())
    env = seat.env(**row["env"](up))
    t0 = time.time()
    proc, record = seat.status(*limits, "--runtime", row["runtime"], "--credential", str(cred), "--workspace", str(ws),
                               "--egress", "http://api.mock.test:%d" % up.port, "--timeout", "120s", "--",
                               *row["argv"](up, "Say done."), timeout=180, env=env)
    total = (time.time() - t0) * 1000
    if proc.returncode != 0 or not record or record.get("path") != path:
        sys.exit("%s %s session: exit %d, path %s (%s): %s" % (row["runtime"], path, proc.returncode,
                 record and record.get("path"), record and record.get("path_reason"), proc.stderr.decode()[-800:]))
    return first_request_ms(up, before, row["api"], t0), total


def cli(row, up, cred, ws, podman_flags, image):
    """The podman CLI, the mock's namespace joined directly; the credential copied in by the shell."""
    before = len(up.requests())
    home_file = "/sandbox/home/" + HOME_FILE[row["runtime"]]
    env_flags = [f for k, v in row["env"](up).items() for f in ("-e", "%s=%s" % (k, v))]
    argv = " ".join("'%s'" % a.replace("'", "'\\''") for a in row["argv"](up, "Say done."))
    script = "mkdir -p %s && cp /cred %s && cd /work && exec %s" % (os.path.dirname(home_file), home_file, argv)
    t0 = time.time()
    proc = subprocess.run(["podman", "run", *podman_flags, "--network", "ns:/run/netns/" + up.name,
                           "--add-host", "api.mock.test:" + up.address, "-v", "%s:/cred:ro" % cred,
                           "-v", "%s:/work" % ws, *env_flags, image, "sh", "-c", script],
                          capture_output=True, timeout=180)
    total = (time.time() - t0) * 1000
    if proc.returncode != 0:
        sys.exit("%s podman CLI: exit %d: %s" % (row["runtime"], proc.returncode, proc.stderr.decode()[-800:]))
    return first_request_ms(up, before, row["api"], t0), total


def show(name, rows):
    for label, key in (("first model request", 0), ("whole session", 1)):
        print("%-7s %-20s" % (name, label) + "".join(
            "  %s %6.0f ms (%.0f-%.0f)" % (side, statistics.median(v[key] for v in vals), min(v[key] for v in vals),
                                         max(v[key] for v in vals)) for side, vals in rows.items()))
    med = {side: statistics.median(v[0] for v in vals) for side, vals in rows.items()}
    print("%-7s first request ratios: warm/cold %.2f, warm/CLI %.2f, cold/CLI %.2f" % (
        name, med["warm"] / med["cold"], med["warm"] / med["cli"], med["cold"] / med["cli"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--cli", default="codex,claude")
    ap.add_argument("--build", default=str(ROOT / "build"))
    args = ap.parse_args()
    if args.runs < 1 or args.warmup < 0:
        sys.exit("--runs must be 1 or more and --warmup 0 or more")
    os.environ["ASBX_BUILD"] = args.build
    from harness import IMAGE, Seat, podman  # noqa: E402  (harness reads ASBX_BUILD when imported)
    from test_agents_e2e import E2E_ROWS  # noqa: E402
    from test_egress import Upstream  # noqa: E402
    wanted = args.cli.split(",")
    rows = [r for r in E2E_ROWS if r["runtime"] in wanted]
    if len(rows) != len(wanted):
        sys.exit("--cli: one of %s is not codex or claude" % args.cli)
    shared = subprocess.run(["bash", "-c", '. "$1/bench/lib.sh"; echo "$CONTAINERS_CONF"; echo "${LIMITS[*]}"; '
                             'echo "$PODMAN_FLAGS"', "-", str(ROOT)], capture_output=True, text=True).stdout.splitlines()
    os.environ["CONTAINERS_CONF"] = shared[0]  # the podman CLI row's runtime, as bench/compare.sh's
    limits, flags = shared[1].split(), shared[2].replace("--network none", "").split()  # the mock's namespace instead
    up = Upstream("fr", command="true", final="done").start()
    seats = {}
    try:
        seats = {"cold": Seat(extra=up.seat_egress()), "warm": Seat(extra=up.seat_egress())}
        seats["warm"].write("pool_size = 1\n" + seats["warm"].config_file.read_text())
        creds = seats["cold"].dir / "creds"
        creds.mkdir(mode=0o700)
        n = 0
        for row in rows:
            cred = creds / row["credential"]
            with os.fdopen(os.open(cred, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
                json.dump(row["content"](), f)
            got = {"cold": [], "warm": [], "cli": []}
            for i in range(args.warmup + args.runs):
                for side in ("cold", "warm", "cli"):
                    n += 1
                    seat = seats["warm" if side == "warm" else "cold"]
                    ws = fresh_workspace(seat, n)
                    if side == "warm":
                        wait_for_member(seat)
                    if side == "cli":
                        os.chmod(cred, 0o644)  # the CLI row's container reads it as uid 1000
                        sample = cli(row, up, cred, ws, flags, IMAGE)
                        os.chmod(cred, 0o600)
                    else:
                        sample = session(seat, row, up, cred, ws, side, limits)
                    if sample[0] is None:
                        sys.exit("%s %s: no %s request reached the mock" % (row["runtime"], side, row["api"]))
                    if i >= args.warmup:
                        got[side].append(sample)
            show(row["runtime"], got)
    finally:
        for seat in seats.values():
            seat.cleanup()
        up.stop()


if __name__ == "__main__":
    main()
