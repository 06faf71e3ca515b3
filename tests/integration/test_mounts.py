"""Mounts: only this session's workspace (checked with realpath), git that works in a linked worktree."""
import os
import pathlib
import subprocess
import threading
import time
import unittest

from harness import LAUNCHER, RANGE_USERNS, TEST_POOL, SeatTest, podman, session_containers, session_entries

AGENT_UID = 1000  # a root caller's agent runs as 1000:1000 inside; it must own what it writes


def chown_tree(path, uid=AGENT_UID):
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.lchown(name, uid, uid)


def git(*args, cwd):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@x", GIT_CONFIG_NOSYSTEM="1", HOME=str(cwd))
    return subprocess.run(["git", "-c", "safe.directory=*", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


class WorkspaceEscapes(SeatTest):
    """Each escape is refused with workspace_rejected, its exact message, and nothing created."""

    def corpus(self):
        root = self.seat.workspaces
        (root / "ws1").mkdir()
        (root / "real").mkdir()
        (root / "real" / "inner").mkdir()
        (root / "file").write_text("x")
        outside = self.seat.dir / "outside"
        outside.mkdir()
        (root / "to-root").symlink_to("/")
        (root / "linked-parent").symlink_to(root / "real")
        (root / "to-ws1").symlink_to(root / "ws1")
        r = str(root)
        canon = "symlinks and '..' are refused"
        return [
            ("symlink to /", f"{r}/to-root", f"is not canonical (it resolves to '/'): {canon}"),
            ("symlinked parent", f"{r}/linked-parent/inner",
             f"is not canonical (it resolves to '{r}/real/inner'): {canon}"),
            ("dot-dot", f"{r}/real/../ws1", f"is not canonical (it resolves to '{r}/ws1'): {canon}"),
            ("outside the root", str(outside), f"resolves to '{outside}', outside the permitted root '{r}'"),
            ("the root itself", r, f"resolves to '{r}', outside the permitted root '{r}'"),
            ("symlink to another workspace", f"{r}/to-ws1", f"is not canonical (it resolves to '{r}/ws1'): {canon}"),
            ("non-existent", f"{r}/nope", "does not resolve: No such file or directory"),
            ("regular file", f"{r}/file", "is not a directory"),
        ]

    def test_escape_corpus(self):
        # With a credential to stage, an accepted workspace would get a session dir under run/:
        # none may appear, because the refusal comes before anything is made.
        credential = self.seat.dir / "auth.json"
        credential.write_text("{}")
        for i, (case, path, why) in enumerate(self.corpus()):
            with self.subTest(case=case):
                sid = f"credmounts-esc{i}"
                proc, record = self.seat.status("--id", sid, "--runtime", "codex", "--credential", str(credential),
                                                "--workspace", path, "--", "true")
                self.assertLauncherError(proc, record, "workspace_rejected", f"workspace '{path}' {why}")
                self.assertNoContainer(sid)
                run = self.seat.dir / "run"
                if TEST_POOL:  # the seat's warm members live there
                    self.assertEqual(session_entries(run), [])
                else:
                    self.assertFalse(run.exists())


class OnlyThisWorkspace(SeatTest):
    def test_workspace_is_mounted_alone_and_is_the_working_dir(self):
        for name in ("mine", "other"):
            (self.seat.workspaces / name).mkdir()
        chown_tree(self.seat.workspaces / "mine")
        proc = self.seat.run("--workspace", str(self.seat.workspaces / "mine"), "--", "bash", "-c",
                             "pwd; ls /sandbox/workspaces; touch f && echo writable")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b"/sandbox/workspaces/mine\nmine\nwritable\n")
        self.assertTrue((self.seat.workspaces / "mine" / "f").exists())


class LinkedWorktree(SeatTest):
    def setUp(self):
        super().setUp()
        self.common_root = self.seat.dir / "git-common"
        self.main = self.common_root / "main"
        self.main.mkdir(parents=True)
        self.seat.write(self.seat.config_file.read_text() + f'git_roots = ["{self.common_root}"]\n')
        git("init", "-q", "-b", "main", cwd=self.main)
        (self.main / "README").write_text("hello\n")
        git("add", "README", cwd=self.main)
        git("commit", "-qm", "first", cwd=self.main)
        self.ws = self.seat.workspaces / "wt1"
        git("worktree", "add", "-q", "-b", "task", str(self.ws), cwd=self.main)
        chown_tree(self.seat.dir)
        os.chown(self.seat.dir, 0, 0)

    def mirror(self):
        return ["--git-mirror", str(self.main / ".git")]

    def test_git_commit_inside_is_visible_on_the_host(self):
        inside = ("git -c user.name=agent -c user.email=agent@sandbox commit -q --allow-empty -m from-inside && "
                  "git log --format=%s -1 && pwd")
        proc = self.seat.run("--workspace", str(self.ws), *self.mirror(), "--", "bash", "-c", inside)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, b"from-inside\n/sandbox/workspaces/wt1\n")
        self.assertEqual(git("log", "--format=%s", "-1", "task", cwd=self.main), "from-inside\n")

    @unittest.skipIf(RANGE_USERNS, "a user namespace's body names each bind's idmapped staging (test_userns_range)")
    def test_dry_run_mounts_the_mirror_read_only_and_what_commits_write_read_write(self):
        import json
        proc = self.seat.run("--dry-run", "--workspace", str(self.ws), *self.mirror(), "--", "true")
        mounts = json.loads(proc.stdout)["create_body"]["mounts"]
        common = str(self.main / ".git")
        gitdir = common + "/worktrees/wt1"
        # The mirror's root is a tmpfs at its own path (docs/MOUNTS.md); what git obeys read-only in it.
        self.assertIn({"type": "tmpfs", "source": "tmpfs", "destination": common,
                       "options": ["rw", "size=256m", "nosuid", "nodev", "noexec", "mode=0755", "U", "notmpcopyup"]},
                      mounts)
        binds = [(m["source"], m["options"]) for m in mounts if m["source"] == m["destination"]]
        ro, rw = ["rbind", "ro"], ["rbind", "rw"]
        self.assertEqual(binds, [(common + "/config", ro), (common + "/description", ro), (common + "/HEAD", ro),
                                 (common + "/hooks", ro), (common + "/info", ro), (common + "/branches", ro),
                                 (common + "/worktrees", ro), (common + "/objects", rw), (common + "/refs", rw),
                                 (common + "/logs", rw), (common + "/objects/info", ro), (gitdir, rw),
                                 (gitdir + "/commondir", ro), (gitdir + "/gitdir", ro)])
        link = [m for m in mounts if m["source"] == str(self.ws / ".git")]
        self.assertEqual(link, [{"type": "bind", "source": str(self.ws / ".git"),
                                 "destination": "/sandbox/workspaces/wt1/.git", "options": ro}])

    def test_a_linked_worktree_without_a_named_mirror_is_refused(self):
        proc, record = self.seat.status("--id", "credmounts-git-unnamed", "--workspace", str(self.ws), "--", "true")
        self.assertLauncherError(proc, record, "git_unmountable",
                                 f"workspace '{self.ws}': it is a linked worktree: name its mirror (the common dir) "
                                 "with --git-mirror PATH; the '.git' file is written by the agent and is not trusted "
                                 "alone")
        self.assertNoContainer("credmounts-git-unnamed")

    def test_a_mirror_outside_the_permitted_roots_is_refused(self):
        stray = self.seat.dir / "stray"
        stray.mkdir()
        git("init", "-q", "-b", "main", cwd=stray)
        git("commit", "-q", "--allow-empty", "-m", "x", cwd=stray)
        ws2 = self.seat.workspaces / "wt2"
        git("worktree", "add", "-q", str(ws2), cwd=stray)
        proc, record = self.seat.status("--id", "credmounts-git-out", "--workspace", str(ws2),
                                        "--git-mirror", str(stray / ".git"), "--", "true")
        self.assertLauncherError(proc, record, "git_unmountable",
                                 f"workspace '{ws2}': --git-mirror '{stray / '.git'}' lies outside the permitted git "
                                 f"roots ({self.common_root})")
        self.assertNoContainer("credmounts-git-out")

    def test_gitdir_that_does_not_resolve_is_refused(self):
        (self.ws / ".git").write_text("gitdir: /nonexistent/worktrees/wt1\n")
        proc, record = self.seat.status("--id", "credmounts-git-gone", "--workspace", str(self.ws), *self.mirror(),
                                        "--", "true")
        self.assertLauncherError(proc, record, "git_unmountable",
                                 f"workspace '{self.ws}': '.git' names gitdir '/nonexistent/worktrees/wt1', which is "
                                 f"not a worktree of the mirror '{self.main / '.git'}'")
        self.assertNoContainer("credmounts-git-gone")


class DevShmIsTheContainers(SeatTest):
    """/dev/shm is a tmpfs in the container's own mount namespace, not podman's mount on the seat
    (ipc none): an agent's millions of files in podman's stalled every launch on the service for
    ~24 s after its session, while podman's cleanup tore it down (docs/THREATS.md, stop 56)."""

    def test_no_shm_mount_of_the_container_on_the_seat_and_posix_shm_works(self):
        script = ('grep " /dev/shm " /proc/self/mountinfo; python3 -c "from multiprocessing import shared_memory as s; '
                  'm = s.SharedMemory(create=True, size=4096); m.buf[0] = 7; o = s.SharedMemory(m.name); '
                  'print(o.buf[0]); o.close(); m.close(); m.unlink()"; echo ready; read x; true')
        proc = subprocess.Popen([str(LAUNCHER), "--id", "devshm", "--", "sh", "-c", script], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.seat.env())
        watchdog = threading.Timer(120, proc.kill)  # a line that never comes ends the test, not the run
        watchdog.start()
        self.addCleanup(watchdog.cancel)
        self.addCleanup(proc.communicate, timeout=120)  # a failed check: the agent's stdin closed, the session ends
        lines = [proc.stdout.readline().decode() for _ in range(3)]
        self.assertEqual(lines[2], "ready\n", proc.stderr.read1().decode() if lines[2] == "" else lines)
        self.assertRegex(lines[0], r" /dev/shm rw,nosuid,nodev,noexec,\S* - tmpfs tmpfs rw,size=65536k")
        self.assertEqual(lines[1], "7\n")
        until = time.monotonic() + 10  # warm: the member is renamed beside the agent
        while not (names := session_containers("devshm", settle=0)) and time.monotonic() < until:
            time.sleep(0.1)
        cid = podman("inspect", "--format", "{{.Id}}", names[0]).stdout.strip()
        on_seat = [l for l in pathlib.Path("/proc/self/mountinfo").read_text().splitlines() if cid in l and "/shm" in l]
        self.assertEqual(on_seat, [])
        _, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err.decode())
