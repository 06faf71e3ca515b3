"""Refused calls on record under gVisor (docs/DECISIONS.md, issue 36, "Refused calls under gVisor").

runsc applies the session's profile itself and has no seccomp agent; the seat's runsc wrapper
turns on the sentry's debug log into a FIFO the launcher made in the container's bundle, and the
launcher counts the sentry's refusal lines. The probe's refused calls are each in the record and
the ledger (by call: the sentry logs no arguments), the first on stderr; tripwire = "kill" ends
the session (225); a flood is counted exactly at a bounded cost; a wrapper that does not open the
log refuses the session (233, nothing created) — the CONTROL, the same session through the seat's
own wrapper, runs.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from harness import CODES, LAUNCHER, ROOT, RUNSC_DIR, RUNSC_SOCKET, peak_rss_argv, peak_rss_bytes, session_containers
from private_service import PrivateService
from probe_seat import ProbeSeat
from test_gvisor import gvisor_seat
from test_seccomp_record import CALLS
# The probe's refusals as the sentry logs them: the calls refused whatever their arguments as under
# runc; those whose rows decide by arguments apart (the log has none, and the agent's own filter's
# refusals read the same), personality's other values among them (podman's default refuses them).
BY_ARGUMENTS = {"clone": 2, "socket": 5, "personality": 2}
CALLS_GVISOR = {k: v for k, v in CALLS.items() if k not in BY_ARGUMENTS}


class GvisorProbeSeat(ProbeSeat):
    SOURCE, LIBS = "seccomp_probe.c", ("-lpthread",)

    def setUp(self):
        super().setUp()
        gvisor_seat(self)
        text = self.seat.config_file.read_text()
        if 'runtime = "runsc"' not in text:
            self.seat.write('runtime = "runsc"\n' + text)

    def probe(self, session, *args, timeout=180, seat=None):
        return self.seat.status("--id", session, "--workspace", str(self.probe_workspace("probe")), *args, timeout=timeout)

    def ledger_last(self):
        return json.loads(self.seat.ledger.read_text().splitlines()[-1])


class Recorded(GvisorProbeSeat):
    def test_each_refused_call_of_the_probe_is_on_record(self):
        proc, record = self.probe("gvrec-probe", "--", "./seccomp_probe")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.assertIn(b"keyctl\tEPERM\n", proc.stdout)
        s = record["seccomp"]
        self.assertEqual((s["recorded"], s["source"], s["mode"], s["first"]), (True, "sentry_log", "record", "setns"))
        self.assertEqual((s["calls"], s["unattributed"]), (CALLS_GVISOR, BY_ARGUMENTS))
        self.assertEqual((s["socket_families"], s["refused"], s["other"]), ({}, sum(CALLS_GVISOR.values()), 0))
        self.assertEqual(self.ledger_last()["seccomp"], s)
        err = proc.stderr.decode()
        self.assertIn("agent-sandbox: seccomp: refused setns (the record counts every refused call)\n", err)
        self.assertEqual(err.count("seccomp: refused"), 1)
        self.assertNoContainer("gvrec-probe")
        # Nothing of the log stays on the seat: it was a FIFO in the container's bundle, gone with it.
        self.assertEqual(record["isolation"]["wall"], "gvisor")

    def test_kill_mode_ends_the_session_at_the_first_refused_call(self):
        self.seat.write(self.seat.config_file.read_text() + 'tripwire = "kill"\n')
        proc, record = self.probe("gvrec-kill", "--", "bash", "-c", "echo before; ./seccomp_probe one keyctl; sleep 30; echo after")
        message = 'killed by the tripwire at its first trip: the refused call keyctl (tripwire = "kill" in %s)' % self.seat.config_file
        self.assertEqual(proc.returncode, CODES["tripwire"], proc.stderr)
        self.assertTrue(proc.stdout.startswith(b"before\n"), proc.stdout)
        self.assertNotIn(b"after", proc.stdout)  # the sentry answered the call; the kill came a moment later
        self.assertEqual((record["outcome"], record["error_kind"], record["cause"], record["message"]),
                         ("killed", "tripwire", "tripwire", message))
        self.assertEqual((record["seccomp"]["first"], record["seccomp"]["calls"]), ("keyctl", {"keyctl": 1}))
        err = proc.stderr.decode()
        self.assertIn('agent-sandbox: seccomp: refused keyctl (tripwire = "kill": the session ends)\n', err)
        self.assertLess(record["durations_ms"]["run"], 10000)
        self.assertNoContainer("gvrec-kill")

    def test_a_flood_is_counted_exactly_at_a_bounded_cost(self):
        def flood(session, n):
            report = tempfile.NamedTemporaryFile(delete=False)
            self.addCleanup(os.unlink, report.name)
            status = self.seat.dir / ("status-%s.json" % session)
            argv = [str(LAUNCHER), "--status-file", str(status), "--id", session, "--workspace",
                    str(self.probe_workspace("probe")), "--", "./seccomp_probe", "flood", str(n)]
            t0 = time.monotonic()
            proc = subprocess.run(peak_rss_argv(argv, report.name), capture_output=True, env=self.seat.env(), timeout=600)
            return proc, json.loads(status.read_text()), peak_rss_bytes(report.name), time.monotonic() - t0

        _, small, rss_small, _ = flood("gvrec-flood-1k", 1000)
        proc, record, rss, took = flood("gvrec-flood-100k", 100_000)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b"flood\t100000 refused of 100000\n")
        s = record["seccomp"]
        self.assertEqual((s["refused"], s["calls"], s["first"]), (100_000, {"keyctl": 100_000}, "keyctl"))
        self.assertEqual(small["seccomp"]["refused"], 1000)
        self.assertLess(rss, rss_small + 4 * 1024 * 1024, (rss_small, rss))  # nothing kept per line
        self.assertEqual(proc.stderr.decode().count("seccomp: refused"), 1)
        self.assertNoContainer("gvrec-flood-100k")
        print("\ngVisor flood: 100,000 refused calls in %.1f s (run %d ms); launcher peak RSS %.1f MiB (1,000: %.1f MiB)"
              % (took, record["durations_ms"]["run"], rss / 2**20, rss_small / 2**20), file=sys.stderr)

    def test_dry_run_says_the_sentry_log_records(self):
        proc = self.seat.run("--dry-run", "--id", "gvrec-dry", "--", "true")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        s = json.loads(proc.stdout)["seccomp"]
        self.assertEqual((s["listener"], s["sentry_log"]), (None, True))


class HostilePass(GvisorProbeSeat):
    """What a hostile pass got through against the first form of this recorder (text log, calls by
    number up to 0xffff, every refusal attributed): each is a test now."""
    SOURCE, LIBS = "sentry_log_probe.c", ()

    def test_the_agents_own_filter_is_counted_apart_and_kills_nothing(self):
        # An honest program's own filter (codex's sandbox, a browser's) refuses calls the profile
        # allows: the sentry logs them alike, so they are counted apart and never end a session; a
        # call the profile refuses whatever its arguments still does.
        self.seat.write(self.seat.config_file.read_text() + 'tripwire = "kill"\n')
        proc, record = self.probe("gvrec-own", "--", "./sentry_log_probe", "own-filter")
        self.assertEqual(proc.returncode, CODES["tripwire"], proc.stderr)
        self.assertEqual(proc.stdout.count(b"socket_inet\tOperation not permitted\n"), 3, proc.stdout)
        s = record["seccomp"]
        self.assertEqual((s["first"], s["calls"], s["unattributed"]), ("keyctl", {"keyctl": 1}, {"socket": 3}))

    def test_x32_numbers_are_counted_as_their_calls(self):
        proc, record = self.probe("gvrec-x32", "--", "./sentry_log_probe", "x32")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b"x32_unshare\tOperation not permitted\nx32_keyctl\tOperation not permitted\n")
        s = record["seccomp"]
        self.assertEqual((s["first"], s["calls"], s["refused"]), ("unshare", {"unshare": 1, "keyctl": 1}, 2))

    def test_a_number_with_high_bits_is_the_call_its_low_half_names(self):
        # The sentry filters the low 32 bits of the number and logs all 64 (a second hostile pass).
        self.seat.write(self.seat.config_file.read_text() + 'tripwire = "kill"\n')
        proc, record = self.probe("gvrec-hibits", "--", "./sentry_log_probe", "high-bits")
        self.assertEqual(proc.returncode, CODES["tripwire"], proc.stderr)
        self.assertNotIn(b"after", proc.stdout)
        self.assertEqual((record["seccomp"]["first"], record["seccomp"]["calls"]), ("keyctl", {"keyctl": 1}))

    def test_a_call_the_agents_own_kill_filter_answers_is_counted(self):
        # Its verdict is logged "killed by seccomp"; the profile refuses keyctl too.
        proc, record = self.probe("gvrec-ownkill", "--", "./sentry_log_probe", "own-kill")
        self.assertEqual((proc.returncode, proc.stdout), (0, b"own_kill\tSIGSYS\n"), proc.stderr)
        self.assertEqual((record["seccomp"]["first"], record["seccomp"]["calls"]), ("keyctl", {"keyctl": 1}))

    def test_names_that_spell_refusal_entries_count_nothing(self):
        # The gofer's log carries the names the agent walks: a newline and a whole text entry for
        # every pid the seat may have (the text log's one check), and a whole JSON entry.
        pid_max = min(int(pathlib.Path("/proc/sys/kernel/pid_max").read_text()), 65536)
        script = r"""
import os, sys
names = ['\nD1203 00:00:00.000000 %d task_syscall.go:240] [1:1] Syscall 250: denied by seccomp\n' % pid
         for pid in range(1, int(sys.argv[1]) + 1)]
names.append('"}{"msg":"[   1:   1] Syscall 250: denied by seccomp","level":"debug","time":"2026-12-03T00:00:00Z"}{"msg":"')
for n in names:
    try:
        os.stat(n.replace('/', '_'))
    except OSError:
        pass
print(len(names))
"""
        proc, record = self.probe("gvrec-forge", "--", "python3", "-c", script, str(pid_max))
        self.assertEqual((proc.returncode, proc.stdout), (0, b"%d\n" % (pid_max + 1)), proc.stderr)
        s = record["seccomp"]
        self.assertEqual((s["refused"], s["calls"], s["unattributed"], s["first"]), (0, {}, {}, None))
        self.assertNotIn(b"seccomp: refused", proc.stderr)


class WrapperWithoutTheLog(GvisorProbeSeat):
    """A runsc service whose wrapper predates the log (the wrapper of the previous release): the
    sentry never opens the FIFO, and the session is refused rather than run unrecorded."""

    def setUp(self):
        super().setUp()
        self.service = PrivateService(prefix="asbx-gvrec-", conf=ROOT / "scripts" / "containers-runsc.conf")
        self.addCleanup(self.stop_service)
        old = self.service.dir / "runsc-old"
        old.write_text('#!/bin/sh\nexec /usr/bin/runsc --platform=ptrace --network=host --oci-seccomp "$@"\n')
        old.chmod(0o755)
        conf = self.service.conf.read_text()
        conf = conf.replace("/usr/libexec/agent-sandbox/runsc-ptrace", str(old))
        self.service.conf.write_text(conf)
        self.service.start()

    def stop_service(self):
        self.service.stop()

    def test_a_wrapper_that_opens_no_log_refuses_the_session(self):
        self.seat.write(self.seat.config_file.read_text().replace(f'runsc_socket = "{RUNSC_SOCKET}"',
                                                                  f'runsc_socket = "{self.service.socket}"'))
        proc, record = self.probe("gvrec-oldwrap", "--", "echo", "ran")
        message = ("gVisor: the sentry did not open its log for the seccomp recorder: the podman service at %s did not "
                   "run the sandbox through %s/runsc-ptrace (its containers.conf must name it); nothing was started"
                   % (self.service.socket, RUNSC_DIR))
        self.assertLauncherError(proc, record, "seccomp_unavailable", message)
        self.assertNotIn(b"ran", proc.stdout)
        self.assertEqual(self.service.containers("gvrec-oldwrap"), [])

    def test_control_the_seats_own_wrapper_runs_it(self):
        proc, record = self.probe("gvrec-newwrap", "--", "echo", "ran")
        self.assertEqual((proc.returncode, proc.stdout), (0, b"ran\n"), proc.stderr)
        self.assertEqual(record["seccomp"]["source"], "sentry_log")


class ServiceOnAnotherPlatform(GvisorProbeSeat):
    """podman 4.3 runs the runtime its service's containers.conf names, whatever the create body
    asks: a kvm seat whose runsc service was left on the ptrace wrapper (the package's default) ran
    its sessions on ptrace while the record said kvm. The sandbox's boot logs its platform."""

    def test_a_kvm_seat_whose_service_runs_ptrace_is_refused(self):
        self.seat.write('runsc_platform = "kvm"\n' + self.seat.config_file.read_text())
        proc, record = self.probe("gvplat-kvm", "--", "echo", "ran")
        message = ("gVisor (runsc): the podman service at %s ran the sandbox on the ptrace platform, not kvm "
                   "(runsc_platform); its containers.conf must name %s/runsc-kvm; nothing was started"
                   % (RUNSC_SOCKET, RUNSC_DIR))
        self.assertLauncherError(proc, record, "isolation_unavailable", message)
        self.assertNotIn(b"ran", proc.stdout)
        self.assertEqual(session_containers("gvplat-kvm", socket=RUNSC_SOCKET), [])
        self.assertFalse((self.seat.dir / "run" / "gvplat-kvm").exists(), "its seat tmpfs dir was left")

    def test_control_the_same_seat_on_ptrace_runs(self):
        proc, record = self.probe("gvplat-ptrace", "--", "echo", "ran")
        self.assertEqual((proc.returncode, proc.stdout), (0, b"ran\n"), proc.stderr)
        self.assertEqual((record["isolation"]["wall"], record["isolation"]["platform"]), ("gvisor", "ptrace"))


class BootThatNamesNothing(GvisorProbeSeat):
    """A runtime whose log opens (its first entry is heard) but never says which platform and network
    the sandbox has: refused like a wrong one, never run on trust."""

    def setUp(self):
        super().setUp()
        self.service = PrivateService(prefix="asbx-gvboot-", conf=ROOT / "scripts" / "containers-runsc.conf")
        self.addCleanup(self.service.stop)
        quiet = self.service.dir / "runsc-quiet"
        quiet.write_text('#!/bin/sh\n'  # on create only, as the seat's wrapper: one entry, then runsc with no log
                         'c= b= prev=; for a in "$@"; do case "$prev" in --bundle|-bundle|-b) b=$a ;; esac\n'
                         '  case "$a" in create) c=1 ;; --bundle=*|-bundle=*|-b=*) b=${a#*=} ;; esac; prev=$a; done\n'
                         'if [ -n "$c" ] && [ -p "$b/asbx-sentry.log" ]; then\n'
                         '  printf \'{"msg":"no configuration here","level":"info"}\\n\' >"$b/asbx-sentry.log"; fi\n'
                         'exec /usr/bin/runsc --platform=ptrace --network=host --oci-seccomp "$@"\n')
        quiet.chmod(0o755)
        self.service.conf.write_text(self.service.conf.read_text().replace("/usr/libexec/agent-sandbox/runsc-ptrace",
                                                                           str(quiet)))
        self.service.start()

    def test_a_boot_that_names_no_platform_refuses_the_session(self):
        self.seat.write(self.seat.config_file.read_text().replace(f'runsc_socket = "{RUNSC_SOCKET}"',
                                                                  f'runsc_socket = "{self.service.socket}"'))
        proc, record = self.probe("gvboot-quiet", "--", "echo", "ran")
        message = ("gVisor (runsc): the podman service at %s did not say which platform and network its sandbox has "
                   "(its log names none); its containers.conf must name %s/runsc-ptrace; nothing was started"
                   % (self.service.socket, RUNSC_DIR))
        self.assertLauncherError(proc, record, "isolation_unavailable", message)
        self.assertNotIn(b"ran", proc.stdout)
        self.assertEqual(self.service.containers("gvboot-quiet"), [])
        self.assertFalse((self.seat.dir / "run" / "gvboot-quiet").exists(), "its seat tmpfs dir was left")
