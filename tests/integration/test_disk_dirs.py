"""Directories as disk (docs/THREATS.md, "The disk"): a flood of long names grows a directory, and
ext4 keeps those blocks after the names are gone. A hostile pass grew the workspace's own root
(which the walk did not count) and directories removed while a process stood in them (which no
walk sees) far past the budget. Each with a control: the same growth under the budget runs to its
end, and is counted.
"""
import unittest

from test_disk import MiB, DiskSeatTest

# `n` hard links with 240-byte names to one file, then every name removed: the inode count never
# moves, the directory keeps ~16 names' worth per 4 KiB block (n = 25000: ~6 MiB).
GROW_ROOT = """python3 - <<'EOF'
import os
name = "n" * 240
os.close(os.open("seed", os.O_CREAT | os.O_WRONLY, 0o600))
for i in range({n}):
    os.link("seed", name + str(i))
for i in range({n}):
    os.unlink(name + str(i))
os.unlink("seed")
print("wrote", flush=True)
EOF"""
# The same in `rooms` directories, each removed once a process stands in it: only that process's
# cwd still leads to the blocks.
HELD_ROOMS = """python3 - <<'EOF'
import os, subprocess
name = "n" * 240
holders = []
for r in range({rooms}):
    room = "room%d" % r
    os.mkdir(room)
    os.close(os.open(room + "/seed", os.O_CREAT | os.O_WRONLY, 0o600))
    for i in range({n}):
        os.link(room + "/seed", room + "/" + name + str(i))
    for i in range({n}):
        os.unlink(room + "/" + name + str(i))
    os.unlink(room + "/seed")
    holders.append(subprocess.Popen(["sleep", "{hold}"], cwd=room))
    os.rmdir(room)
print("wrote", sorted(os.listdir(".")), flush=True)
for h in holders:
    h.wait()
EOF"""


class RootDir(DiskSeatTest):
    def test_a_name_flood_in_the_workspace_root_counts_though_every_name_is_gone(self):
        ws = self.workspace("r1")
        proc, rec = self.session("disk-rootdir", ws, GROW_ROOT.format(n=60000), "--disk", "10m")
        self.assertKilledDisk(proc, rec, "budget")
        self.assertGreaterEqual(rec["disk"]["peak_bytes"], 10 * MiB)

    def test_control_under_the_budget_it_runs_and_the_root_is_counted(self):
        ws = self.workspace("r2")
        proc, rec = self.session("disk-rootdir-ok", ws, GROW_ROOT.format(n=20000), "--disk", "10m")
        self.assertEqual((proc.returncode, proc.stdout, rec["disk"]["ended"]), (0, b"wrote\n", None), proc.stderr)
        self.assertGreaterEqual(rec["disk"]["added_bytes"], 4 * MiB)  # the names are gone, the blocks are not


class RemovedRooms(DiskSeatTest):
    def test_directories_removed_while_processes_stand_in_them_count(self):
        ws = self.workspace("h1")
        proc, rec = self.session("disk-rooms", ws, HELD_ROOMS.format(rooms=3, n=25000, hold=5), "--disk", "10m")
        self.assertKilledDisk(proc, rec, "budget")
        self.assertGreaterEqual(rec["disk"]["hidden_peak_bytes"], 5 * MiB)
        self.assertIn("of it held open without a name (deleted files or dirs, O_TMPFILE files)", rec["message"])

    def test_control_one_room_under_the_budget_runs_and_is_counted(self):
        ws = self.workspace("h2")
        proc, rec = self.session("disk-rooms-ok", ws, HELD_ROOMS.format(rooms=1, n=25000, hold=12), "--disk", "10m")
        self.assertEqual((proc.returncode, proc.stdout, rec["disk"]["ended"]), (0, b"wrote []\n", None), proc.stderr)
        self.assertGreaterEqual(rec["disk"]["hidden_peak_bytes"], 5 * MiB)  # seen by the periodic walk (10 s): nothing named held it


if __name__ == "__main__":
    unittest.main()
