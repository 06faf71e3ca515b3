#!/usr/bin/env python3
"""Soak: many sessions with mixed endings, sequential then concurrent, for MINUTES, against a
podman service of its own (so its fds and RSS are the soak's alone) and, with --registry,
against seat hosts too. At the end it asserts that every session is accounted for in the
ledger (one valid JSON line each, with the expected ending) and that nothing is left behind:
containers, session dirs, slot claims, agent processes, transient units, podman-service fds;
launcher RSS bounded. Prints the figures; exit 1 on any failure. See docs/RELIABILITY.md.
"""
import argparse
import json
import math
import os
import pathlib
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from harness import CODES, LAUNCHER, SEAT_RUN, Seat  # noqa: E402
from private_service import PrivateService, processes_with, slot_claims  # noqa: E402

HOG = 'v=$(head -c 300M /dev/zero | tr "\\0" x); echo unreachable'
MARK = str(3000 + os.getpid() % 5000)  # every agent's sleep carries it (per soak): none may survive


class Kind:
    """One kind of session: its argv, what is fed and done to it, and the ending it must have."""

    def __init__(self, name, args, code, error_kind=None, cause=None, stdin=b"", signal_after=None, out=None,
                 remote=False):
        self.name, self.args, self.code, self.error_kind, self.cause = name, args, code, error_kind, cause
        self.stdin, self.signal_after, self.out, self.remote = stdin, signal_after, out, remote


def kinds(big_mib, registry):
    payload = os.urandom(1 << 20)
    ks = [
        Kind("exit0", ["--", "sh", "-c", "echo hi"], 0, out=b"hi\n"),
        Kind("exit3", ["--", "sh", "-c", "echo err >&2; exit 3"], 3),
        Kind("exit42", ["--", "sh", "-c", "exit 42"], 42),
        Kind("timeout", ["--timeout", "2s", "--", "sleep", MARK], CODES["killed_timeout"], "killed_timeout", "timeout"),
        Kind("signal", ["--", "sh", "-c", f"echo started; exec sleep {MARK}"], 128 + signal.SIGTERM, None, "signal",
             signal_after=b"started\n"),
        Kind("oom", ["--memory", "64m", "--", "bash", "-c", HOG], CODES["killed_oom"], "killed_oom", "oom"),
        Kind("big", ["--", "head", "-c", f"{big_mib}M", "/dev/zero"], 0, out=("bytes", big_mib << 20)),
        Kind("stdin", ["--", "cat"], 0, stdin=payload, out=payload),
    ]
    if registry:
        ks += [
            Kind("remote-exit5", ["--registry", registry, "--", "sh", "-c", "echo r; exit 5"], 5, out=b"r\n",
                 remote=True),
            Kind("remote-timeout", ["--registry", registry, "--timeout", "2s", "--", "sleep", MARK],
                 CODES["killed_timeout"], "killed_timeout", "timeout", remote=True),
            Kind("remote-big", ["--registry", registry, "--", "head", "-c", f"{big_mib}M", "/dev/zero"], 0,
                 out=("bytes", big_mib << 20), remote=True),
        ]
    return ks


class Soak:
    def __init__(self, args):
        self.args = args
        self.service = PrivateService(prefix="asbx-soak-").start()
        self.seat = Seat(socket=self.service.socket)
        self.ledger = self.seat.dir / "ledger.jsonl"
        self.kinds = kinds(args.big_mib, args.registry)
        self.lock = threading.Lock()
        self.sessions = []  # (id, kind, rc, maxrss KiB, problem or "")
        self.n = 0

    def next_id(self, kind):
        with self.lock:
            self.n += 1
            return f"soak-{self.n}-{kind.name}"

    def run_one(self, kind):
        sid = self.next_id(kind)
        status = self.seat.dir / "status" / (sid + ".json")
        # Local sessions run as on a seat (sandbox-run, with slots); remote ones through agent-sandbox.
        exe = LAUNCHER if kind.remote else SEAT_RUN
        argv = [str(exe), "--status-file", str(status), "--ledger", str(self.ledger), "--id", sid]
        if not kind.remote:
            argv += ["--slots", str(self.args.concurrency + 2)]
        proc = subprocess.Popen(argv + kind.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self.seat.env())
        got = {"out": b"", "bytes": 0, "err": b""}
        watchdog = threading.Timer(self.args.session_timeout, proc.kill)  # a hung session fails, never the soak
        watchdog.start()
        threading.Thread(target=self.feed, args=(proc, kind.stdin), daemon=True).start()
        t_err = threading.Thread(target=lambda: got.update(err=proc.stderr.read()), daemon=True)
        t_err.start()
        self.read_out(proc, kind, got)
        t_err.join(600)
        _, wstatus, rusage = os.wait4(proc.pid, 0)
        watchdog.cancel()
        proc.returncode = os.waitstatus_to_exitcode(wstatus)
        problem = self.judge(kind, proc.returncode, got, status)
        if proc.returncode == -signal.SIGKILL:
            problem = f"still running after {self.args.session_timeout} s: killed"
        with self.lock:
            self.sessions.append((sid, kind, proc.returncode, rusage.ru_maxrss, problem))

    @staticmethod
    def feed(proc, data):
        try:
            if data:
                proc.stdin.write(data)
            proc.stdin.close()
        except OSError:
            pass

    @staticmethod
    def read_out(proc, kind, got):
        signalled = False
        keep = kind.out is not None and not isinstance(kind.out, tuple)
        while True:
            chunk = proc.stdout.read1(1 << 16) if not kind.signal_after or signalled else proc.stdout.readline()
            if not chunk:
                return
            got["bytes"] += len(chunk)
            if keep or kind.signal_after:
                got["out"] += chunk
            if kind.signal_after and not signalled and got["out"].endswith(kind.signal_after):
                proc.send_signal(signal.SIGTERM)
                signalled = True

    @staticmethod
    def judge(kind, rc, got, status):
        if rc != kind.code:
            return f"exit {rc}, want {kind.code}: {got['err'][-300:]!r}"
        if isinstance(kind.out, tuple) and got["bytes"] != kind.out[1]:
            return f"{got['bytes']} bytes of output, want {kind.out[1]}"
        if isinstance(kind.out, bytes) and got["out"] != kind.out:
            return f"output {got['out'][:80]!r} differs"
        try:
            rec = json.loads(status.read_text())
        except (OSError, ValueError) as e:
            return f"no status record: {e}"
        if (rec.get("error_kind"), rec.get("cause")) != (kind.error_kind, kind.cause):
            return f"record says {rec.get('error_kind')}/{rec.get('cause')}, want {kind.error_kind}/{kind.cause}"
        return ""

    def worker(self, offset, until, limit=None):
        i = offset
        while time.monotonic() < until and (limit is None or i - offset < limit):
            self.run_one(self.kinds[i % len(self.kinds)])
            i += 1

    def run(self):
        (self.seat.dir / "status").mkdir()
        for k in self.kinds:  # warm-up: one of each kind (the service's first-use fds, caches)
            self.run_one(k)
        time.sleep(3)
        before = self.sample()
        t0 = time.monotonic()
        total = self.args.minutes * 60
        if self.args.sequential is None:
            self.worker(0, t0 + total / 3)  # sequential third
        else:
            self.worker(0, math.inf, limit=self.args.sequential)
        n_seq = len(self.sessions) - len(self.kinds)
        if self.args.rounds is None:
            until = t0 + total
            self.together([(w * 3 + 1, until, None) for w in range(self.args.concurrency)])
        else:  # ROUNDS times CONCURRENCY sessions started together, each round waited for
            for r in range(self.args.rounds):
                self.together([(n_seq + r * self.args.concurrency + w, math.inf, 1)
                               for w in range(self.args.concurrency)])
        wall = time.monotonic() - t0
        if self.args.inject_leak:
            self.inject_leak()
        after = self.settled(before)
        if self.args.keep:
            print("soak: service fds after: " + " ".join(sorted(os.readlink(f"/proc/{self.service.pid()}/fd/{f}")
                                                               for f in os.listdir(f"/proc/{self.service.pid()}/fd"))))
        return self.verdict(before, after, n_seq, wall)

    def together(self, workers):
        threads = [threading.Thread(target=self.worker, args=w) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def inject_leak(self):
        """The soak's own check (--inject-leak): what a broken launcher would leave — a container
        of one of its sessions and a held slot claim. The verdict must then fail."""
        sid = self.sessions[0][0]
        self.service.podman("create", "--network", "none", "--label", "agent-sandbox.session=" + sid,
                            "--name", "asbx-" + sid + "-leak", "localhost/agent-sandbox:latest", "true")
        slots = self.seat.state_home / "agent-sandbox" / "slots"
        self.holder = subprocess.Popen(["flock", "-n", str(slots / "0.lock"), "sleep", "300"])

    def settled(self, before):
        """The after sample. podman 4.3's service keeps an events.log fd for most events it writes
        and releases them in batches; idle, the last go only at about 2 minutes, Go's forced
        garbage-collection period (measured: 12 -> 0 between +105 s and +120 s). So the fds are read every 5 s for up to
        150 s and the least count kept; a leak never comes back."""
        best = None
        for _ in range(30):
            now = self.sample()
            best = now if best is None or now["fds"] < best["fds"] else best
            if best["fds"] <= before["fds"] + self.args.fd_noise:
                break
        return best

    def sample(self):
        """The service's fds (least of 5 readings 1 s apart: a request in flight is not a leak), RSS."""
        pid = self.service.pid()
        rss = int([l for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:")][0].split()[1])
        fds = min(self.service.fds() + (time.sleep(1) or 0) for _ in range(5))
        return {"fds": fds, "rss_kib": rss}

    def leftovers(self):
        ids = {s[0] for s in self.sessions}
        left = {}
        left["containers"] = [c for c in self.service.containers()
                              if c.split()[0].removeprefix("asbx-").removesuffix("-leak") in ids]
        run = self.seat.dir / "run"
        left["session dirs"] = sorted(p.name for p in run.iterdir()) if run.is_dir() else []
        left["slot claims"] = slot_claims(self.seat.state_home / "agent-sandbox" / "slots")
        left["agent processes"] = processes_with("sleep " + MARK)
        left["transient units"] = transient_units()
        if self.args.registry:
            left["seat containers"] = seat_leftovers(self.args.registry, ids)
        return left

    def verdict(self, before, after, n_seq, wall):
        failures = []
        records = {}
        lines = self.ledger.read_text().splitlines() if self.ledger.exists() else []
        for n, line in enumerate(lines, 1):
            try:
                rec = json.loads(line)
                records.setdefault(rec["id"], []).append(rec)
            except (ValueError, KeyError) as e:
                failures.append(f"ledger line {n} is not a valid record: {e}")
        for sid, kind, rc, _, problem in self.sessions:
            if problem:
                failures.append(f"{sid}: {problem}")
            if len(records.get(sid, [])) != 1:
                failures.append(f"{sid}: {len(records.get(sid, []))} ledger lines, want 1")
        orphans = [r["id"] for r in ledger_lines(self.seat.ledger)]  # gc writes there for a lost launcher
        if orphans:
            failures.append(f"gc found {len(orphans)} orphaned sessions: {orphans[:5]}")
        for what, items in self.leftovers().items():
            if items:
                failures.append(f"left behind: {len(items)} {what}: {items[:5]}")
        rss = sorted(s[3] for s in self.sessions)
        max_rss = rss[-1] if rss else 0
        if max_rss > self.args.max_launcher_rss_mib * 1024:
            failures.append(f"a launcher's RSS reached {max_rss} KiB (bound {self.args.max_launcher_rss_mib} MiB)")
        if after["fds"] > before["fds"] + self.args.fd_noise:
            failures.append(f"the podman service's fds grew: {before['fds']} -> {after['fds']}")
        if after["rss_kib"] > before["rss_kib"] + self.args.service_rss_noise_mib * 1024:
            failures.append(f"the podman service's RSS grew: {before['rss_kib']} -> {after['rss_kib']} KiB")
        by_kind = {}
        for s in self.sessions:
            by_kind[s[1].name] = by_kind.get(s[1].name, 0) + 1
        print(f"soak: {len(self.sessions)} sessions in {wall:.0f} s ({n_seq} sequential, then {self.args.concurrency} "
              f"concurrent{f' x {self.args.rounds} rounds' if self.args.rounds else ''}); by kind: {json.dumps(by_kind, sort_keys=True)}")
        print(f"soak: ledger {len(lines)} lines, {len(records)} ids; podman service fds {before['fds']} -> "
              f"{after['fds']}, RSS {before['rss_kib'] // 1024} -> {after['rss_kib'] // 1024} MiB; launcher max RSS "
              f"{max_rss // 1024} MiB (median {rss[len(rss) // 2] // 1024 if rss else 0} MiB)")
        for f in failures[:40]:
            print("soak: FAIL " + f)
        print("soak: " + ("FAILED (%d problems)" % len(failures) if failures else "ok: nothing lost, nothing left"))
        return 1 if failures else 0

    def close(self):
        if getattr(self, "holder", None):
            self.holder.kill()
            self.holder.wait()
        for c in self.service.containers():
            if c.startswith("asbx-soak-"):
                self.service.podman("rm", "-f", c.split()[0], check=False)
        self.service.stop()
        if not self.args.keep:
            self.seat.cleanup()
        else:
            print("soak: kept " + str(self.seat.dir))


def ledger_lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def transient_units():
    """Transient units a session could leave (systemd hosts only: re-exec scopes, libpod scopes)."""
    if not os.path.isdir("/run/systemd/system"):
        return []
    out = subprocess.run(["systemctl", "list-units", "--all", "--no-legend", "--plain", "asbx-*", "libpod-*"],
                         capture_output=True, text=True).stdout
    return [l.split()[0] for l in out.splitlines() if l.strip()]


def seat_leftovers(registry, ids):
    """This soak's containers and status files still on the seats (the seats may be shared: only ours count)."""
    ssh = ROOT / "scripts" / "seat-host" / "ssh.sh"
    names = [l.split("=", 1)[1].strip().strip('"') for l in open(registry) if l.strip().startswith("name")]
    left = []
    for seat in names:
        out = subprocess.run([str(ssh), seat, "podman ps -a --filter label=agent-sandbox.session --format '{{.Names}}'; "
                              "cd \"$XDG_RUNTIME_DIR\" && ls | sed -n 's/^agent-sandbox-status\\.\\(.*\\)\\.json$/\\1/p'"],
                             capture_output=True, text=True, timeout=60).stdout.split()
        left += [f"{seat}:{x}" for x in out if x.removeprefix("asbx-") in ids]
    return left


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("minutes", type=float, nargs="?", default=20)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--sequential", type=int, help="exactly this many sequential sessions (not a third of MINUTES)")
    ap.add_argument("--rounds", type=int,
                    help="then this many rounds of CONCURRENCY sessions started together (not the rest of MINUTES)")
    ap.add_argument("--big-mib", type=int, default=100)
    ap.add_argument("--registry", help="also dispatch to the seats of this registry")
    ap.add_argument("--max-launcher-rss-mib", type=int, default=48)
    ap.add_argument("--fd-noise", type=int, default=8)
    ap.add_argument("--service-rss-noise-mib", type=int, default=48)
    ap.add_argument("--session-timeout", type=int, default=300, help="seconds before a session counts as hung")
    ap.add_argument("--inject-leak", action="store_true", help="leave a container and a slot claim: must FAIL")
    ap.add_argument("--keep", action="store_true", help="keep the soak's seat dir (ledger, status files)")
    args = ap.parse_args()
    if args.registry == "auto":  # the rd seats of scripts/test-prep.d/40-remote-seats.sh
        rd = pathlib.Path(os.environ.get("ASBX_SEAT_STATE", "/var/lib/agent-sandbox/seats")) / "registry-rd.toml"
        must = os.environ.get("CI") == "true" or os.environ.get("ASBX_MUST_WORK") == "1"
        if not rd.exists() and must:
            print(f"soak: FAIL the rd seats are not up ({rd}; scripts/test-prep.d/40-remote-seats.sh)")
            return 1
        args.registry = str(rd) if rd.exists() else None
        if not args.registry:
            print(f"soak: no seats ({rd} missing): local sessions only")
    soak = Soak(args)
    try:
        return soak.run()
    finally:
        soak.close()


if __name__ == "__main__":
    sys.exit(main())
