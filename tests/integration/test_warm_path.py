"""The warm pool (docs/DECISIONS.md "Issue 37: the warm pool"), against the real service: members
made by `agent-sandbox pool fill`, claimed by sessions that fit, bound at claim, removed after.
  - a warm session answers like a cold one: exit code, output, the workspace's writes as its owner,
    the same environment; its record says `path: "warm"`; nothing of the member stays;
  - a member is claimed once: concurrent sessions never share one, and none is handed out twice;
  - what does not fit goes cold, and the record says why;
  - a member made for another plan is discarded by the next fill, never handed out;
  - gc removes a member whose keeper died (no ledger line: no session ran), a pool whose keepers and
    members all died at once (a power cut's leftovers), and a claimed member whose session failed
    is removed like any session's container;
  - a claim reads the keepers' ready files: a member without one is never handed out, and the fill
    replaces it;
  - two concurrent warm sessions see only their own workspace under /sandbox/workspaces;
  - from a hostile pass: an image rebuilt under the seat's tag is another plan; a second launcher
    of a running id is refused before it touches a member; a session that fails after its claim
    (a busy workspace) removes the member; gc never removes a member a live session claimed.
"""
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid

from harness import CODES, GVISOR, IMAGE, LAUNCHER, POOL_KEYS, SeatTest, UnixRelay, podman, session_containers

AGENT_UID = 1000


def members(seat):
    out = podman("ps", "-a", "--filter", "label=agent-sandbox.pool-runtime-dir=" + str(seat.dir / "run"),
                 "--format", "json").stdout
    return {c["Id"]: c for c in json.loads(out or "[]")}


def kill_dead(pid, wait=10):
    """SIGKILL, then wait until the process has ended (a zombie or gone): on a loaded seat its exit
    takes longer than a fixed pause, and gc rightly counts a process still ending as alive."""
    os.kill(pid, signal.SIGKILL)
    until = time.monotonic() + wait
    while time.monotonic() < until:
        try:
            if pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX":
                return
        except (FileNotFoundError, ProcessLookupError):
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} did not end in {wait} s")


def ready_ids(run):
    """The members of the seat whose runtime dir is RUN that have a ready file and no claim file."""
    out = set()
    for f in run.glob("pool-*/ready"):
        try:
            mid = json.loads(f.read_text())["id"]
        except (OSError, ValueError, KeyError):
            continue
        if not (run / ".pool" / (mid + ".claim")).exists():
            out.add(mid)
    return out


class HoldingRelay(UnixRelay):
    """Holds each connection to the service until `go` is set (`arrived` says one came), then relays it."""

    def __init__(self, path):
        self.arrived, self.go = threading.Event(), threading.Event()
        super().__init__(path)

    def relay(self, conn):
        self.arrived.set()
        self.go.wait(30)
        with conn, socket.socket(socket.AF_UNIX) as up:
            up.connect(self.upstream)
            threading.Thread(target=self.pipe, args=(up, conn), daemon=True).start()
            self.pipe(conn, up)
            time.sleep(1)  # the answer's way back

    @staticmethod
    def pipe(src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class WarmSeat(SeatTest):
    def setUp(self):
        super().setUp()
        if os.geteuid() != 0 or GVISOR:
            self.skipTest("the pool is for rootful runc seats (plan/warm_fit.cc)")
        self.base = "".join(l for l in self.seat.config_file.read_text().splitlines(True) if not l.startswith(POOL_KEYS))
        self.seat.config_file.write_text("pool_size = 2\n" + self.base)
        self.addCleanup(self.drain)

    def fill(self):
        proc = self.seat.run("pool", "fill")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc

    def ready(self, n=2, wait=30):
        """Until N members a claim could take: ready files no claim file names, their containers
        running (podman says `running` of a claimed member too: the fill starts each)."""
        run, until = self.seat.dir / "run", time.monotonic() + wait
        while len(ready_ids(run) & {i for i, m in members(self.seat).items() if m["State"] == "running"}) < n:
            self.assertLess(time.monotonic(), until, "the pool was not refilled")
            time.sleep(0.1)

    def drain(self):
        """The pool off, then `pool fill` removes every unclaimed member; again until no refill a
        session spawned is still at work (it holds the fill lock, so the fill says so)."""
        self.seat.config_file.write_text(self.base)
        until = time.monotonic() + 30
        while time.monotonic() < until:
            proc = self.seat.run("pool", "fill")
            if b"another fill is at work" not in proc.stderr and not members(self.seat):
                break
            time.sleep(0.2)
        self.assertEqual(members(self.seat), {}, "members left behind")

    def codex_credential(self, key):
        """A codex API-key credential (0600 in a 0700 dir), as a seat user keeps one."""
        creds = self.seat.dir / "creds"
        creds.mkdir(mode=0o700, exist_ok=True)
        cred = creds / "codex.json"
        with os.fdopen(os.open(cred, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
            json.dump({"auth_mode": "apikey", "OPENAI_API_KEY": key}, f)
        return cred

    def workspace(self, name):
        ws = self.seat.workspaces / name
        ws.mkdir()
        os.chown(ws, AGENT_UID, AGENT_UID)
        return ws


class WarmSession(WarmSeat):
    def test_a_session_takes_a_member_and_answers_like_a_cold_one(self):
        self.fill()
        made = set(members(self.seat))
        self.assertEqual(len(made), 2)
        ws = self.workspace("w1")
        proc, rec = self.seat.status("--id", "warm-1", "--workspace", str(ws), "--",
                                     "sh", "-c", "echo out; echo err >&2; echo x > f; pwd; exit 7")
        self.assertEqual((proc.returncode, proc.stdout), (7, b"out\n/sandbox/workspaces/w1\n"), proc.stderr)
        self.assertIn(b"err\n", proc.stderr)
        self.assertEqual((rec["path"], rec["path_reason"], rec["outcome"], rec["agent_exit_code"]), ("warm", None, "exited", 7))
        self.assertIn(rec["container_id"], made)
        self.assertNotIn("create", rec["durations_ms"]["phases"])  # made ahead of time
        st = (ws / "f").stat()
        self.assertEqual((st.st_uid, st.st_gid), (AGENT_UID, AGENT_UID))  # lands as the workspace's owner
        self.assertEqual(session_containers("warm-1"), [])
        self.assertNotIn(rec["container_id"], members(self.seat))
        mounts = pathlib.Path("/proc/self/mountinfo").read_text()
        self.assertNotIn(str(ws), mounts)  # the claim's bind went with the session
        self.ready()  # the launcher refilled what it took
        member_dirs = sorted(p.name for p in (self.seat.dir / "run").iterdir() if p.name.startswith("pool-"))
        self.assertEqual(member_dirs, sorted(m["Labels"]["agent-sandbox.session"] for m in members(self.seat).values()))

    def test_the_environment_is_a_cold_sessions(self):
        self.fill()
        warm, rec = self.seat.status("--id", "env-same", "--", "env")
        self.assertEqual(rec["path"], "warm")
        self.seat.config_file.write_text(self.base)  # pool off
        cold, rec = self.seat.status("--id", "env-same", "--", "env")
        self.assertEqual((rec["path"], rec["path_reason"]), ("cold", None))
        self.assertEqual(sorted(warm.stdout.splitlines()), sorted(cold.stdout.splitlines()))

    def test_a_command_whose_name_has_an_equals_sign_runs_warm_as_it_runs_cold(self):
        """env(1), which the member's stub execs through, would read ./A=B as one more variable: sh
        execs it instead (launcher/pool/member.h)."""
        self.fill()
        ws = self.workspace("eq")
        script = ws / "A=B"
        script.write_text('#!/bin/sh\nprintf "%s|" "$0" "$@"; exit 5\n')
        script.chmod(0o755)
        os.chown(script, AGENT_UID, AGENT_UID)
        (ws / "e=v").symlink_to("/usr/bin/env")  # what the command is given, sh's own PWD not among it
        argv = ["--workspace", str(ws), "--", "./A=B", "x", "y z", "it's"]
        warm, rec = self.seat.status("--id", "eq-same", *argv)
        self.assertEqual((warm.returncode, rec["path"], rec["path_reason"]), (5, "warm", None), warm.stderr)
        self.assertEqual(warm.stdout, b"./A=B|x|y z|it's|")
        self.ready(1)
        warm_env, rec = self.seat.status("--id", "eq-same", "--workspace", str(ws), "--", "./e=v")
        self.assertEqual(rec["path"], "warm")
        self.seat.config_file.write_text(self.base)  # pool off
        cold, rec = self.seat.status("--id", "eq-same", *argv)
        self.assertEqual((cold.returncode, rec["path"], cold.stdout), (5, "cold", warm.stdout), cold.stderr)
        cold_env, rec = self.seat.status("--id", "eq-same", "--workspace", str(ws), "--", "./e=v")
        self.assertEqual(sorted(warm_env.stdout.splitlines()), sorted(cold_env.stdout.splitlines()))
        self.assertNotIn(b"PWD=", warm_env.stdout)

    def test_other_limits_are_applied_to_the_member_before_it_starts(self):
        """--memory, --pids, --cpus other than the seat's: podman's update on the member's cgroup,
        read back from the cgroup's files before start (launcher/pool/warm_limits.h)."""
        self.fill()
        proc, rec = self.seat.status("--id", "warm-limits", "--memory", "1g", "--pids", "100", "--cpus", "1.5",
                                     "--cpu-shares", "100", "--",
                                     "sh", "-c", "cat /sys/fs/cgroup/memory/memory.limit_in_bytes "
                                     "/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes /sys/fs/cgroup/pids/pids.max "
                                     "/sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.shares")
        self.assertEqual((proc.returncode, rec["path"]), (0, "warm"), proc.stderr)
        self.assertEqual(proc.stdout.decode().split(), ["1073741824", "1073741824", "100", "150000", "100"])
        self.assertIn("limits", rec["durations_ms"]["phases"])
        proc, rec = self.seat.status("--id", "warm-seat-limits", "--", "true")  # the seat's: nothing to apply
        self.assertEqual(rec["path"], "warm")
        self.assertNotIn("limits", rec["durations_ms"]["phases"])

    def test_never_the_same_member_twice(self):
        self.fill()
        ids = []
        for i in range(4):
            self.ready()
            proc, rec = self.seat.status("--id", f"once-{i}", "--", "true")
            self.assertEqual((proc.returncode, rec["path"]), (0, "warm"), proc.stderr)
            ids.append(rec["container_id"])
        self.assertEqual(len(set(ids)), 4)


class WarmState(WarmSeat):
    def test_state_dir_comes_back_from_a_warm_session_and_a_credential_copy_stays_behind(self):
        """--state-dir on the warm path: the member's HOME is staged and pinned at claim as a cold
        one's is, so what the runtime's row keeps comes back (docs/STATE.md) — and a copy of the
        staged credential is still known for one."""
        self.fill()
        cred = self.codex_credential("sk-mock-warm-state")
        kept = self.seat.dir / "kept"
        proc, rec = self.seat.status(
            "--id", "warm-state", "--runtime", "codex", "--credential", str(cred), "--state-dir", str(kept), "--",
            "bash", "-c", "mkdir -p ~/.codex/sessions && echo warm-kept > ~/.codex/sessions/r.jsonl && "
                          "cp ~/.codex/auth.json ~/.codex/sessions/copy.txt")
        self.assertEqual((proc.returncode, rec["path"], rec["path_reason"]), (0, "warm", None), proc.stderr)
        self.assertEqual((kept / "warm-state/.codex/sessions/r.jsonl").read_text(), "warm-kept\n")
        state = rec["state"]
        self.assertEqual((state["dir"], state["files"], state["error"]), (str(kept / "warm-state"), 1, None))
        self.assertEqual({s["path"]: s["reason"] for s in state["skipped"]},
                         {".codex/sessions/copy.txt": "a copy of a staged credential"})
        self.assertEqual(sorted(os.listdir(kept)), ["warm-state"])
        self.assertEqual(session_containers("warm-state"), [])


class WarmEgress(WarmSeat):
    CONNECT = ("exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT evil.example:443 HTTP/1.1\\r\\n"
               "Host: evil.example:443\\r\\n\\r\\n' >&3; head -1 <&3 | tr -d '\\r'")

    def test_copy_mode_goes_warm_with_its_door_open_in_the_members_namespace(self):
        """--egress without inject hosts: the member's own empty namespace, the door opened at claim."""
        self.fill()
        proc, rec = self.seat.status("--id", "warm-egress", "--egress", "allowed.test", "--", "bash", "-c",
                                     "ls /sys/class/net | tr '\\n' ' '; echo; " + self.CONNECT)
        self.assertEqual((proc.returncode, rec["path"], rec["path_reason"]), (0, "warm", None), proc.stderr)
        self.assertEqual(proc.stdout.decode().splitlines(), ["lo tripwire0 ", "HTTP/1.1 403 Forbidden"])
        self.assertEqual([(r["host"], r["reason"]) for r in rec["egress"]["refused"]], [("evil.example", "not_allowed")])

    def test_inject_mode_goes_warm_with_the_session_ca_in_the_members_tmpfs(self):
        """Inject mode: the wall writes the session CA into the tmpfs every member of a pool seat has;
        the agent holds a placeholder, never the token, and its CLI's CA variable names the CA."""
        self.fill()
        cred = self.codex_credential("sk-mock-warm-inject")
        proc, rec = self.seat.status("--id", "warm-inject", "--runtime", "codex", "--credential", str(cred),
                                     "--egress", "api.openai.com", "--", "sh", "-c",
                                     "head -1 \"$CODEX_CA_CERTIFICATE\"; ls /sandbox/ca; grep -c sk-mock-warm-inject "
                                     "/sandbox/home/.codex/auth.json; touch /sandbox/ca/x 2>&1 >/dev/null | wc -l")
        self.assertEqual((proc.returncode, rec["path"], rec["path_reason"]), (0, "warm", None), proc.stderr)
        self.assertEqual(proc.stdout.decode().splitlines(),
                         ["-----BEGIN CERTIFICATE-----", "session-ca.pem", "0", "1"])

    def test_a_session_without_inject_mode_sees_the_cas_tmpfs_empty(self):
        self.fill()
        proc, rec = self.seat.status("--id", "warm-no-ca", "--", "sh", "-c", "ls -A /sandbox/ca | wc -l")
        self.assertEqual((proc.returncode, rec["path"], proc.stdout), (0, "warm", b"0\n"), proc.stderr)


class Concurrent(WarmSeat):
    def test_concurrent_claims_never_share_a_member(self):
        self.fill()
        made = set(members(self.seat))
        wss = [self.workspace(f"c{i}") for i in range(5)]
        results = [None] * 5

        def one(i):  # a status file of its own (the harness numbers them by counting: not for threads)
            path = self.seat.dir / f"conc-{i}.json"
            proc = self.seat.run("--status-file", str(path), "--id", f"conc-{i}", "--workspace", str(wss[i]), "--",
                                 "sh", "-c", "ls /sandbox/workspaces; sleep 1")
            results[i] = (proc, json.loads(path.read_text()))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        warm = []
        for i, (proc, rec) in enumerate(results):
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(proc.stdout, f"c{i}\n".encode())  # its own workspace only
            if rec["path"] == "warm":
                warm.append(rec["container_id"])
            else:
                self.assertTrue(rec["path_reason"].startswith("no ready member"), rec["path_reason"])
        self.assertEqual(len(warm), len(set(warm)), [(r["id"], r["path"], r["container_id"], r["durations_ms"]) for _, r in results])
        self.assertTrue(set(warm) <= made)
        self.assertGreaterEqual(len(warm), 1)


class ColdWithAReason(WarmSeat):
    def test_what_does_not_fit_goes_cold_and_says_why(self):
        self.fill()
        other = f"localhost/asbx-other-{uuid.uuid4().hex[:8]}:latest"  # the same image, named otherwise
        podman("tag", IMAGE, other)
        self.addCleanup(podman, "rmi", other, check=False)
        proc, rec = self.seat.status("--id", "cold-image", "--image", other, "--", "true")
        self.assertEqual((rec["path"], rec["path_reason"]),
                         ("cold", "no ready member was made for this session's plan (2 for another)"))
        self.assertEqual(len(members(self.seat)), 2)  # neither was touched

    def test_a_member_made_for_another_plan_is_discarded(self):
        self.fill()
        old = set(members(self.seat))
        other = f"localhost/asbx-other-{uuid.uuid4().hex[:8]}:latest"  # the seat's image named otherwise
        podman("tag", IMAGE, other)
        self.addCleanup(lambda: (self.drain(), podman("rmi", other, check=False)))  # after its members went
        self.base = self.base.replace(f'image = "{IMAGE}"', f'image = "{other}"')
        self.seat.config_file.write_text("pool_size = 2\n" + self.base)
        proc, rec = self.seat.status("--id", "stale", "--", "true")
        self.assertEqual((rec["path"], rec["path_reason"]),
                         ("cold", "no ready member was made for this session's plan (2 for another)"))
        self.fill()  # or the refill that session spawned: one of them discards the two
        until = time.monotonic() + 30
        while set(members(self.seat)) & old or len(members(self.seat)) < 2:
            self.assertLess(time.monotonic(), until, "the members made for another plan stayed")
            time.sleep(0.1)
        proc, rec = self.seat.status("--id", "fresh", "--", "true")
        self.assertEqual(rec["path"], "warm")

    def test_a_member_without_its_ready_file_is_never_handed_out_and_the_fill_replaces_it(self):
        """A claim reads the keepers' ready files, not podman's list (launcher/pool/ready.h): a member
        an older launcher made (no ready file) is no member to it, and the next fill removes it."""
        self.drain()  # a seat the harness filled (ASBX_TEST_POOL) starts empty here
        self.seat.config_file.write_text("pool_size = 1\n" + self.base)
        self.fill()
        (first, m), = members(self.seat).items()
        (self.seat.dir / "run" / m["Labels"]["agent-sandbox.session"] / "ready").unlink()
        proc = self.fill()
        self.assertIn(f"removed member {first[:12]}: it has no ready file (an older launcher made it)", proc.stderr.decode())
        (second, m), = members(self.seat).items()
        self.assertNotEqual(second, first)
        (self.seat.dir / "run" / m["Labels"]["agent-sandbox.session"] / "ready").unlink()
        proc, rec = self.seat.status("--id", "no-ready", "--", "true")
        self.assertEqual((proc.returncode, rec["path"], rec["path_reason"]), (0, "cold", "no ready member"), proc.stderr)
        self.assertFalse((self.seat.dir / "run" / ".pool" / (second + ".claim")).exists())

class Leftovers(WarmSeat):
    def test_gc_leaves_a_warm_orphans_dir_a_new_launcher_of_its_id_holds(self):
        """A warm session's launcher killed: gc removes its member, and with it the session's own dir —
        unless a new launcher of that id holds the dir by now (its owner file names a live process)."""
        self.fill()
        first = subprocess.Popen([str(LAUNCHER), "--id", "reheld", "--", "sleep", "120"], env=self.seat.env(),
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(lambda: (first.kill(), first.wait()))
        running = lambda: podman("ps", "-q", "--filter", "name=^asbx-reheld$", check=False).stdout.strip()
        until = time.monotonic() + 30
        while not running():  # renamed beside the agent: the member's name is the session's
            self.assertLess(time.monotonic(), until, "the warm session did not start")
            time.sleep(0.1)
        first.kill()
        first.wait()
        holder = subprocess.Popen(["sleep", "60"])  # the new launcher of "reheld", as its owner file says
        self.addCleanup(lambda: (holder.kill(), holder.wait()))
        owner = self.seat.dir / "run" / "reheld" / "owner"
        boot = pathlib.Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        owner.write_text(f"{holder.pid} {int(time.time())} {boot}\n")
        proc = self.seat.run("gc")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("removed asbx-reheld (session reheld)", proc.stdout.decode())
        self.assertEqual(running(), "")
        self.assertTrue(owner.exists(), "gc took the dir a new launcher of the id holds")
        self.assertEqual(owner.read_text(), f"{holder.pid} {int(owner.read_text().split()[1])} {boot}\n")  # still held
        holder.kill()  # CONTROL: its holder gone too, the next gc takes the dir
        holder.wait()
        proc = self.seat.run("gc")
        self.assertIn("removed the session dir of reheld", proc.stdout.decode())
        self.assertFalse(owner.parent.exists())

    def test_gc_removes_a_member_whose_keeper_died(self):
        self.fill()
        cid, m = next(iter(members(self.seat).items()))
        kill_dead(int(m["Labels"]["agent-sandbox.launcher-pid"]))
        proc = self.seat.run("gc")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"removed {m['Names'][0]}", proc.stdout.decode())
        self.assertNotIn(cid, members(self.seat))
        self.assertFalse((self.seat.dir / "run" / m["Labels"]["agent-sandbox.session"]).exists())
        self.assertFalse(self.seat.ledger.exists() and self.seat.ledger.read_text().strip())  # no session ran

    def test_a_seat_power_cut_leaves_no_orphan_after_gc(self):
        """What a power cut leaves of a pool, as far as a test can make it without a reboot: every
        keeper and every member's processes gone at once (SIGKILL, no cleanup ran). The next gc
        removes each member, its dir and its mounts, and writes no ledger line."""
        self.fill()
        made = members(self.seat)
        self.assertEqual(len(made), 2)
        for cid, m in made.items():
            kill_dead(int(m["Labels"]["agent-sandbox.launcher-pid"]))
            pid = json.loads(podman("inspect", cid).stdout)[0]["State"]["Pid"]
            kill_dead(pid)  # runc's init, waiting on its exec fifo
        proc = self.seat.run("gc")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(members(self.seat), {})
        run = self.seat.dir / "run"
        self.assertEqual([p.name for p in run.iterdir() if p.name.startswith("pool-")], [])
        self.assertNotIn(str(run) + "/pool-", pathlib.Path("/proc/self/mountinfo").read_text())
        self.assertFalse(self.seat.ledger.exists() and self.seat.ledger.read_text().strip())

    def test_a_power_cut_that_also_emptied_the_runtime_dir_leaves_no_orphan_after_gc(self):
        """As above, and the runtime dir gone as a reboot takes a tmpfs /run: no ready file, claim
        or session dir is left to say what the members were; their labels do."""
        self.fill()
        made = members(self.seat)
        self.assertEqual(len(made), 2)
        for cid, m in made.items():
            kill_dead(int(m["Labels"]["agent-sandbox.launcher-pid"]))
            kill_dead(json.loads(podman("inspect", cid).stdout)[0]["State"]["Pid"])
        run = self.seat.dir / "run"
        for line in reversed(pathlib.Path("/proc/self/mountinfo").read_text().splitlines()):
            if line.split()[4].startswith(str(run) + "/"):
                subprocess.run(["umount", "-l", line.split()[4]], check=True)
        shutil.rmtree(run)
        proc = self.seat.run("gc")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(members(self.seat), {})
        self.assertFalse(self.seat.ledger.exists() and self.seat.ledger.read_text().strip())

    def test_members_removed_behind_the_pools_back_are_passed_over_and_forgotten(self):
        """From a hostile pass: `podman rm` of waiting members (an operator, a prune) left ready
        files a claim trusted, so sessions failed (206) instead of going cold, and keepers stayed."""
        self.fill()
        made = members(self.seat)
        for cid in made:  # a running member: podman's own cleanup may race its rm (shm busy); again, as a hand would
            for _ in range(5):
                if podman("rm", "-f", cid, check=False).returncode == 0:
                    break
                time.sleep(0.5)
            self.assertEqual(podman("ps", "-aq", "--filter", "id=" + cid, check=False).stdout.strip(), "")
        proc, rec = self.seat.status("--id", "after-rm", "--", "echo", "ran")
        self.assertEqual((proc.returncode, proc.stdout, rec["path"], rec["path_reason"]),
                         (0, b"ran\n", "cold", "no ready member"), proc.stderr)
        until = time.monotonic() + 30  # that session's refill, or this fill, forgets both
        while True:
            proc = self.seat.run("pool", "fill")
            run = self.seat.dir / "run"
            left = {m["Labels"]["agent-sandbox.session"] for m in made.values()} & {p.name for p in run.iterdir()}
            if not left:
                break
            self.assertLess(time.monotonic(), until, f"the removed members' dirs stayed: {left}")
            time.sleep(0.2)
        for m in made.values():
            keeper = int(m["Labels"]["agent-sandbox.launcher-pid"])
            self.assertFalse(os.path.exists(f"/proc/{keeper}") and
                             pathlib.Path(f"/proc/{keeper}/stat").read_text().split()[2] not in "ZX", keeper)

    def test_a_refill_whose_seat_was_taken_down_meanwhile_makes_nothing_there(self):
        """A session's refill reads the seat config and then runs its gc; a seat taken down in
        between (its config and dirs removed) must not get its runtime dir back, or members."""
        relay = HoldingRelay(self.seat.dir / "held.sock")
        self.addCleanup(relay.close)
        self.seat.config_file.write_text(f'pool_size = 2\nsocket = "{relay.path}"\n' + "".join(
            l for l in self.base.splitlines(True) if not l.startswith("socket = ")))
        fill = subprocess.Popen([str(LAUNCHER), "pool", "fill"], env=self.seat.env(), stderr=subprocess.PIPE)
        self.assertTrue(relay.arrived.wait(30), "the fill never asked podman")
        self.seat.config_file.unlink()  # the seat taken down: its config, then its dirs
        shutil.rmtree(self.seat.dir / "run", ignore_errors=True)
        relay.go.set()
        _, err = fill.communicate(timeout=60)
        self.assertEqual((fill.returncode, err.decode()),
                         (0, f"{LAUNCHER.name}: pool: the seat config {self.seat.config_file} is gone: nothing to fill\n"))
        self.assertFalse((self.seat.dir / "run").exists())
        self.assertEqual(members(self.seat), {})
        self.seat.config_file.write_text(self.base)  # for the drain

    def test_a_claimed_member_whose_session_failed_is_removed(self):
        self.fill()
        made = set(members(self.seat))
        proc, rec = self.seat.status("--id", "warm-missing", "--", "/no/such/command")
        self.assertEqual(proc.returncode, CODES["command_not_found"], proc.stderr)
        self.assertEqual((rec["path"], rec["container_removed"]), ("warm", True))
        self.assertIn(rec["container_id"], made)
        self.assertNotIn(rec["container_id"], members(self.seat))
        self.assertFalse((self.seat.dir / "run" / ".pool" / (rec["container_id"] + ".claim")).exists())


class HostilePassFindings(WarmSeat):
    def test_an_image_rebuilt_under_the_seats_tag_is_another_plan(self):
        tag = f"localhost/asbx-warm-{uuid.uuid4().hex[:8]}:latest"
        podman("tag", IMAGE, tag)
        self.addCleanup(lambda: (self.drain(), podman("rmi", tag, check=False)))  # after its members went
        self.seat.config_file.write_text("pool_size = 2\n" + self.base.replace(f'image = "{IMAGE}"', f'image = "{tag}"'))
        self.base = self.base.replace(f'image = "{IMAGE}"', f'image = "{tag}"')
        self.fill()
        old = set(members(self.seat))
        cid = podman("create", tag, "true").stdout.strip()
        podman("commit", "-q", cid, tag)  # the tag now names another image
        podman("rm", cid)
        proc, rec = self.seat.status("--id", "rebuilt", "--", "true")
        self.assertEqual((proc.returncode, rec["path"], rec["path_reason"]),
                         (0, "cold", "no ready member was made for this session's plan (2 for another)"), proc.stderr)
        until = time.monotonic() + 30  # that session's refill (or this fill) replaces both
        while set(members(self.seat)) & old or len(members(self.seat)) < 2:
            self.fill()
            self.assertLess(time.monotonic(), until, "members of the old image stayed")
            time.sleep(0.2)

    def test_a_second_launcher_of_a_running_id_is_refused_before_any_member(self):
        self.fill()
        first = subprocess.Popen([str(LAUNCHER), "--id", "dup", "--", "sleep", "5"], env=self.seat.env(),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(first.wait)
        until = time.monotonic() + 20  # warm: named asbx-dup once it started
        while not podman("ps", "-q", "--filter", "name=^asbx-dup$").stdout.strip():
            self.assertLess(time.monotonic(), until)
            time.sleep(0.05)
        self.ready(1)
        pool = self.seat.dir / "run" / ".pool"
        before = {m for m in members(self.seat) if not (pool / (m + ".claim")).exists()}  # the unclaimed ones
        proc, rec = self.seat.status("--id", "dup", "--", "echo", "second")
        self.assertLauncherError(proc, rec, "create_failed",
                                 f"--id dup: a session of that id is already running on this seat (its launcher is pid "
                                 f"{first.pid}); nothing was created")
        self.assertEqual(proc.stdout, b"")
        self.assertTrue(before <= set(members(self.seat)))  # every ready member is still there, unclaimed
        self.assertFalse(any((self.seat.dir / "run" / ".pool" / (m + ".claim")).exists() for m in before))
        self.assertEqual(first.wait(60), 0)

    def test_a_session_that_fails_after_its_claim_removes_the_member(self):
        self.fill()
        made = set(members(self.seat))
        ws = self.workspace("busy")
        self.seat.config_file.write_text(self.base)  # the holder goes cold: both members stay for the second
        holder = subprocess.Popen([str(LAUNCHER), "--id", "holder", "--workspace", str(ws), "--", "sleep", "5"],
                                  env=self.seat.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(holder.wait)
        until = time.monotonic() + 20
        while not session_containers("holder", settle=0):
            self.assertLess(time.monotonic(), until)
            time.sleep(0.05)
        self.seat.config_file.write_text("pool_size = 2\n" + self.base)
        proc, rec = self.seat.status("--id", "busy-2", "--workspace", str(ws), "--", "true")
        self.assertEqual(proc.returncode, CODES["workspace_rejected"], proc.stderr)
        self.assertEqual((rec["path"], rec["container_removed"]), ("warm", True))
        self.assertIn(rec["container_id"], made)
        self.assertNotIn(rec["container_id"], members(self.seat))  # removed, not left claimed
        self.assertFalse((self.seat.dir / "run" / ".pool" / (rec["container_id"] + ".claim")).exists())
        self.assertEqual(holder.wait(60), 0)

    def test_a_launch_refused_before_its_session_claims_no_member(self):
        self.fill()
        made = set(members(self.seat))
        proc, rec = self.seat.status("--id", "bad-log", "--capture-log", str(self.seat.dir / "no" / "such" / "log"),
                                     "--", "true")
        self.assertNotEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual((rec["outcome"], rec.get("container_id")), ("launcher_error", None))
        self.assertEqual(set(members(self.seat)), made)  # both still there
        pool = self.seat.dir / "run" / ".pool"
        self.assertEqual([p.name for p in pool.glob("*.claim")] if pool.exists() else [], [])  # and unclaimed
        self.assertFalse((self.seat.dir / "run" / "bad-log").exists())

    def test_gc_leaves_a_member_a_live_session_claimed_though_its_keeper_died(self):
        self.fill()
        cid, m = next(iter(members(self.seat).items()))
        # a claim naming this (live) process, written as a claiming launcher writes it
        (self.seat.dir / "run" / ".pool" / (cid + ".claim")).write_text(f"{os.getpid()} {int(time.time())} 0 s-live\n")
        kill_dead(int(m["Labels"]["agent-sandbox.launcher-pid"]))
        proc = self.seat.run("gc")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(cid, members(self.seat))
        (self.seat.dir / "run" / ".pool" / (cid + ".claim")).unlink()  # CONTROL: unclaimed, the keeper gone
        proc = self.seat.run("gc")
        self.assertNotIn(cid, members(self.seat))
