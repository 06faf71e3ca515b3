"""A plain clone on the warm path (docs/DECISIONS.md "Issue 37: the warm pool"): the claim makes its
gitdir — the tmpfs and what is bound into it — beneath the member's workspaces dir on the seat
(launcher/pool/warm_tree.h), each mount complete before it is attached.
  - a session in a plain clone goes warm, commits, and the commit lands in the owner's repository as
    after a cold session (HEAD copied back, the branch moved);
  - what the agent sees mounted under its workspace is a cold session's: the same places, types,
    per-mount flags (read-only where git obeys), the tmpfs's size and mode; the gitdir is the
    agent's; what git obeys cannot be written; nothing stays mounted on the seat afterwards;
  - a linked worktree goes warm too when its mirror is under one of the seat's git roots (the
    member holds a mount point there: a small shared seat tmpfs, read-only, rslave): its commit
    lands in the mirror, its mounts under the workspace and the root are a cold session's; under
    no root a member holds (a root of "/"), it goes cold and says why.
"""
import json
import os
import pathlib
import subprocess

from harness import session_containers
from test_warm_path import AGENT_UID, WarmSeat, members

COMMIT = ("export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@a GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@a; "
          "echo two >> a.txt && git commit -qam second && git log --format=%s | tr '\\n' ' '; echo; "
          "(echo x >> .git/config) 2>/dev/null && echo config-written || echo config-refused; "
          "(touch .git/hooks/post-checkout) 2>/dev/null && echo hook-written || echo hook-refused; "
          "stat -c '%u %a' .git")
COMMIT_LINKED = (COMMIT.split("(echo x")[0] + "c=$(git rev-parse --git-common-dir); "
                 "(echo x >> $c/config) 2>/dev/null && echo config-written || echo config-refused; "
                 "(touch $c/hooks/post-checkout) 2>/dev/null && echo hook-written || echo hook-refused; "
                 "(echo x > .git) 2>/dev/null && echo link-written || echo link-refused")
MOUNTS = "grep ' /sandbox/workspaces/' /proc/self/mountinfo"


def git(*args, cwd):
    return subprocess.run(["git", "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          cwd=cwd, capture_output=True, text=True, check=True).stdout


def mount_rows(text):
    """Each mount under /sandbox/workspaces as (place, per-mount options, type, fs options): podman's
    peer-group fields, the source's name and a tmpfs's owner (its range's host ids: each session has
    its own) left out."""
    rows = []
    for line in text.decode().splitlines():
        f = line.split()
        dash = f.index("-")
        fs_opts = ",".join(o for o in f[dash + 3].split(",") if not o.startswith(("uid=", "gid=")))
        rows.append((f[4], f[5], f[dash + 1], fs_opts))
    return sorted(rows)


class PlainCloneWarm(WarmSeat):
    def repo(self, name):
        ws = self.workspace(name)
        git("init", "-q", "-b", "main", cwd=ws)
        (ws / "a.txt").write_text("one\n")
        git("add", "a.txt", cwd=ws)
        git("commit", "-qm", "first", cwd=ws)
        subprocess.run(["chown", "-R", f"{AGENT_UID}:{AGENT_UID}", str(ws)], check=True)
        return ws

    def test_a_plain_clone_goes_warm_and_its_commit_lands_as_after_a_cold_session(self):
        self.fill()
        ws = self.repo("clone")
        proc, rec = self.seat.status("--id", "warm-git", "--workspace", str(ws), "--", "sh", "-c", COMMIT)
        self.assertEqual((proc.returncode, rec["path"], rec["path_reason"]), (0, "warm", None), proc.stderr)
        self.assertEqual(proc.stdout.decode().splitlines(),
                         ["second first ", "config-refused", "hook-refused", f"{AGENT_UID} 755"])
        self.assertEqual(git("log", "--format=%s", cwd=ws).split(), ["second", "first"])  # HEAD's branch moved
        self.assertEqual((ws / "a.txt").read_text(), "one\ntwo\n")
        self.assertEqual(session_containers("warm-git"), [])
        self.assertNotIn(str(ws), pathlib.Path("/proc/self/mountinfo").read_text())
        self.assertNotIn(rec["container_id"], members(self.seat))

    def test_the_mounts_under_the_workspace_are_a_cold_sessions(self):
        self.fill()
        ws = self.repo("same")
        warm, rec = self.seat.status("--id", "git-mounts", "--workspace", str(ws), "--", "sh", "-c", MOUNTS)
        self.assertEqual((warm.returncode, rec["path"]), (0, "warm"), warm.stderr)
        self.seat.config_file.write_text(self.base)  # the pool off
        cold, rec = self.seat.status("--id", "git-mounts", "--workspace", str(ws), "--", "sh", "-c", MOUNTS)
        self.assertEqual((cold.returncode, rec["path"]), (0, "cold"), cold.stderr)
        rows = mount_rows(cold.stdout)
        self.assertIn("/sandbox/workspaces/same/.git/config", [r[0] for r in rows])
        self.assertEqual(mount_rows(warm.stdout), rows)

    def linked(self, roots=None):
        """A mirror under the seat's git root (or ROOTS), its linked worktree `wt` the workspace."""
        root = self.seat.dir / "git-common"
        root.mkdir()
        roots = roots or [str(root)]
        self.seat.config_file.write_text(self.seat.config_file.read_text() + f"git_roots = {json.dumps(roots)}\n")
        origin = self.seat.dir / "origin"
        origin.mkdir()
        git("init", "-q", "-b", "main", cwd=origin)
        (origin / "a.txt").write_text("one\n")
        git("add", "a.txt", cwd=origin)
        git("commit", "-qm", "first", cwd=origin)
        mirror = root / "mirror"
        git("clone", "-q", str(origin), str(mirror), cwd=self.seat.dir)
        ws = self.seat.workspaces / "wt"
        git("worktree", "add", "-q", "-b", "wt", str(ws), cwd=mirror)
        subprocess.run(["chown", "-R", f"{AGENT_UID}:{AGENT_UID}", str(root), str(ws)], check=True)
        return root, ws, mirror

    def test_a_linked_worktree_goes_warm_and_its_commit_lands_in_the_mirror(self):
        root, ws, mirror = self.linked()
        self.fill()
        proc, rec = self.seat.status("--id", "warm-wt", "--workspace", str(ws), "--git-mirror", str(mirror / ".git"),
                                     "--", "sh", "-c", COMMIT_LINKED)
        self.assertEqual((proc.returncode, rec["path"], rec["path_reason"]), (0, "warm", None), proc.stderr)
        self.assertEqual(proc.stdout.decode().splitlines(),
                         ["second first ", "config-refused", "hook-refused", "link-refused"])
        self.assertEqual(git("log", "--format=%s", "wt", cwd=mirror).split(), ["second", "first"])
        self.assertNotIn(str(root), pathlib.Path("/proc/self/mountinfo").read_text())
        self.assertEqual(session_containers("warm-wt"), [])

    def test_a_linked_worktrees_mounts_are_a_cold_sessions(self):
        root, ws, mirror = self.linked()
        self.fill()
        probe = f"grep -e ' /sandbox/workspaces/' -e ' {root}/' /proc/self/mountinfo"
        args = ("--id", "wt-mounts", "--workspace", str(ws), "--git-mirror", str(mirror / ".git"), "--", "sh", "-c", probe)
        warm, rec = self.seat.status(*args)
        self.assertEqual((warm.returncode, rec["path"]), (0, "warm"), warm.stderr)
        self.seat.config_file.write_text(self.seat.config_file.read_text().replace("pool_size = 2\n", ""))  # pool off
        cold, rec = self.seat.status(*args)
        self.assertEqual((cold.returncode, rec["path"]), (0, "cold"), cold.stderr)
        rows = mount_rows(cold.stdout)
        self.assertIn(f"{mirror}/.git/worktrees/wt", [r[0] for r in rows])
        self.assertEqual(mount_rows(warm.stdout), rows)

    def test_a_linked_worktree_under_no_root_a_member_holds_goes_cold_and_says_why(self):
        root, ws, mirror = self.linked(roots=["/", str(self.seat.dir / "git-common")])
        self.seat.config_file.write_text(self.seat.config_file.read_text().replace(
            f'git_roots = ["/", "{root}"]', 'git_roots = ["/"]'))  # "/" holds it; a member never holds "/"
        self.fill()
        proc, rec = self.seat.status("--id", "cold-wt", "--workspace", str(ws), "--git-mirror", str(mirror / ".git"),
                                     "--", "true")
        self.assertEqual((proc.returncode, rec["path"], rec["path_reason"]),
                         (0, "cold", "the pool cannot carry a linked worktree whose mirror is under none of the git "
                                     "roots a member holds yet"), proc.stderr)
        self.assertEqual(len(members(self.seat)), 2)  # neither was touched
