"""Every refused call on record (docs/DECISIONS.md, issue 34, "Recording each refused call").

The profile's recorded rows notify the session's recorder (launcher/lifecycle/seccomp_recorder.h),
which answers each with the row's errno and counts it: the probe's refused calls are each in the
status record and the ledger, the first on stderr; tripwire = "kill" ends the session at the
first (225); a flood of a million refused calls costs counts, not memory, and the timeout still
ends the session. The CONTROL: the same rules with no listener (plain errnos, the kube form) under
podman: the calls are refused alike and nothing counts them.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

from harness import CODES, LAUNCHER, RANGE_USERNS, SOCKET, peak_rss_argv, peak_rss_bytes, removals_done, session_entries
from probe_seat import ProbeSeat, RootlessProbeSeat
from test_seccomp import REFUSED, STILL_WORKS, control_run, table

# The probe's "all" run, as the recorder counts it (personality's other values are answered by
# the default action, clone3 by its own ENOSYS rule: neither is a recorded notification).
CALLS = {"clone": 2, "unshare": 1, "setns": 1, "mount": 1, "umount2": 1, "pivot_root": 1, "fsopen": 1, "fsconfig": 1,
         "fsmount": 1, "fspick": 1, "open_tree": 1, "move_mount": 1, "mount_setattr": 1, "keyctl": 1, "add_key": 1,
         "request_key": 1, "socket": 5, "ptrace": 1, "process_vm_readv": 1, "syslog": 1, "io_uring_setup": 1,
         "bpf": 1, "userfaultfd": 1}
FAMILIES = {"AF_NETLINK": 1, "AF_PACKET": 1, "AF_ALG": 1, "AF_VSOCK": 1, "AF_46+": 1}


class Recorded(ProbeSeat):
    SOURCE, LIBS = "seccomp_probe.c", ("-lpthread",)

    def workspace(self):
        return self.probe_workspace("probe")

    def probe(self, session, *args, timeout=180):
        return self.seat.status("--id", session, "--workspace", str(self.workspace()), *args, timeout=timeout)

    def assertNothingLeft(self, session):
        self.assertNoContainer(session)
        removals_done(self.seat.dir / "run")  # a session answered before its removal (deferred)
        self.assertEqual(session_entries(self.seat.dir / "run"), [])

    def ledger_last(self):
        return json.loads(self.seat.ledger.read_text().splitlines()[-1])

    def test_each_refused_call_of_the_probe_is_on_record(self):
        proc, record = self.probe("screc-probe", "--", "./seccomp_probe")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        got = table(proc.stdout)
        for name, errno in REFUSED.items():
            self.assertEqual(got.get(name), errno, name)  # the recorder answers the row's errno
        for name in STILL_WORKS:
            self.assertEqual(got.get(name), "ok", name)
        s = record["seccomp"]
        self.assertEqual((s["recorded"], s["mode"], s["first"]), (True, "record", "clone(CLONE_NEWUSER)"))
        self.assertEqual(s["calls"], CALLS)
        self.assertEqual(s["socket_families"], FAMILIES)
        self.assertEqual((s["refused"], s["other"]), (sum(CALLS.values()), 0))
        self.assertEqual(self.ledger_last()["seccomp"], s)
        err = proc.stderr.decode()
        self.assertIn("agent-sandbox: seccomp: refused clone(CLONE_NEWUSER) (the record counts every refused call)\n", err)
        self.assertEqual(err.count("seccomp: refused"), 1)
        self.assertNothingLeft("screc-probe")
        print("\nseccomp record (the probe): %s" % json.dumps(s), file=sys.stderr)

    def test_kill_mode_ends_the_session_at_the_first_refused_call(self):
        self.seat.write(self.seat.config_file.read_text() + 'tripwire = "kill"\n')
        proc, record = self.probe("screc-kill", "--", "bash", "-c", "echo before; ./seccomp_probe one keyctl; sleep 30; echo after")
        message = 'killed by the tripwire at its first trip: the refused call keyctl (tripwire = "kill" in %s)' % self.seat.config_file
        self.assertEqual(proc.returncode, CODES["tripwire"], proc.stderr)
        self.assertEqual(proc.stdout, b"before\n")  # the probe never saw an answer: killed before it
        self.assertEqual((record["outcome"], record["error_kind"], record["cause"], record["exit_code"], record["message"]),
                         ("killed", "tripwire", "tripwire", CODES["tripwire"], message))
        self.assertEqual(record["agent_exit_code"], 137)
        self.assertEqual((record["seccomp"]["first"], record["seccomp"]["calls"]), ("keyctl", {"keyctl": 1}))
        err = proc.stderr.decode()
        self.assertIn('agent-sandbox: seccomp: refused keyctl (tripwire = "kill": the session ends)\n', err)
        self.assertIn("agent-sandbox: " + message + "\n", err)
        self.assertLess(record["durations_ms"]["run"], 10000)
        self.assertEqual(self.ledger_last()["seccomp"], record["seccomp"])
        self.assertNothingLeft("screc-kill")

    def flood(self, session, n, *more):
        report = tempfile.NamedTemporaryFile(delete=False)
        self.addCleanup(os.unlink, report.name)
        status = self.seat.dir / ("status-%s.json" % session)
        argv = [str(LAUNCHER), "--status-file", str(status), "--id", session, "--workspace", str(self.workspace()), *more,
                "--", "./seccomp_probe", "flood", str(n)]
        t0 = time.monotonic()
        proc = subprocess.run(peak_rss_argv(argv, report.name), capture_output=True, env=self.seat.env(), timeout=600)
        return proc, json.loads(status.read_text()), peak_rss_bytes(report.name), time.monotonic() - t0

    def test_a_flood_of_refused_calls_costs_counts_not_memory(self):
        _, small, rss_small, _ = self.flood("screc-flood-1k", 1000)
        proc, record, rss, took = self.flood("screc-flood-1m", 1_000_000)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b"flood\t1000000 refused of 1000000\n")
        s = record["seccomp"]
        self.assertEqual((s["refused"], s["calls"], s["first"]), (1_000_000, {"keyctl": 1_000_000}, "keyctl"))
        self.assertEqual(small["seccomp"]["refused"], 1000)
        self.assertLess(len(json.dumps(s)), 400)  # the record: fixed counters
        self.assertLess(rss, rss_small + 4 * 1024 * 1024, (rss_small, rss))  # the launcher: nothing kept per call
        self.assertEqual(proc.stderr.decode().count("seccomp: refused"), 1)
        self.assertNothingLeft("screc-flood-1m")
        print("\nflood: 1,000,000 refused calls in %.1f s (run %d ms); launcher peak RSS %.1f MiB (1,000 calls: %.1f MiB)"
              % (took, record["durations_ms"]["run"], rss / 2**20, rss_small / 2**20), file=sys.stderr)

    def test_the_timeout_ends_a_flood_on_time(self):
        proc, record, _, took = self.flood("screc-flood-timeout", 10**12, "--timeout", "5s")
        self.assertEqual(proc.returncode, CODES["killed_timeout"], proc.stderr)
        self.assertEqual((record["cause"], record["error_kind"]), ("timeout", "killed_timeout"))
        self.assertGreater(record["seccomp"]["refused"], 1000)
        self.assertLess(record["durations_ms"]["run"], 8000)
        self.assertNothingLeft("screc-flood-timeout")

    def test_control_without_the_recorder_the_same_calls_are_refused_and_nothing_is_recorded(self):
        """The same probe under the same rules with no listener (the profile `seccomp-profile` prints,
        what a kube node takes: the recorded rows as plain errnos): refused alike, and no count
        comes from anywhere, so the session's counts are the recorder's."""
        profile = self.seat.dir / "errno-profile.json"
        made = self.seat.run("seccomp-profile")
        self.assertEqual(made.returncode, 0, made.stderr)
        self.assertNotIn(b"SCMP_ACT_NOTIFY", made.stdout)
        self.assertNotIn(b"listenerPath", made.stdout)
        profile.write_bytes(made.stdout)
        proc = control_run(self.probe_dir, SOCKET, extra=("--security-opt", "seccomp=%s" % profile))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        got = table(proc.stdout.encode())
        for name, errno in REFUSED.items():
            self.assertEqual(got.get(name), errno, name)
        self.assertNotIn("seccomp: refused", proc.stderr)
        _, record = self.probe("screc-control", "--", "true")
        self.assertEqual((record["seccomp"]["recorded"], record["seccomp"]["refused"], record["seccomp"]["first"]), (True, 0, None))

    def test_a_persistent_session_records_in_its_supervisor(self):
        """--persist: the supervisor runs the session, so the recorder lives as long as it does."""
        cmd = "%s --id screc-persist --persist --tty --timeout 60s --workspace %s -- bash -c " \
              "'./seccomp_probe one keyctl; ./seccomp_probe one add_key'" % (LAUNCHER, self.workspace())
        proc = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, env=self.seat.env(), timeout=120)
        self.assertIn(b"keyctl\tEPERM", proc.stdout)
        for _ in range(100):  # the supervisor writes the ledger line as the session ends
            if self.seat.ledger.exists() and "screc-persist" in self.seat.ledger.read_text():
                break
            time.sleep(0.1)
        line = self.ledger_last()
        self.assertEqual((line["id"], line["persist"], line["exit_code"]), ("screc-persist", True, 0))
        self.assertEqual((line["seccomp"]["calls"], line["seccomp"]["first"]), ({"keyctl": 1, "add_key": 1}, "keyctl"))
        self.assertNothingLeft("screc-persist")

    def test_dry_run_names_the_listener_and_the_rules_digest(self):
        proc = self.seat.run("--dry-run", "--id", "screc-dry", "--", "true")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        s = json.loads(proc.stdout)["seccomp"]
        self.assertEqual(s["listener"], "%s/run/screc-dry/seccomp.sock" % self.seat.dir)
        printed = self.seat.run("seccomp-profile")  # what a kube node takes: the same digest
        self.assertEqual(s["digest"], printed.stderr.decode().strip())

    def test_no_listener_no_session(self):
        run = self.seat.dir / "run"
        run.mkdir(exist_ok=True)
        (run / "screc-nolistener").write_text("in the way\n")  # where the session dir would be
        proc, record = self.probe("screc-nolistener", "--", "true")
        path = run / "screc-nolistener" / "seccomp.sock"
        if RANGE_USERNS:  # the seat tmpfs, made first, finds the session dir unusable
            self.assertLauncherError(proc, record, "isolation_unavailable",
                                     "user namespace (user_namespace = \"range\"): the seat tmpfs for '/sandbox/home' "
                                     f"({run}/screc-nolistener/tmpfs/0): cannot take {run}/screc-nolistener: Not a "
                                     "directory; nothing was started")
        else:
            self.assertLauncherError(proc, record, "seccomp_unavailable",
                                     f"the seccomp recorder's socket {path}: cannot take {run}/screc-nolistener: Not a "
                                     "directory; nothing was started")
        self.assertNoContainer("screc-nolistener")
        self.assertEqual(sorted(p.name for p in session_entries(run)), ["screc-nolistener"])


class RecordedRootless(RootlessProbeSeat):
    """The same on a rootless seat: sandbox-run's user binds the socket, rootless runc connects.
    (This lab's rootless seat has tripwire = "off", its TUN being root's: the recorder stays on.
    Kill mode arms the tripwire's device too, so it is tested rootful.)"""
    SOURCE, LIBS = "seccomp_probe.c", ("-lpthread",)

    def test_each_refused_call_is_on_record_rootless(self):
        proc, record = self.run_as_user("--id", "screc-rl", "--workspace", str(self.ws), "--", "./seccomp_probe")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.assertEqual(record["mode"], "rootless")
        got = table(proc.stdout)
        for name, errno in REFUSED.items():
            self.assertEqual(got.get(name), errno, name)
        s = record["seccomp"]
        self.assertEqual((s["recorded"], s["first"], s["calls"], s["socket_families"]),
                         (True, "clone(CLONE_NEWUSER)", CALLS, FAMILIES))
        ledger = self.seat.state_home / "agent-sandbox" / "ledger.jsonl"
        self.assertEqual(json.loads(ledger.read_text().splitlines()[-1])["seccomp"], s)
        self.assertIn(b"seccomp: refused clone(CLONE_NEWUSER) (the record counts every refused call)\n", proc.stderr)
        self.assertEqual(list((self.seat.dir / "run").glob("screc-rl*")), [])
        print("\nseccomp record (the probe, rootless): %s" % json.dumps(s), file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
