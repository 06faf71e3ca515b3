"""The warm path's own failures, against the real service through a relay that answers one kind of
request itself (docs/DECISIONS.md "Issue 37: the warm pool"). Each fails closed: the session's
launcher error names the cause, the agent's command never ran, and nothing of the member stays.
  - podman refuses the update that gives the member the session's limits (a 500): limits_unenforced;
  - podman says the update was applied (a 204) but did not apply it: the cgroup's files are read
    back before start, and the session is refused with the figure the cgroup holds;
  - the keeper's listener cannot be taken as its ready file says (an fd it does not hold, or one that
    is not the member's socket): the member is removed and the session goes cold;
  - a fill's keeper cannot write its member's ready file: the member is removed, nothing stays;
  - no stub waits on the member's fifo when the claim writes its line: start_failed, nothing ran;
  - podman answers the removal of a claimed member whose session failed with a 500 once (its own
    cleanup racing it): the removal is tried again and the member goes;
  - SIGTERM reaches the launcher in the middle of its claim: the session ends 143 with its record,
    and the member it claimed goes with it (before, the launcher died and left it claimed, running).
"""
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import threading
import time

from harness import CODES, LAUNCHER, UnixRelay, podman, session_containers
from test_cleanup_off_path import pid_alive
from test_warm_path import WarmSeat, members

UPDATE = re.compile(rb"^POST /[^ ]*/containers/[0-9a-f]{64}/update ", re.M)
DELETE = re.compile(rb"^DELETE /[^ ]*/containers/[0-9a-f]{64}\?", re.M)
INIT = re.compile(rb"^POST /[^ ]*/containers/[0-9a-f]{64}/init ", re.M)
IMAGE_CHECK = re.compile(rb"^GET /[^ ]*/images/[^ ]*/json", re.M)


class AnsweringRelay(UnixRelay):
    """A unix-socket relay in front of the real service; a request matching UPDATE is answered
    with `reply` (status, body) by the relay itself and never reaches podman. The launcher waits for
    each answer before its next request, so the relay answers in order."""

    def __init__(self, path, reply, pattern=None, times=None):
        self.reply, self.answered, self.pattern, self.times, self.armed = reply, 0, pattern or UPDATE, times, True
        super().__init__(path)

    def answers(self, data):
        return self.armed and self.pattern.match(data) and (self.times is None or self.answered < self.times)

    def relay(self, conn):
        with conn, socket.socket(socket.AF_UNIX) as up:
            up.connect(self.upstream)
            threading.Thread(target=self.back, args=(up, conn), daemon=True).start()
            try:
                while data := conn.recv(65536):
                    if self.answers(data):
                        self.answer(conn, data)
                    else:
                        up.sendall(data)
                up.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def answer(self, conn, data):
        head, _, body = data.partition(b"\r\n\r\n")
        declared = re.search(rb"(?im)^content-length: *(\d+)", head)
        length = int(declared.group(1)) if declared else 0
        while len(body) < length:  # the update's body is swallowed, never forwarded
            body += conn.recv(65536)
        status, text = self.reply
        payload = json.dumps({"message": text}).encode() if text else b""
        conn.sendall(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                     % (status, len(payload), payload))
        self.answered += 1

    @staticmethod
    def back(src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass


class PausingRelay(UnixRelay):
    """Relays every request, and holds one matching `pattern` until `go` is set (`arrived` says it came)."""

    def __init__(self, path, pattern):
        self.pattern, self.arrived, self.go = pattern, threading.Event(), threading.Event()
        super().__init__(path)

    def relay(self, conn):
        with conn, socket.socket(socket.AF_UNIX) as up:
            up.connect(self.upstream)
            threading.Thread(target=AnsweringRelay.back, args=(up, conn), daemon=True).start()
            try:
                while data := conn.recv(65536):
                    if self.pattern.match(data):
                        self.arrived.set()
                        self.go.wait(30)
                    up.sendall(data)
                up.shutdown(socket.SHUT_WR)
            except OSError:
                pass


class UpdateFails(WarmSeat):
    def through(self, reply):
        relay = AnsweringRelay(self.seat.dir / "relay.sock", reply)
        self.addCleanup(relay.close)
        text = "".join(l for l in self.base.splitlines(True) if not l.startswith("socket = "))
        self.seat.config_file.write_text(f'pool_size = 2\nsocket = "{relay.path}"\n' + text)
        self.fill()
        made = set(members(self.seat))
        self.assertEqual(len(made), 2)
        self.member_memory = json.loads(podman("inspect", next(iter(made))).stdout)[0]["HostConfig"]["Memory"]
        marker = self.workspace("ws") / "ran"
        proc, rec = self.seat.status("--id", "warm-update", "--workspace", str(marker.parent), "--memory", "1g", "--",
                                     "touch", "ran")
        self.assertEqual(relay.answered, 1)
        self.assertEqual((rec["path"], rec["container_removed"]), ("warm", True))
        self.assertIn(rec["container_id"], made)
        self.assertNotIn(rec["container_id"], members(self.seat))  # the claimed member went
        self.assertFalse(marker.exists(), "the agent's command ran")
        self.assertEqual(session_containers("warm-update"), [])
        self.assertEqual(podman("ps", "-aq", "--filter", "id=" + rec["container_id"], check=False).stdout.strip(), "")
        return proc, rec

    def test_a_refused_update_fails_closed(self):
        proc, rec = self.through((500, "cgroup update refused by the test"))
        self.assertLauncherError(proc, rec, "limits_unenforced",
                                 "podman could not apply the session's limits to the warm member (500): "
                                 "cgroup update refused by the test; nothing was started")

    def test_an_update_podman_says_it_applied_but_did_not_is_caught_by_reading_the_cgroup_back(self):
        proc, rec = self.through((204, ""))
        self.assertLauncherError(proc, rec, "limits_unenforced",
                                 "the warm member's cgroup does not hold the session's limits after podman's update "
                                 f"(memory.limit_in_bytes is {self.member_memory}, not 1073741824); nothing was started")
        self.assertNotEqual(self.member_memory, 1073741824)  # the seat's, which the session's 1g is not


class RemovalRaces(WarmSeat):
    """A running member's removal can race podman's own cleanup and be answered 500 (it happened to
    two test_warm_path sessions in one run: the record said container_removed false, gc's to take)."""

    def test_a_removal_refused_once_is_tried_again_and_the_member_goes(self):
        relay = AnsweringRelay(self.seat.dir / "relay.sock", (500, "removing container: shm busy (the test)"),
                               pattern=DELETE, times=1)
        relay.armed = False  # the fill's own requests pass
        self.addCleanup(relay.close)
        text = "".join(l for l in self.base.splitlines(True) if not l.startswith("socket = "))
        self.seat.config_file.write_text(f'pool_size = 2\nsocket = "{relay.path}"\n' + text)
        self.fill()
        made = set(members(self.seat))
        relay.armed = True
        proc, rec = self.seat.status("--id", "warm-rm-race", "--", "/no/such/command")
        self.assertEqual(proc.returncode, CODES["command_not_found"], proc.stderr)
        self.assertEqual(relay.answered, 1)
        self.assertEqual((rec["path"], rec["container_removed"]), ("warm", True))
        self.assertIn(rec["container_id"], made)
        self.assertEqual([w for w in rec.get("warnings") or [] if "could not remove" in w], [])
        self.assertEqual(podman("ps", "-aq", "--filter", "id=" + rec["container_id"], check=False).stdout.strip(), "")


class ListenerNotTaken(WarmSeat):
    """The claim takes the keeper's seccomp listener by the fd its ready file names
    (launcher/pool/take.cc): `pidfd_getfd` fails for an fd the keeper does not hold, and an fd bound
    to another name is not the member's. Either way the member, claimed, is removed with its keeper
    and its dir, and the session goes cold; the agent's command runs once, cold."""

    def lying_ready_file(self, fd):
        self.drain()  # a seat the harness filled (ASBX_TEST_POOL) starts empty here
        self.seat.config_file.write_text("pool_size = 1\n" + self.base)
        self.fill()
        (cid, m), = members(self.seat).items()
        member_dir = self.seat.dir / "run" / m["Labels"]["agent-sandbox.session"]
        ready = json.loads((member_dir / "ready").read_text())
        ready["listener_fd"] = fd
        (member_dir / "ready").write_text(json.dumps(ready) + "\n")
        proc, rec = self.seat.status("--id", "lying-fd", "--", "echo", "ran")
        self.assertEqual((proc.returncode, proc.stdout, rec["path"], rec["path_reason"]),
                         (0, b"ran\n", "cold", "no ready member"), proc.stderr)
        self.assertEqual(podman("ps", "-aq", "--filter", "id=" + cid, check=False).stdout.strip(), "")
        until = time.monotonic() + 10
        while pid_alive(ready["keeper_pid"]) and time.monotonic() < until:
            time.sleep(0.05)
        self.assertFalse(pid_alive(ready["keeper_pid"]), "its keeper lives on")
        self.assertFalse(member_dir.exists())
        self.assertFalse((self.seat.dir / "run" / ".pool" / (cid + ".claim")).exists())
        self.assertEqual(session_containers("lying-fd"), [])

    def test_an_fd_the_keeper_does_not_hold(self):
        self.lying_ready_file(900)  # pidfd_getfd: EBADF

    def test_an_fd_that_is_not_the_members_socket(self):
        self.lying_ready_file(0)  # the keeper's /dev/null


class ReadyUnwritable(WarmSeat):
    def test_a_member_whose_ready_file_cannot_be_written_is_removed(self):
        """The keeper writes the member's ready file once it is initialised (launcher/pool/ready.h); a
        name already taken there (a dir planted while podman inits the member) makes that write fail.
        The fill says why, and the member's container, dir and mounts all go."""
        self.drain()  # a seat the harness filled (ASBX_TEST_POOL) starts empty here
        relay = PausingRelay(self.seat.dir / "relay.sock", INIT)
        self.addCleanup(relay.close)
        text = "".join(l for l in self.base.splitlines(True) if not l.startswith("socket = "))
        self.seat.config_file.write_text(f'pool_size = 1\nsocket = "{relay.path}"\n' + text)
        fill = subprocess.Popen([str(LAUNCHER), "pool", "fill"], env=self.seat.env(), stderr=subprocess.PIPE)
        self.addCleanup(lambda: fill.poll() is None and (fill.kill(), fill.wait()))
        self.assertTrue(relay.arrived.wait(30), "the fill never asked podman to init its member")
        member_dir, = (self.seat.dir / "run").glob("pool-*")
        (member_dir / ".ready").mkdir()
        relay.go.set()
        _, err = fill.communicate(timeout=60)
        self.assertEqual((fill.returncode, err.decode()),
                         (205, f"{LAUNCHER.name}: pool: warm pool: cannot write {member_dir}/.ready\n"))
        self.assertEqual(members(self.seat), {})
        self.assertFalse(member_dir.exists())
        self.assertNotIn(str(self.seat.dir), pathlib.Path("/proc/self/mountinfo").read_text())


class SignalInTheClaim(WarmSeat):
    def test_a_sigterm_while_the_claim_checks_the_image_ends_the_session_with_its_record(self):
        self.drain()  # a seat the harness filled (ASBX_TEST_POOL) starts empty here
        self.seat.config_file.write_text("pool_size = 1\n" + self.base)
        self.fill()
        (cid, _), = members(self.seat).items()
        relay = PausingRelay(self.seat.dir / "relay.sock", IMAGE_CHECK)  # the claim's last question to podman
        self.addCleanup(relay.close)
        text = "".join(l for l in self.base.splitlines(True) if not l.startswith("socket = "))
        self.seat.config_file.write_text(f'pool_size = 1\nsocket = "{relay.path}"\n' + text)
        status = self.seat.dir / "claim-term.json"
        p = subprocess.Popen([str(LAUNCHER), "--id", "claim-term", "--status-file", str(status), "--", "sleep", "120"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env=self.seat.env())
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        self.assertTrue(relay.arrived.wait(30), "the claim never asked for the image")
        # the image is asked on a thread beside the claim (take.cc): the claim file comes before or after
        claim, until = self.seat.dir / "run" / ".pool" / (cid + ".claim"), time.monotonic() + 10
        while not claim.exists():
            self.assertLess(time.monotonic(), until, "the member was never claimed")
            time.sleep(0.02)
        p.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        self.assertIsNone(p.poll(), "the launcher died of the signal, its member claimed")
        relay.go.set()
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 143, err)
        rec = json.loads(status.read_text())
        self.assertEqual((rec["path"], rec["container_id"], rec["outcome"], rec["cause"], rec["signal"]),
                         ("warm", cid, "killed", "signal", 15))
        self.assertEqual(session_containers("claim-term"), [])
        self.assertEqual(podman("ps", "-aq", "--filter", "id=" + cid, check=False).stdout.strip(), "")


class NoStubWaits(WarmSeat):
    def test_a_fifo_no_stub_reads_fails_the_session_before_anything_runs(self):
        """The claim's last step writes a line on the fifo the member's stub waits on (launcher/pool/
        warm_bind.cc), opened without blocking. A fifo nobody reads (here a new one put where the
        stub's was: the stub still waits on the old) fails the open with ENXIO: 206, the exact
        message, the agent's command never runs, and the member goes."""
        self.drain()  # a seat the harness filled (ASBX_TEST_POOL) starts empty here
        self.seat.config_file.write_text("pool_size = 1\n" + self.base)
        self.fill()
        (cid, m), = members(self.seat).items()
        fifo = self.seat.dir / "run" / m["Labels"]["agent-sandbox.session"] / "claim" / "go"
        st = fifo.lstat()
        fifo.unlink()
        os.mkfifo(fifo, 0o600)
        os.chown(fifo, st.st_uid, st.st_gid)
        marker = self.workspace("ws") / "ran"
        proc, rec = self.seat.status("--id", "no-stub", "--workspace", str(marker.parent), "--", "touch", "ran")
        self.assertLauncherError(proc, rec, "start_failed", f"warm pool: the member's stub does not wait on {fifo}: "
                                 "No such device or address; nothing was started")
        self.assertEqual((rec["path"], rec["container_id"], rec["container_removed"]), ("warm", cid, True))
        self.assertFalse(marker.exists(), "the agent's command ran")
        self.assertEqual(session_containers("no-stub"), [])
        self.assertEqual(podman("ps", "-aq", "--filter", "id=" + cid, check=False).stdout.strip(), "")
