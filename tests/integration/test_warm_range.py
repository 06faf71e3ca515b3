"""A warm member's user namespace range is its own for the member's life (docs/DECISIONS.md "Issue
37: the warm pool", "The range"), on a rootful seat's default user_namespace = "range":
  - its keeper holds the slot's lock from before the create; a cold session beside waiting members
    gets a range of its own, and a warm session runs in its member's;
  - a member whose keeper was SIGKILLed still holds its range by the process rule (its stub is a
    live process with ids in it), so the next session passes it over although the lock is free;
    once gc has removed that member, the range is handed out again (the CONTROL).
"""
import fcntl
import os

from harness import podman
from test_warm_path import WarmSeat, kill_dead, members

RANGE, SIZE = 0x70000000, 65536
LOCKS = "/run/agent-sandbox/userns"
UID_MAP = ("cat", "/proc/self/uid_map")


class MemberRanges(WarmSeat):
    def slot_of(self, proc):
        """The slot of the range a session's uid_map shows (container 0 → the range's first id)."""
        inside, outside, count = proc.stdout.decode().split()
        self.assertEqual((inside, count), ("0", str(SIZE)))
        return (int(outside) - RANGE) // SIZE

    def session(self, sid, path):
        proc, rec = self.seat.status("--id", sid, "--", *UID_MAP)
        self.assertEqual((proc.returncode, rec["path"]), (0, path), proc.stderr)
        return self.slot_of(proc), rec

    def member_slots(self):
        return {cid: int(m["Labels"]["agent-sandbox.pool-slot"]) for cid, m in members(self.seat).items()}

    def hold(self, slot):
        """The slot's lock taken here (its fd, closed at cleanup), or None when another holds it."""
        fd = os.open(f"{LOCKS}/{slot}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        self.addCleanup(os.close, fd)
        return fd

    def lock_is_free(self, slot):
        fd = self.hold(slot)
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
        return fd is not None

    def test_a_cold_session_beside_waiting_members_gets_a_range_of_its_own(self):
        self.fill()
        slots = self.member_slots()
        self.assertEqual(len(set(slots.values())), 2, slots)
        self.assertFalse(any(self.lock_is_free(s) for s in slots.values()))  # each keeper holds its own
        self.seat.config_file.write_text(self.base)  # the pool off: the members wait on, untouched
        cold, _ = self.session("cold-range", "cold")
        self.assertNotIn(cold, slots.values())
        self.seat.config_file.write_text("pool_size = 2\n" + self.base)
        warm, rec = self.session("warm-range", "warm")
        self.assertEqual(warm, slots[rec["container_id"]])  # the claiming plan is made on the member's slot

    def test_a_member_whose_keeper_died_keeps_its_range_until_gc_removes_it(self):
        self.fill()
        (cid, slot), *_ = sorted(self.member_slots().items(), key=lambda kv: kv[1])
        m = members(self.seat)[cid]
        kill_dead(int(m["Labels"]["agent-sandbox.launcher-pid"]))
        self.assertTrue(self.lock_is_free(slot))  # the keeper's lock went with it
        self.assertEqual(members(self.seat)[cid]["State"], "running")  # its stub did not
        self.seat.config_file.write_text(self.base)
        passed_over, _ = self.session("after-keeper", "cold")  # its gc, after the claim, removes the member
        self.assertNotEqual(passed_over, slot)
        self.assertEqual(podman("ps", "-aq", "--filter", "id=" + cid, check=False).stdout.strip(), "")
        for k in range(slot):  # a lower slot freed meanwhile (an earlier test's remover) held here: SLOT is the lowest free
            self.hold(k)
        again, _ = self.session("after-gc", "cold")  # CONTROL: free again
        self.assertEqual(again, slot)
