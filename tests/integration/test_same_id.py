"""A session reusing the id of one that has just ended (launcher/podman/namesake.h): its create
waits for that session's remover, bounded; any other holder of the name is refused at once."""
import fcntl
import os
import pathlib
import re
import shutil
import subprocess
import threading
import time

from harness import CODES, IMAGE, LAUNCHER, TEST_POOL, SeatTest, podman, session_containers
from test_cleanup_off_path import marker_of, pid_alive


def held(name, cid):
    """podman 4.3's refusal of a create whose name `cid` holds, as the launcher words it."""
    return (f'podman refused to create the container (500): creating container storage: the container name "{name}" '
            f"is already in use by {cid}. You have to remove that container to be able to reuse that name: that name "
            "is already in use")


class DeleteOf:
    """A relay's pattern: the DELETE of the container named `name` only (gc at launch may remove
    other tests' leftovers through the same relay; those are forwarded)."""
    ID = re.compile(rb"^DELETE /[^ ]*/containers/([0-9a-f]{64})\?")

    def __init__(self, name):
        self.name, self.names = name, {}

    def match(self, data):
        m = self.ID.match(data)
        if m and m.group(1) not in self.names:
            out = podman("inspect", "--format", "{{.Name}}", m.group(1).decode(), check=False).stdout.strip()
            self.names[m.group(1)] = out
        return bool(m) and self.names[m.group(1)] == self.name


def holding_relay(path, pattern):
    """A relay that holds each request matching `pattern` unanswered until `release` is set, then
    forwards it to podman: a remover whose DELETE it holds stays at work."""
    from test_warm_faults import AnsweringRelay  # that module imports test_cleanup_off_path

    class HoldingRelay(AnsweringRelay):
        def __init__(self):
            self.release, self.held = threading.Event(), 0
            super().__init__(path, (500, "unused"), pattern=pattern)

        def answers(self, data):
            if self.pattern.match(data):
                self.held += 1
                self.release.wait(120)
            return False

    return HoldingRelay()


class TheNameOfASessionJustEnded(SeatTest):
    """A session reusing the id of one that has just ended meets its container still named
    `asbx-<id>` while that session's remover works (launcher/podman/namesake.h): its create waits
    for a live remover, bounded, and is made again. A name held by anything else is refused at once.
    A relay answers the first remover's DELETEs 500, so it is still at work when the second session creates."""

    def relayed(self, name, times, hold=False):
        from test_warm_faults import AnsweringRelay  # that module imports test_cleanup_off_path
        path = self.seat.dir / "relay.sock"
        if hold:
            relay = holding_relay(path, DeleteOf(name))
            self.addCleanup(relay.release.set)
        else:
            relay = AnsweringRelay(path, (500, "busy (the test)"), pattern=DeleteOf(name), times=times)
        self.addCleanup(relay.close)
        text = "".join(l for l in self.seat.config_file.read_text().splitlines(True)
                       if not l.startswith(("socket = ", "pool_size = ", "pool_tty_size = ")))
        self.seat.config_file.write_text(f'pool_size = 0\nsocket = "{relay.path}"\n' + text)  # cold: the create
        return relay

    def test_the_next_session_of_that_id_waits_for_its_remover(self):
        relay = self.relayed("asbx-name-again", times=2)
        first, rec = self.seat.status("--id", "name-again", "--", "true")
        self.assertEqual((first.returncode, rec["container_removal"]), (0, "deferred"), first.stderr)
        second, rec2 = self.seat.status("--id", "name-again", "--", "sh", "-c", "exit 3")
        self.assertEqual((second.returncode, rec2["outcome"], relay.answered), (3, "exited", 2), second.stderr)
        self.assertNotEqual(rec2["container_id"], rec["container_id"])
        self.assertFalse(marker_of(self.seat.dir / "run", rec["container_id"]).exists())
        marker = marker_of(self.seat.dir / "run", rec2["container_id"])  # the second's remover, through the relay
        deadline = time.monotonic() + 30
        while marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(session_containers("name-again", settle=0), [])

    def test_a_remover_that_gives_up_is_named_and_nothing_is_created(self):
        relay = self.relayed("asbx-name-stuck", times=None)  # every DELETE: the remover's four tries fail, its marker stays
        first, rec = self.seat.status("--id", "name-stuck", "--", "true")
        self.assertEqual(first.returncode, 0, first.stderr)
        pid = int(marker_of(self.seat.dir / "run", rec["container_id"]).read_text().split()[0])
        second, rec2 = self.seat.status("--id", "name-stuck", "--", "true")
        self.assertLauncherError(second, rec2, "create_failed", held("asbx-name-stuck", rec["container_id"]) +
                                 f"; the remover of the session that held it (pid {pid}) ended without removing it; "
                                 "agent-sandbox gc will")
        self.assertEqual(podman("ps", "-aq", "--no-trunc", "--filter", "name=^asbx-name-stuck$").stdout.split(),
                         [rec["container_id"]])  # only the first
        relay.armed = False
        self.assertEqual(self.seat.run("gc").returncode, 0)
        self.assertEqual(session_containers("name-stuck", settle=0), [])

    def test_a_remover_still_at_work_after_the_wait_is_named_and_nothing_is_created(self):
        relay = self.relayed("asbx-name-slow", None, hold=True)  # its DELETE unanswered: it stays at work
        first, rec = self.seat.status("--id", "name-slow", "--", "true")
        self.assertEqual(first.returncode, 0, first.stderr)
        marker = marker_of(self.seat.dir / "run", rec["container_id"])
        pid = int(marker.read_text().split()[0])
        second, rec2 = self.seat.status("--id", "name-slow", "--", "true")
        self.assertLauncherError(second, rec2, "create_failed", held("asbx-name-slow", rec["container_id"]) +
                                 f"; the session that held it has ended and its remover (pid {pid}) was still at "
                                 "work after 10 s")
        self.assertEqual((relay.held, pid_alive(pid)), (1, True))
        self.assertEqual(podman("ps", "-aq", "--no-trunc", "--filter", "name=^asbx-name-slow$").stdout.split(),
                         [rec["container_id"]])  # only the first
        relay.release.set()  # the DELETE goes on to podman: the remover ends, nothing is left
        deadline = time.monotonic() + 30
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual((pid_alive(pid), marker.exists()), (False, False))
        self.assertEqual(session_containers("name-slow", settle=0), [])

    def test_a_name_held_by_a_container_nobody_removes_is_refused_at_once(self):
        self.relayed("asbx-name-held", times=0)
        cid = podman("create", "--name", "asbx-name-held", IMAGE, "true").stdout.strip()
        self.addCleanup(podman, "rm", "-f", cid, check=False)
        proc, rec = self.seat.status("--id", "name-held", "--", "true")
        self.assertLauncherError(proc, rec, "create_failed", held("asbx-name-held", cid))
        self.assertEqual(podman("ps", "-aq", "--no-trunc", "--filter", "name=^asbx-name-held$").stdout.split(), [cid])


class ASessionDirChangingHands(SeatTest):
    """A session dir is taken and removed under a lock on the dir (launcher/lifecycle/session_dir.h):
    gc never removes one a launcher is taking, and a launcher waits while gc removes one, then makes
    it again. The test holds the lock as either would."""

    def left_by_a_killed_launcher(self, sid):
        d = self.seat.dir / "run" / sid
        d.mkdir(parents=True)
        gone = subprocess.Popen(["true"])
        gone.wait()
        boot = pathlib.Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        (d / "owner").write_text(f"{gone.pid} {int(time.time())} {boot}\n")
        return d, gone.pid

    def locked(self, d):
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def test_gc_leaves_a_dir_while_a_launcher_holds_it(self):
        d, pid = self.left_by_a_killed_launcher("dir-held")
        fd = self.locked(d)
        try:
            gc = self.seat.run("gc")
            self.assertEqual((gc.returncode, gc.stdout), (0, b""), gc.stderr)
            self.assertTrue((d / "owner").exists())
        finally:
            os.close(fd)
        gc = self.seat.run("gc")
        self.assertEqual(gc.stdout.decode(), f"removed the session dir of dir-held: its launcher (pid {pid}) is gone "
                                             "and no container carries its session\n")
        self.assertFalse(d.exists())

    def test_a_launcher_waits_while_gc_removes_the_dir_and_makes_it_again(self):
        d, _ = self.left_by_a_killed_launcher("dir-taken")
        fd = self.locked(d)
        proc = subprocess.Popen([str(LAUNCHER), "--id", "dir-taken", "--", "sh", "-c", "exit 4"], env=self.seat.env(),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            time.sleep(1.0)
            self.assertIsNone(proc.poll())  # it waits for the lock: nothing of the session is made
            self.assertEqual(session_containers("dir-taken", settle=0), [])
            shutil.rmtree(d)  # what gc does, holding the lock
        finally:
            os.close(fd)
        _, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 4, err)
        self.assertEqual(session_containers("dir-taken"), [])
        self.assertFalse(d.exists())  # the dir it made again, left

    def test_an_owner_file_written_in_part_leaves_no_dir_behind(self):
        """A runtime dir with no room (a tmpfs of the test's own, full): the session's first owner file
        is made but not written; the launcher removes it and the dir on its way out, so nothing stays
        that gc would not recognise (hostile pass, stop 57: it stayed, and no gc ever took it)."""
        if TEST_POOL:
            self.skipTest("a full runtime dir has no room for members")
        run = self.seat.dir / "run"
        run.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(run)], check=True)
        self.addCleanup(subprocess.run, ["umount", "-l", str(run)])
        (run / "filler").write_bytes(b"\0" * 65536)
        proc, rec = self.seat.status("--id", "dir-full", "--", "true")
        self.assertIn(proc.returncode, (CODES["isolation_unavailable"], CODES["seccomp_unavailable"]), proc.stderr)
        self.assertIn("/dir-full/", rec["message"])
        self.assertTrue(rec["message"].endswith(": No space left on device; nothing was started"), rec["message"])
        self.assertEqual(sorted(p.name for p in run.iterdir()), ["filler"])
        self.assertNoContainer("dir-full")

    def test_a_link_in_place_of_a_session_dirs_tmpfs_is_never_followed(self):
        """A link where a session dir's tmpfs/ goes (only the runtime dir's own user can plant one:
        launcher/lifecycle/runtime_dir.h): taking the dir and gc remove the link and never unmount
        or remove what it leads to (second hostile pass, stop 57: a mount behind it was detached)."""
        victim = self.seat.dir / "victim"
        (victim / "m").mkdir(parents=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(victim / "m")], check=True)
        self.addCleanup(subprocess.run, ["umount", "-l", str(victim / "m")])
        (victim / "m" / "file").write_text("precious\n")
        (victim / "owner").write_text(f"{os.getpid()} 1 x\n")
        for sid, step in (("dir-link", lambda: self.seat.run("--id", "dir-link", "--", "true")),
                          ("dir-link-gc", lambda: self.seat.run("gc"))):
            d = self.seat.dir / "run" / sid
            d.mkdir(parents=True)
            (d / "owner").write_text("2147483 1 " + pathlib.Path("/proc/sys/kernel/random/boot_id").read_text())
            (d / "tmpfs").symlink_to(victim)
            proc = step()
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual((victim / "m" / "file").read_text(), "precious\n", sid)
            self.assertTrue(os.path.ismount(victim / "m"), sid)
            self.assertTrue((victim / "owner").exists(), sid)
            self.assertFalse(d.exists(), sid)

    def test_a_dir_locked_past_the_wait_is_refused_and_nothing_is_created(self):
        """The take's limit: a dir whose lock stays held 10 s (a launcher of the id or a gc stopped
        holding it) refuses the launch as a held id, warm or cold alike, and nothing is made."""
        d = self.seat.dir / "run" / "dir-stuck"
        d.mkdir(parents=True)
        fd = self.locked(d)
        try:
            t0 = time.monotonic()
            proc, rec = self.seat.status("--id", "dir-stuck", "--", "true")
            waited = time.monotonic() - t0
        finally:
            os.close(fd)
        self.assertLauncherError(proc, rec, "create_failed", f"--id dir-stuck: the session dir {d} stayed locked for 10 s "
                                 "(another launcher of that id, or gc, stopped while it held it); nothing was created")
        self.assertGreaterEqual(waited, 10)
        self.assertEqual(list(d.iterdir()), [])
        self.assertNoContainer("dir-stuck")
