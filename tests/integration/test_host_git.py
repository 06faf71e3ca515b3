"""What the agent leaves behind never acts on the host: its git, its files (docs/THREATS.md, "What the
agent leaves behind"; docs/MOUNTS.md).

Each trap is planted by a real session; then the host's plain git runs AS THE WORKSPACE'S OWNER (uid
1000, its own HOME, no safe.directory override) — or as root where the trap aims at a root
dispatcher — and must run nothing where the structure protects; `agent-sandbox git` must run nothing
anywhere. Each class has a control planting the same trap directly on the host, where it fires under
plain git: without the protection the test would fail. Session ids start with `hg-`."""
import json
import os
import pathlib
import shutil
import stat
import subprocess
import threading
import time

from harness import CODES, GVISOR, LOCAL_ROOTLESS_SEAT, SeatTest, readable_copies, session_containers, unavailable

OWNER = 1000     # the workspace's owner; a root caller's agent runs as it
NOBODY = 65534
ENV_BASE = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "GIT_TERMINAL_PROMPT": "0"}
AGENT = "export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@a GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@a\n"
VICTIM_TEXT = "a host file a root git must never write\n"


def chown_tree(path, uid=OWNER):
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.lchown(name, uid, uid)


def plain(*args, cwd, check=True):
    """git as root, for building fixtures (the harness's trust, not the host's later git)."""
    return subprocess.run(["git", "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          cwd=cwd, capture_output=True, text=True, check=check)


def attempts(plants):
    """A shell script that runs each plant and says whether it was written or refused."""
    return AGENT + "".join(f"({cmd}) >/dev/null 2>&1 && echo '{name} written' || echo '{name} refused'\n"
                           for name, cmd in plants)


class HostGit(SeatTest):
    def setUp(self):
        super().setUp()
        os.chmod(self.seat.dir, 0o755)  # the owner reaches its workspaces, as on a seat
        self.marks = self.seat.dir / "marks"
        self.marks.mkdir(mode=0o777)
        os.chmod(self.marks, 0o777)
        self.home = self.seat.dir / "owner-home"
        self.home.mkdir()
        (self.home / ".gitconfig").write_text("[user]\n\tname = owner\n\temail = owner@seat\n")
        chown_tree(self.home)
        self.victim = self.seat.dir / "victim"
        self.victim.write_text(VICTIM_TEXT)
        self.origin = self.seat.dir / "origin"
        self.origin.mkdir()
        plain("init", "-q", "-b", "main", cwd=self.origin)
        (self.origin / "a.txt").write_text("one\n")
        plain("add", "a.txt", cwd=self.origin)
        plain("commit", "-qm", "first", cwd=self.origin)

    # -- the traps' programs: each touches marks/NAME when a host process runs it ----------------
    def trap(self, name, filter=False):
        """A program that marks that a host process ran it (a filter also passes its input on)."""
        path = self.marks / ("run-" + name)
        path.write_text(f"#!/bin/sh\ntouch {self.marks / name}\n" + ("cat\n" if filter else ""))
        path.chmod(0o755)
        return path

    def fired(self):
        return sorted(p.name for p in self.marks.iterdir() if not p.name.startswith("run-"))

    def clear_marks(self):
        for p in self.marks.iterdir():
            if not p.name.startswith("run-"):
                p.unlink()

    # -- workspaces ---------------------------------------------------------------------------
    def clone(self, name):
        ws = self.seat.workspaces / name
        plain("clone", "-q", str(self.origin), str(ws), cwd=self.seat.dir)
        chown_tree(ws)
        return ws

    def session(self, session_id, ws, script, mirror=None, timeout=180):
        more = ["--git-mirror", str(mirror)] if mirror else []
        return self.seat.status("--id", session_id, "--workspace", str(ws), *more, "--", "bash", "-c", script,
                                timeout=timeout)

    def assertSessionExited(self, proc, record):
        self.assertEqual((proc.returncode, record["error_kind"]), (0, None), proc.stderr.decode(errors="replace"))
        self.assertEqual(session_containers(record["id"]), [])

    # -- the host's gits ------------------------------------------------------------------------
    def owner(self, *argv, cwd, input=None, extra=()):
        """A program run as the workspace's owner: its uid, its HOME, nothing of ours."""
        env = [f"{k}={v}" for k, v in {**ENV_BASE, "HOME": str(self.home)}.items()] + list(extra)
        return subprocess.run(["setpriv", "--reuid", str(OWNER), "--regid", str(OWNER), "--clear-groups", "env", "-i",
                               *env, *argv], cwd=cwd, input=input, capture_output=True, text=True, errors="replace",
                              timeout=60)

    def owner_git(self, *args, cwd, **kw):
        return self.owner("git", *args, cwd=cwd, **kw)

    def root_git(self, *args, cwd):
        env = {**ENV_BASE, "HOME": str(self.seat.dir)}
        return subprocess.run(["git", "-c", "safe.directory=*", "-c", "user.name=r", "-c", "user.email=r@r", *args],
                              cwd=cwd, env=env, capture_output=True, text=True, errors="replace", timeout=60)

    def safe_git(self, ws, *args, mirror=None, as_owner=True, cwd=None, input=None):
        """agent-sandbox git, as the owner (the dispatched case) or as root (a rootful dispatcher)."""
        launcher, _ = readable_copies()
        argv = [str(launcher), "git", "--workspace", str(ws), *(["--git-mirror", str(mirror)] if mirror else []),
                "--", *args]
        if as_owner:
            return self.owner(*argv, cwd=cwd or self.seat.dir, input=input,
                              extra=[f"XDG_CONFIG_HOME={self.seat.config_home}"])
        env = {**ENV_BASE, "HOME": str(self.seat.dir), "XDG_CONFIG_HOME": str(self.seat.config_home)}
        return subprocess.run(argv, cwd=cwd or self.seat.dir, env=env, input=input, capture_output=True, text=True,
                              errors="replace", timeout=60)

    def everyday_git(self, run, ws):
        """What a dispatcher and a person do after a session: status, diff, add, commit, log."""
        (ws / "a.txt").write_text("changed on the host\n")
        os.chown(ws / "a.txt", OWNER, OWNER)
        results = [run("status"), run("diff"), run("add", "-A"), run("commit", "-qm", "on the host"),
                   run("log", "-p", "-2"), run("diff", "HEAD~1")]
        return [(r.returncode, r.stderr) for r in results]


class PlainClone(HostGit):
    """Trap 1: a plain clone as the workspace (`--workspace REPO`, the buildbox harness). Its gitdir's
    root is a tmpfs inside; what git executes or obeys is bound read-only; nothing new reaches the host."""

    def plants(self):
        fs, hook, hp = (self.trap(n) for n in ("fsmonitor", "hook", "hooksPath"))
        flt = self.trap("filter", filter=True)
        return [
            ("fsmonitor", f"git config core.fsmonitor {fs}"),
            ("config-append", f"printf '[core]\\n\\tfsmonitor = {fs}\\n' >> .git/config"),
            ("hook", f"printf '#!/bin/sh\\nexec {hook}\\n' > .git/hooks/post-commit && chmod +x .git/hooks/post-commit"),
            ("hooksPath", f"mkdir -p .evil-hooks && printf '#!/bin/sh\\nexec {hp}\\n' > .evil-hooks/pre-commit && "
                          "chmod +x .evil-hooks/pre-commit && git config core.hooksPath .evil-hooks"),
            ("filter", f"git config filter.evil.clean {flt}"),
            ("info-attributes", "echo '* filter=evil' > .git/info/attributes"),
            ("attributes-committed", "echo '*.txt filter=evil diff=evil' > .gitattributes && git add .gitattributes && "
                                     "git commit -qm attrs"),
            # Last: with a commondir in the gitdir, git inside looks for the repository elsewhere.
            ("config.worktree", f"printf '[core]\\n\\tfsmonitor = {fs}\\n' > .git/config.worktree"),
            ("commondir", "echo /elsewhere > .git/commondir"),
        ]

    def test_nothing_planted_inside_runs_in_the_owners_git_and_the_root_files_stay_inside(self):
        ws = self.clone("pc")
        config = (ws / ".git" / "config").read_bytes()
        hooks = sorted(p.name for p in (ws / ".git" / "hooks").iterdir())
        proc, record = self.session("hg-plain-1", ws, attempts(self.plants()))
        self.assertSessionExited(proc, record)
        self.assertEqual(proc.stdout.decode().splitlines(),
                         ["fsmonitor refused", "config-append refused", "hook refused", "hooksPath refused",
                          "filter refused", "info-attributes refused", "attributes-committed written",
                          "config.worktree written", "commondir written"])
        self.assertEqual((ws / ".git" / "config").read_bytes(), config)
        self.assertEqual(sorted(p.name for p in (ws / ".git" / "hooks").iterdir()), hooks)
        self.assertFalse((ws / ".git" / "commondir").exists())
        self.assertFalse((ws / ".git" / "config.worktree").exists())
        self.assertEqual(record["git"]["shape"], "plain")
        self.assertEqual(record["git"]["copied_back"], ["index"])  # HEAD still names main, which moved
        # The commit made inside landed (objects and ref directly, the index copied back).
        self.assertEqual(plain("log", "-1", "--format=%s", cwd=ws).stdout, "attrs\n")
        self.assertEqual(plain("status", "--porcelain", cwd=ws).stdout, "?? .evil-hooks/\n")
        results = self.everyday_git(lambda *a: self.owner_git(*a, cwd=ws), ws)
        self.assertEqual([code for code, _ in results], [0] * 6, results)
        self.assertEqual(self.fired(), [], "the owner's plain git ran the agent's program")
        results = self.everyday_git(lambda *a: self.safe_git(ws, *a), ws)
        self.assertEqual([code for code, _ in results[:2]], [0, 0], results)
        self.assertEqual(self.fired(), [])

    def test_dot_git_replaced_by_a_directory_inside_never_reaches_the_host(self):
        ws = self.clone("pc-init")
        fs = self.trap("fsmonitor")
        script = AGENT + ("mv .git .git-old 2>/dev/null && echo moved || echo move-refused\n"
                          f"git init -q . 2>/dev/null; git config core.fsmonitor {fs} 2>/dev/null; "
                          "printf 'ref: refs/../../config\\n' > .git/HEAD; echo done\n")
        proc, record = self.session("hg-plain-init", ws, script)
        self.assertSessionExited(proc, record)
        self.assertEqual(proc.stdout.decode(), "move-refused\ndone\n")
        self.assertEqual((ws / ".git" / "HEAD").read_text(), "ref: refs/heads/main\n")
        why = "HEAD: it is neither 'ref: refs/heads/NAME' nor an object id; the host's is kept"
        self.assertEqual(record["git"]["not_copied_back"], [why])
        self.assertIn("agent-sandbox: warning: git: " + why + "\n", proc.stderr.decode())
        self.assertEqual(self.owner_git("status", cwd=ws).returncode, 0)
        self.assertEqual(self.fired(), [])

    def test_control_each_trap_planted_on_the_host_fires_under_plain_git(self):
        fs, hook, hp = (self.trap(n) for n in ("fsmonitor", "hook", "hooksPath"))
        flt = self.trap("filter", filter=True)
        cases = [
            ("fsmonitor", ["config", "core.fsmonitor", str(fs)], ["status"]),
            ("hook", None, ["commit", "-q", "--allow-empty", "-m", "x"]),
            ("hooksPath", ["config", "core.hooksPath", ".evil-hooks"], ["commit", "-q", "--allow-empty", "-m", "x"]),
            ("filter", ["config", "filter.evil.clean", str(flt)], ["add", "a.txt"]),
        ]
        for name, config, op in cases:
            with self.subTest(name):
                self.clear_marks()
                ws = self.clone("ctl-" + name)
                (ws / ".gitattributes").write_text("*.txt filter=evil\n")
                (ws / "a.txt").write_text("changed\n")
                (ws / ".git" / "hooks" / "post-commit").write_text(f"#!/bin/sh\nexec {hook}\n")
                (ws / ".git" / "hooks" / "post-commit").chmod(0o755)
                (ws / ".evil-hooks").mkdir()
                (ws / ".evil-hooks" / "pre-commit").write_text(f"#!/bin/sh\nexec {hp}\n")
                (ws / ".evil-hooks" / "pre-commit").chmod(0o755)
                chown_tree(ws)
                if config:
                    self.assertEqual(self.owner_git(*config, cwd=ws).returncode, 0)
                self.owner_git(*op, cwd=ws)
                self.assertIn(name, self.fired())
                # ...and agent-sandbox git on the same workspace runs none of it.
                self.clear_marks()
                self.safe_git(ws, *op)
                self.assertEqual(self.fired(), [])


class GitSeatMirror(HostGit):
    """A git root with a mirror; its linked worktree `wt` is the workspace."""

    def setUp(self):
        super().setUp()
        self.root = self.seat.dir / "git-common"
        self.seat.write(self.seat.config_file.read_text() + f'git_roots = ["{self.root}"]\n')
        self.repo = self.root / "mirror"
        plain("clone", "-q", str(self.origin), str(self.repo), cwd=self.seat.dir)
        self.common = self.repo / ".git"
        self.ws = self.worktree("wt")
        chown_tree(self.root)
        os.chmod(self.root, 0o755)

    def worktree(self, name):
        ws = self.seat.workspaces / name
        plain("worktree", "add", "-q", "-b", name, str(ws), cwd=self.repo)
        chown_tree(ws)
        chown_tree(self.root)
        return ws

    def gitdir(self, name="wt"):
        return self.common / "worktrees" / name


class LinkedWorktreeLink(GitSeatMirror):
    """Trap 2: the agent rewrites or replaces its linked worktree's `.git` link. It is bound read-only."""

    EVIL = ("git init -q --bare .evil && git config --file .evil/config core.bare false && "
            "git config --file .evil/config core.fsmonitor {fs}")

    def test_the_link_can_be_neither_rewritten_nor_replaced(self):
        fs = self.trap("fsmonitor")
        link = (self.ws / ".git").read_bytes()
        plants = [("evil-gitdir", self.EVIL.format(fs=fs)),
                  ("rewrite", "echo 'gitdir: .evil' > .git"),
                  ("remove", "rm -f .git"),
                  ("rename", "mv .git .git-old"),
                  ("replace", f"rm -rf .git && git init -q . && git config core.fsmonitor {fs}")]
        proc, record = self.session("hg-link-1", self.ws, attempts(plants), mirror=self.common)
        self.assertSessionExited(proc, record)
        self.assertEqual(proc.stdout.decode().splitlines(),
                         ["evil-gitdir written", "rewrite refused", "remove refused", "rename refused", "replace refused"])
        self.assertEqual((self.ws / ".git").read_bytes(), link)
        self.assertEqual(self.owner_git("status", cwd=self.ws).returncode, 0)
        self.assertEqual(self.fired(), [])
        # The bare `.evil` the agent left is reported (a git run inside it would obey it).
        self.assertIn({"path": str(self.ws / ".evil"), "kind": "bare_repository", "keys": ["core.fsmonitor"],
                       "detail": None}, record["git"]["findings"])
        self.assertEqual(self.safe_git(self.ws, "status", mirror=self.common).returncode, 0)
        self.assertEqual(self.fired(), [])

    def test_control_a_rewritten_or_replaced_link_is_obeyed_by_plain_git(self):
        fs = self.trap("fsmonitor")
        for how in ("rewrite", "replace"):
            with self.subTest(how):
                self.clear_marks()
                ws = self.worktree("ctl-" + how)
                if how == "rewrite":
                    self.assertEqual(self.owner("sh", "-c", self.EVIL.format(fs=fs) + " && echo 'gitdir: .evil' > .git",
                                                cwd=ws).returncode, 0)
                else:
                    self.assertEqual(self.owner("sh", "-c", f"rm .git && git init -q . && git config core.fsmonitor {fs}",
                                                cwd=ws).returncode, 0)
                self.owner_git("status", cwd=ws)
                self.assertEqual(self.fired(), ["fsmonitor"])


class EmbeddedRepository(HostGit):
    """Trap 3: an embedded repository committed as a gitlink, and a nested `.git` file pointing into the
    workspace. The structure cannot make these read-only: the record and stderr name them, plain git
    obeys them (the documented residual, and the control), agent-sandbox git does not."""

    def test_reported_and_the_safe_git_runs_nothing(self):
        ws = self.clone("emb")
        fs, fs2, flt = self.trap("sub-fsmonitor"), self.trap("sub2-fsmonitor"), self.trap("sub-filter", filter=True)
        script = AGENT + (
            "mkdir sub && cd sub && git init -q && "
            f"git config core.fsmonitor {fs} && git config filter.evil.clean {flt} && "
            "echo '* filter=evil' > .gitattributes && echo x > f && git add . && git commit -qm s && cd .. && "
            "mkdir sub2 && git -C sub2 init -q --separate-git-dir ../.sub2-git && "
            "echo 'gitdir: ../.sub2-git' > sub2/.git && "
            f"git -C sub2 config core.fsmonitor {fs2} && echo y > sub2/g && git -C sub2 add g && "
            "git -C sub2 commit -qm s2 && "
            "git add sub sub2 2>/dev/null && git commit -qm 'embedded repositories' && echo committed\n")
        proc, record = self.session("hg-embedded", ws, script)
        self.assertSessionExited(proc, record)
        self.assertEqual(proc.stdout, b"committed\n")
        findings = record["git"]["findings"]
        self.assertEqual(findings, [
            {"path": str(ws / ".sub2-git"), "kind": "bare_repository", "keys": ["core.fsmonitor"], "detail": None},
            {"path": str(ws / "sub"), "kind": "embedded_repository", "keys": ["core.fsmonitor", "filter.evil.clean"],
             "detail": None},
            {"path": str(ws / "sub"), "kind": "gitlink", "keys": [], "detail": "to the index"},
            {"path": str(ws / "sub2"), "kind": "gitdir_link", "keys": ["core.fsmonitor"], "detail": "../.sub2-git"},
            {"path": str(ws / "sub2"), "kind": "gitlink", "keys": [], "detail": "to the index"},
        ])
        stderr = proc.stderr.decode()
        self.assertIn(f"agent-sandbox: warning: git: '{ws}/sub' is a repository the agent made inside the workspace "
                      "(its config sets core.fsmonitor, filter.evil.clean): a plain git in the workspace enters it and "
                      f"obeys its config; run git there only as 'agent-sandbox git --workspace '{ws}' -- …', or remove "
                      f"'{ws}/sub/.git' after reading it\n", stderr)
        self.assertEqual(sum(line.startswith("agent-sandbox: warning: git: ") for line in stderr.splitlines()),
                         len(findings), stderr)
        print("\nthe record's git object of a session that left embedded repositories:\n" +
              json.dumps(record["git"], indent=2))
        results = self.everyday_git(lambda *a: self.safe_git(ws, *a), ws)
        self.assertEqual([code for code, _ in results], [0] * 6, results)
        self.assertEqual(self.fired(), [], "agent-sandbox git ran the agent's program")
        # The control: plain git, as the owner, enters `sub` and runs what its config names.
        self.owner_git("status", cwd=ws)
        self.assertIn("sub-fsmonitor", self.fired())
        self.assertIn("sub2-fsmonitor", self.fired())

    def test_a_repository_made_where_there_was_none_is_reported(self):
        ws = self.seat.workspaces / "bare-ws"
        ws.mkdir()
        chown_tree(ws)
        fs = self.trap("fsmonitor")
        proc, record = self.session("hg-created", ws, AGENT + f"git init -q . && git config core.fsmonitor {fs}")
        self.assertSessionExited(proc, record)
        self.assertEqual(record["git"]["shape"], "none")
        self.assertEqual(record["git"]["findings"], [{"path": str(ws), "kind": "repository_created",
                                                      "keys": ["core.fsmonitor"], "detail": None}])
        self.assertIn(f"agent-sandbox: warning: git: the workspace had no repository and the agent made '{ws}/.git' "
                      "(its config sets core.fsmonitor)", proc.stderr.decode())


class SymlinksWhereHostGitWrites(HostGit):
    """Trap 4: symlinks (and FIFOs, sockets) planted where the host's git writes: the root files stay in
    the tmpfs; the writable dirs are swept after the agent; a root git afterwards writes no host file."""

    def plant_script(self, gitdir, logs):
        v = self.victim
        return AGENT + (
            f"for f in COMMIT_EDITMSG FETCH_HEAD ORIG_HEAD; do ln -sf {v} {gitdir}/$f; done\n"
            f"rm -f {logs}/HEAD {logs}/refs/heads/main; ln -s {v} {logs}/HEAD; ln -s {v} {logs}/refs/heads/main\n"
            "mkfifo $(git rev-parse --git-common-dir)/refs/heads/fifo\n"
            "perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => $ARGV[0], Listen => 1) or die' "
            "$(git rev-parse --git-common-dir)/objects/sock\n"
            "ln -s / $(git rev-parse --git-common-dir)/objects/root-link\necho planted\n")

    def host_git_as_root(self, ws):
        self.assertEqual(self.root_git("commit", "-q", "--allow-empty", "-m", "root's commit", cwd=ws).returncode, 0)
        self.root_git("fetch", "-q", str(self.origin), cwd=ws)
        self.root_git("checkout", "-q", "-b", "other", cwd=ws)

    def test_plain_clone_nothing_is_written_through_a_link(self):
        ws = self.clone("sym")
        proc, record = self.session("hg-sym-plain", ws, self.plant_script(".git", ".git/logs"))
        self.assertSessionExited(proc, record)
        self.assertEqual(proc.stdout, b"planted\n")
        g = ws / ".git"
        # Under gVisor a FIFO or socket the agent makes lives in the sentry only: none reaches the seat.
        special = [] if GVISOR else [{"path": str(g / "objects" / "sock"), "kind": "socket"},
                                     {"path": str(g / "refs" / "heads" / "fifo"), "kind": "fifo"}]
        self.assertEqual(record["git"]["removed"], [
            {"path": str(g / "logs" / "HEAD"), "kind": "symlink"},
            {"path": str(g / "logs" / "refs" / "heads" / "main"), "kind": "symlink"},
            {"path": str(g / "objects" / "root-link"), "kind": "symlink"}] + special)
        self.assertIn("agent-sandbox: warning: git: removed %d symlink(s), FIFO(s), socket(s) or device(s)"
                      % (3 + len(special)), proc.stderr.decode())
        self.assertFalse(os.path.lexists(g / "refs" / "heads" / "fifo"))
        self.assertFalse(os.path.lexists(g / "objects" / "sock"))
        for f in ("COMMIT_EDITMSG", "FETCH_HEAD", "ORIG_HEAD"):
            self.assertFalse((g / f).is_symlink(), f)
        self.host_git_as_root(ws)
        self.assertEqual(self.victim.read_text(), VICTIM_TEXT)

    def test_linked_worktree_gitdir_and_mirror_logs_are_swept(self):
        mirror = SymlinkMirror(self)
        gd, logs = mirror.gitdir(), mirror.common / "logs"
        proc, record = self.session("hg-sym-linked", mirror.ws, self.plant_script(gd, logs), mirror=mirror.common)
        self.assertSessionExited(proc, record)
        removed = {(r["path"], r["kind"]) for r in record["git"]["removed"]}
        for f in ("COMMIT_EDITMSG", "FETCH_HEAD", "ORIG_HEAD"):
            self.assertIn((str(gd / f), "symlink"), removed)
        self.assertIn((str(logs / "HEAD"), "symlink"), removed)
        if not GVISOR:  # under gVisor the FIFO never reaches the seat
            self.assertIn((str(mirror.common / "refs" / "heads" / "fifo"), "fifo"), removed)
        self.assertFalse(os.path.lexists(mirror.common / "refs" / "heads" / "fifo"))
        self.host_git_as_root(mirror.ws)
        self.assertEqual(self.victim.read_text(), VICTIM_TEXT)

    def test_control_the_same_links_on_the_host_make_a_root_git_write_the_victim(self):
        ws = self.clone("sym-ctl")
        g = ws / ".git"
        for f in ("COMMIT_EDITMSG", "FETCH_HEAD"):
            (g / f).unlink(missing_ok=True)
            (g / f).symlink_to(self.victim)
        (g / "logs" / "HEAD").unlink()
        (g / "logs" / "HEAD").symlink_to(self.victim)
        self.host_git_as_root(ws)
        self.assertNotEqual(self.victim.read_text(), VICTIM_TEXT)


class SymlinkMirror:
    """A mirror and its worktree inside a HostGit test (the linked case of trap 4)."""

    def __init__(self, test):
        root = test.seat.dir / "git-common"
        test.seat.write(test.seat.config_file.read_text() + f'git_roots = ["{root}"]\n')
        repo = root / "mirror"
        plain("clone", "-q", str(test.origin), str(repo), cwd=test.seat.dir)
        self.common = repo / ".git"
        self.ws = test.seat.workspaces / "wt"
        plain("worktree", "add", "-q", "-b", "wt", str(self.ws), cwd=repo)
        chown_tree(root)
        chown_tree(self.ws)

    def gitdir(self):
        return self.common / "worktrees" / "wt"


class SetuidFiles(HostGit):
    """Trap 5: setuid and setgid files left in the workspace (and the git dirs) are stripped after the
    agent, each named; without that, any user who reaches the workspace runs as its owner."""

    def euid_as_nobody(self, path):
        out = subprocess.run(["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups", str(path),
                              "-u"], capture_output=True, text=True, timeout=30)
        return out.stdout.strip()

    def test_setuid_and_setgid_never_survive_the_session(self):
        ws = self.clone("suid")
        os.chmod(ws, 0o755)
        script = AGENT + ("cp /usr/bin/id x && chmod 4755 x && cp /usr/bin/id y && chmod 2755 y && "
                          "mkdir -p d/e && cp /usr/bin/id d/e/z && chmod 6755 d/e/z && "
                          "cp /usr/bin/id .git/objects/o && chmod 4755 .git/objects/o && "
                          "cp /usr/bin/id hidden && chmod 4000 hidden && stat -c '%a %n' x y d/e/z hidden\n")
        proc, record = self.session("hg-suid", ws, script)
        self.assertSessionExited(proc, record)
        self.assertEqual(proc.stdout.decode().split(), ["4755", "x", "2755", "y", "6755", "d/e/z", "4000", "hidden"])
        self.assertEqual(record["git"]["setid_stripped"], [
            {"path": str(ws / ".git" / "objects" / "o"), "mode": "4755", "now": "0755"},
            {"path": str(ws / "d" / "e" / "z"), "mode": "6755", "now": "0755"},
            {"path": str(ws / "hidden"), "mode": "4000", "now": "0000"},
            {"path": str(ws / "x"), "mode": "4755", "now": "0755"},
            {"path": str(ws / "y"), "mode": "2755", "now": "0755"}])
        for name in ("x", "y", "d/e/z", ".git/objects/o"):
            self.assertEqual(stat.S_IMODE(os.lstat(ws / name).st_mode) & 0o6000, 0, name)
        self.assertEqual(self.euid_as_nobody(ws / "x"), str(NOBODY))

    def test_control_a_setuid_copy_on_the_host_runs_as_the_owner(self):
        ws = self.clone("suid-ctl")
        os.chmod(ws, 0o755)
        shutil.copy("/usr/bin/id", ws / "x")
        os.chown(ws / "x", OWNER, OWNER)
        os.chmod(ws / "x", 0o4755)
        self.assertEqual(self.euid_as_nobody(ws / "x"), str(OWNER))

    def nobody_creates(self, directory):
        out = subprocess.run(["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups", "touch",
                              str(directory / "planted")], capture_output=True, timeout=30)
        return out.returncode == 0

    def test_setgid_and_world_writable_directories_never_survive_the_session(self):
        # A hostile pass's finding: the sweep cleared setuid/setgid on files only, so a directory the
        # agent opened to every seat user (the workspace itself included) stayed open after it.
        ws = self.clone("sgid-dirs")
        os.chmod(ws, 0o755)
        script = ("chmod 2777 . && mkdir d t && chmod 2777 d && chmod 1777 t && touch f && chmod 666 f && "
                  "stat -c '%a %n' . d t f\n")
        proc, record = self.session("hg-sgid-dirs", ws, script)
        self.assertSessionExited(proc, record)
        self.assertEqual(proc.stdout.decode().split(), ["2777", ".", "2777", "d", "3777", "t", "666", "f"])
        self.assertEqual(record["git"]["setid_stripped"], [
            {"path": str(ws), "mode": "2777", "now": "0775"},
            {"path": str(ws / "d"), "mode": "2777", "now": "0775"},
            {"path": str(ws / "f"), "mode": "0666", "now": "0664"},
            {"path": str(ws / "t"), "mode": "3777", "now": "1775"}])
        self.assertIn("agent-sandbox: warning: git: cleared setuid/setgid or world-write on 4 entr(ies) the agent left "
                      "(the record's git.setid_stripped names each)", proc.stderr.decode())
        for d in (ws, ws / "d", ws / "t"):
            self.assertFalse(self.nobody_creates(d), d)

    def test_control_a_world_writable_directory_on_the_host_takes_anyones_files(self):
        ws = self.clone("sgid-ctl")
        os.chmod(ws, 0o755)
        (ws / "d").mkdir()
        os.chmod(ws / "d", 0o2777)
        self.assertTrue(self.nobody_creates(ws / "d"))


class CommitsStillLand(GitSeatMirror):
    """Commits, branches, stash, rebase, merge and a fetch from a local path made inside land on the host."""

    WORK = AGENT + (
        "set -e\n"
        "echo b > b.txt && git add b.txt && git commit -qm two\n"
        "git branch feature && git checkout -q feature && echo c > c.txt && git add c.txt && git commit -qm three\n"
        "git checkout -q {base}\n"
        "echo wip > wip.txt && git add wip.txt && git stash -q && git stash list | wc -l\n"
        "echo d > d.txt && git add d.txt && git commit -qm four && git rebase -q feature\n"
        "git init -q /tmp/up && git -C /tmp/up commit -q --allow-empty -m upstream\n"
        "git fetch -q /tmp/up HEAD:refs/heads/fetched\n"
        "git branch scratch && git branch -q -D scratch\n"  # git locks packed-refs for a deletion
        "git merge -q -m merged fetched --allow-unrelated-histories\n"
        "git checkout -q -b last && echo done\n")

    def check(self, ws, base, record):
        self.assertEqual(self.owner_git("log", "--first-parent", "--format=%s", "-5", "last", cwd=ws).stdout.split("\n")[:5],
                         ["merged", "four", "three", "two", "first"])
        self.assertEqual(self.owner_git("symbolic-ref", "HEAD", cwd=ws).stdout, "refs/heads/last\n")
        self.assertEqual(self.owner_git("stash", "list", cwd=ws).stdout.count("\n"), 1)
        self.assertEqual(self.owner_git("status", "--porcelain", cwd=ws).stdout, "")
        self.assertEqual(self.owner_git("branch", "--list", "scratch", cwd=ws).stdout, "")
        self.assertEqual(self.owner_git("rev-parse", "--verify", "-q", "fetched", cwd=ws).returncode, 0)
        self.assertEqual(record["git"]["removed"], [])
        self.assertEqual(record["git"]["findings"], [])

    def test_in_a_plain_clone(self):
        ws = self.clone("land")
        proc, record = self.session("hg-land-plain", ws, self.WORK.format(base="main"))
        self.assertSessionExited(proc, record)
        self.assertEqual(proc.stdout, b"1\ndone\n")
        self.assertEqual(record["git"]["copied_back"][:2], ["HEAD", "index"])
        self.check(ws, "main", record)

    def test_in_a_linked_worktree(self):
        proc, record = self.session("hg-land-linked", self.ws, self.WORK.format(base="wt"),
                                    mirror=self.common)
        self.assertSessionExited(proc, record)
        self.assertEqual(proc.stdout, b"1\ndone\n")
        self.check(self.ws, "wt", record)


class ConcurrentSessions(GitSeatMirror):
    """A concurrent session cannot plant into another session's gitdir: another worktree's gitdir is
    read-only where it is visible at all, another workspace is not mounted, and what it can write in
    the shared logs/ is swept when it ends."""

    def test_one_session_cannot_plant_into_the_others(self):
        other = self.worktree("wt-b")
        plain_ws = self.clone("plain-a")
        a = self.gitdir("wt")
        started = threading.Event()
        results = {}

        def run_a():
            started.set()
            results["a"] = self.session("hg-conc-a", self.ws, AGENT + "sleep 8; echo a > a2.txt; git add a2.txt; "
                                        "git commit -qm from-a && echo committed", mirror=self.common)

        t = threading.Thread(target=run_a)
        t.start()
        started.wait()
        time.sleep(3)
        plants = [("head", f"echo 0000000000000000000000000000000000000000 > {a}/HEAD"),
                  ("editmsg", f"ln -s {self.victim} {a}/COMMIT_EDITMSG"),
                  ("index", f"cp /dev/null {a}/index"),
                  ("shared-log", f"ln -sf {self.victim} {self.common}/logs/refs/heads/wt"),
                  ("plain-gitdir", f"touch {plain_ws}/.git/x"),
                  ("other-workspace", f"ls {self.ws}")]
        proc_b, record_b = self.session("hg-conc-b", other, attempts(plants), mirror=self.common)
        t.join()
        proc_a, record_a = results["a"]
        self.assertSessionExited(proc_b, record_b)
        self.assertSessionExited(proc_a, record_a)
        self.assertEqual(proc_b.stdout.decode().splitlines(),
                         ["head refused", "editmsg refused", "index refused", "shared-log written",
                          "plain-gitdir refused", "other-workspace refused"])
        self.assertIn({"path": str(self.common / "logs" / "refs" / "heads" / "wt"), "kind": "symlink"},
                      record_b["git"]["removed"])
        self.assertEqual(proc_a.stdout, b"committed\n")
        self.assertEqual(plain("log", "-1", "--format=%s", "wt", cwd=self.repo).stdout, "from-a\n")
        links = [p for p in self.common.rglob("*") if p.is_symlink()]
        self.assertEqual(links, [])
        self.root_git("commit", "-q", "--allow-empty", "-m", "after", cwd=self.ws)
        self.assertEqual(self.victim.read_text(), VICTIM_TEXT)


class SafeGitConfiguration(HostGit):
    """Each override of agent-sandbox git against a real trap planted in the repository's own config (as
    a workspace from before the gitdir was made read-only would hold it): plain git, as the owner, runs
    the trap; agent-sandbox git, as the owner and as root, does not."""

    FILTERS = ("filter", "include-filter")
    # name: (config rows, git's arguments); {trap} is the trap's program, {hooks} a hooks dir running it.
    CASES = [
        ("fsmonitor", [("core.fsmonitor", "{trap}")], ["status"]),
        ("hook", [], ["commit", "-q", "--allow-empty", "-m", "h"]),
        ("hooksPath", [("core.hooksPath", "{hooks}")], ["commit", "-q", "--allow-empty", "-m", "h"]),
        ("filter", [("filter.evil.clean", "{trap}")], ["add", "a.txt"]),
        ("textconv", [("diff.evil.textconv", "{trap}")], ["diff"]),
        ("editor", [("core.editor", "{trap}")], ["commit", "--allow-empty"]),
        ("pager", [("core.pager", "{trap}"), ("pager.log", "{trap}")], ["--paginate", "log"]),
        ("sshCommand", [("core.sshCommand", "{trap}"), ("remote.up.url", "ssh://seat.invalid/x")], ["fetch", "up"]),
        ("ext", [("protocol.ext.allow", "always"), ("remote.ex.url", "ext::{trap}")], ["fetch", "ex"]),
        ("credential", [("credential.helper", "{trap}")], ["credential", "fill"]),
        ("gpg", [("commit.gpgSign", "true"), ("gpg.program", "{trap}")], ["commit", "-q", "--allow-empty", "-m", "g"]),
        ("include-filter", [("include.path", "../evil.cfg")], ["add", "x.inc"]),
        ("diff.external", [("diff.external", "{trap}")], ["diff"]),
        ("uploadpack", [("remote.near.url", "{origin}"), ("remote.near.uploadpack", "{trap}")], ["fetch", "near"]),
    ]

    def workspace(self, name, config):
        trap = self.trap(name, filter=name in self.FILTERS)
        hooks = self.seat.dir / ("hooks-" + name)
        hooks.mkdir()
        ws = self.clone("cfg-" + name)
        for d in (hooks, ws / ".git" / "hooks"):
            (d / "pre-commit").write_text(f"#!/bin/sh\nexec {trap}\n")
            (d / "pre-commit").chmod(0o755)
        if name != "hook":
            (ws / ".git" / "hooks" / "pre-commit").unlink()
        (ws / ".gitattributes").write_text("*.txt filter=evil diff=evil\n*.inc filter=inc\n")
        (ws / "x.inc").write_text("changed\n")
        (ws / "a.txt").write_text("changed\n")
        (ws / "evil.cfg").write_text(f'[filter "inc"]\n\tclean = {self.trap("include-filter", filter=True)}\n')
        chown_tree(ws)
        for key, value in config:
            value = value.format(trap=trap, hooks=hooks, origin=self.origin)
            self.assertEqual(self.owner_git("config", key, value, cwd=ws).returncode, 0)
        return ws

    def under_a_terminal(self, argv, ws, as_owner):
        """`script` gives git a terminal, so a pager would start."""
        cmd = " ".join(argv)
        if as_owner:
            return self.owner("script", "-qec", cmd, "/dev/null", cwd=ws, extra=[f"XDG_CONFIG_HOME={self.seat.config_home}"])
        env = {**ENV_BASE, "HOME": str(self.seat.dir), "XDG_CONFIG_HOME": str(self.seat.config_home)}
        return subprocess.run(["script", "-qec", cmd, "/dev/null"], cwd=ws, env=env, capture_output=True, text=True,
                              timeout=60)

    def run_git(self, ws, op, how):
        stdin = "protocol=https\nhost=seat.invalid\n\n" if op[0] == "credential" else None
        launcher, _ = readable_copies()
        if op[0] == "--paginate":
            prefix = ["git"] if how == "plain" else [str(launcher), "git", "--workspace", str(ws), "--"]
            return self.under_a_terminal(prefix + op, ws, how != "root")
        if how == "plain":
            return self.owner_git(*op, cwd=ws, input=stdin)
        return self.safe_git(ws, *op, as_owner=how == "owner", input=stdin)

    def test_plain_git_runs_each_trap_and_agent_sandbox_git_runs_none(self):
        table = []
        for name, config, op in self.CASES:
            with self.subTest(name):
                ws = self.workspace(name, config)
                ran = {}
                for how in ("plain", "owner", "root"):
                    self.clear_marks()
                    result = self.run_git(ws, op, how)
                    ran[how] = (self.fired(), result.returncode)
                table.append((name, ran))
                self.assertIn(name, ran["plain"][0], f"control: plain git did not run the {name} trap")
                self.assertEqual(ran["owner"][0], [], f"agent-sandbox git (as the owner) ran {name}")
                self.assertEqual(ran["root"][0], [], f"agent-sandbox git (as root) ran {name}")
        print("\n| trap | plain git (owner) ran | its exit | agent-sandbox git ran (owner / root) | its exit |\n" +
              "\n".join(f"| {n} | {', '.join(r['plain'][0])} | {r['plain'][1]} | "
                        f"{', '.join(r['owner'][0] + r['root'][0]) or 'nothing'} | {r['owner'][1]} |" for n, r in table))


class SafeGitContract(HostGit):
    """agent-sandbox git: the same validation as a session; its own failures are launcher codes; git's
    exit code passes through; GIT_DIR is the validated one, never discovered."""

    def test_failures_are_launcher_codes_and_gits_code_passes_through(self):
        ws = self.clone("contract")
        r = self.safe_git(ws, as_owner=False)
        self.assertEqual(r.returncode, CODES["usage"])
        self.assertEqual(r.stderr, "agent-sandbox: git: give git's arguments after '--', e.g. agent-sandbox git "
                                   "--workspace WS -- status\n")
        outside = self.seat.dir / "outside"
        plain("clone", "-q", str(self.origin), str(outside), cwd=self.seat.dir)
        r = self.safe_git(outside, "status", as_owner=False)
        self.assertEqual(r.returncode, CODES["workspace_rejected"])
        self.assertEqual(r.stderr, f"agent-sandbox: workspace '{outside}' resolves to '{outside}', outside the permitted "
                                   f"root '{self.seat.workspaces}'\n")
        empty = self.seat.workspaces / "empty"
        empty.mkdir()
        r = self.safe_git(empty, "status", as_owner=False)
        self.assertEqual(r.returncode, CODES["git_unmountable"])
        self.assertEqual(r.stderr, f"agent-sandbox: workspace '{empty}': it holds no repository (no '.git')\n")
        r = self.safe_git(ws, "rev-parse", "--verify", "no-such-ref", as_owner=False)
        self.assertEqual(r.returncode, 128)
        # Pinned: from a directory inside the workspace that holds a repository of its own, git still
        # works on the workspace's repository.
        inner = ws / "inner"
        inner.mkdir()
        plain("init", "-q", cwd=inner)
        self.assertEqual(self.safe_git(ws, "rev-parse", "--git-dir", cwd=inner, as_owner=False).stdout,
                         f"{ws}/.git\n")


class EveryEnding(HostGit):
    """The sweep, the strip and the report run on every ending after start, not only a clean exit."""

    PLANT = AGENT + ("ln -sf {victim} .git/logs/HEAD && cp /usr/bin/id s && chmod 4755 s && "
                     "mkdir sub && git -C sub init -q && echo planted && {then}\n")

    def assertSwept(self, ws, record):
        self.assertIn({"path": str(ws / ".git" / "logs" / "HEAD"), "kind": "symlink"}, record["git"]["removed"])
        self.assertEqual([s["path"] for s in record["git"]["setid_stripped"]], [str(ws / "s")])
        self.assertEqual([(f["path"], f["kind"]) for f in record["git"]["findings"]],
                         [(str(ws / "sub"), "embedded_repository")])
        self.assertIn("git", record["durations_ms"]["phases"])
        self.assertFalse((ws / ".git" / "logs" / "HEAD").is_symlink())
        self.assertEqual(stat.S_IMODE(os.lstat(ws / "s").st_mode), 0o755)

    def test_timeout(self):
        ws = self.clone("end-timeout")
        proc, record = self.seat.status("--id", "hg-end-timeout", "--workspace", str(ws), "--timeout", "5s", "--",
                                        "bash", "-c", self.PLANT.format(victim=self.victim, then="sleep 60"))
        self.assertEqual(record["error_kind"], "killed_timeout", proc.stderr)
        self.assertSwept(ws, record)

    def test_signal(self):
        ws = self.clone("end-signal")
        status = self.seat.dir / "signal.json"
        p = subprocess.Popen([str(self.launcher_path()), "--status-file", str(status), "--id", "hg-end-signal",
                              "--workspace", str(ws), "--", "bash", "-c",
                              self.PLANT.format(victim=self.victim, then="sleep 60")],
                             env=self.seat.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(p.stdout.readline(), b"planted\n")
        p.send_signal(15)
        p.communicate(timeout=60)
        record = json.loads(status.read_text())
        self.assertEqual((record["outcome"], record["cause"]), ("killed", "signal"))
        self.assertSwept(ws, record)

    def test_out_of_memory(self):
        ws = self.clone("end-oom")
        proc, record = self.seat.status("--id", "hg-end-oom", "--workspace", str(ws), "--memory", "64m", "--",
                                        "bash", "-c", self.PLANT.format(victim=self.victim,
                                                                        then="head -c 300m /dev/zero | tail > /dev/null"))
        self.assertTrue(record["counters"]["oom_killed"], record)
        self.assertSwept(ws, record)

    @staticmethod
    def launcher_path():
        from harness import LAUNCHER
        return LAUNCHER


class Rootless(HostGit):
    """The rootless seat: the agent is the seat user itself (keep-id), so everything it writes is that
    user's — the case the issue names. The same structure holds: a plain clone's config and hooks are
    read-only inside, the sweep and the strip run, commits land; the seat user's plain git runs nothing."""

    USER = "asbx-rootless"

    def setUp(self):
        super().setUp()
        import pwd
        try:
            self.uid = pwd.getpwnam(self.USER).pw_uid
        except KeyError:
            unavailable(self, "no rootless seat user " + self.USER)
        self.socket = f"/run/user/{self.uid}/podman/podman.sock"
        if not os.path.exists(self.socket):
            unavailable(self, "rootless seat not running (scripts/rootless-seat.sh start)")
        self.user_home = pwd.getpwnam(self.USER).pw_dir
        self.launcher, _ = readable_copies()
        self.seat.write(f'socket = "{self.socket}"\nimage = "localhost/agent-sandbox:latest"\n'
                        f'workspace_root = "{self.seat.workspaces}"\nruntime_dir = "{self.seat.dir}/run"\n'
                        "waive_unenforced_limits = true\n" + LOCAL_ROOTLESS_SEAT)

    def as_user(self, *argv, cwd):
        env = [f"HOME={self.user_home}", "PATH=/usr/bin:/bin", f"XDG_RUNTIME_DIR=/run/user/{self.uid}",
               f"XDG_CONFIG_HOME={self.seat.config_home}", f"XDG_STATE_HOME={self.seat.state_home}", "LANG=C.UTF-8",
               "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@u", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@u"]
        return subprocess.run(["runuser", "-u", self.USER, "--", "env", "-i", *env, *argv], cwd=cwd,
                              capture_output=True, text=True, timeout=180)

    def test_rootless_plain_clone(self):
        ws = self.clone("rl")
        for path in (self.seat.dir, *self.seat.dir.rglob("*")):
            os.lchown(path, self.uid, self.uid)
        fs = self.trap("fsmonitor")
        status = self.seat.dir / "rl.json"
        script = AGENT + (f"(git config core.fsmonitor {fs}) 2>/dev/null || echo config-refused; "
                          f"(echo x > .git/hooks/post-commit) 2>/dev/null || echo hook-refused; "
                          "echo b > b.txt && git add b.txt && git commit -qm inside && echo committed; "
                          f"ln -sf {self.victim} .git/logs/HEAD; cp /usr/bin/id s && chmod 4755 s")
        proc = self.as_user(str(self.launcher), "--status-file", str(status), "--id", "hg-rootless", "--workspace",
                            str(ws), "--", "bash", "-c", script, cwd="/")
        record = json.loads(status.read_text())
        self.assertEqual((proc.returncode, record["error_kind"]), (0, None), proc.stderr)
        self.assertEqual(proc.stdout, "config-refused\nhook-refused\ncommitted\n")
        self.assertEqual(record["mode"], "rootless")
        self.assertIn({"path": str(ws / ".git" / "logs" / "HEAD"), "kind": "symlink"}, record["git"]["removed"])
        self.assertEqual([s["path"] for s in record["git"]["setid_stripped"]], [str(ws / "s")])
        self.assertEqual(self.as_user("git", "log", "-1", "--format=%s", cwd=ws).stdout, "inside\n")
        self.assertEqual(self.as_user("git", "status", "--porcelain", cwd=ws).stdout, "?? s\n")
        self.assertEqual(self.fired(), [])


class CallerExample(HostGit):
    """The caller library's run_git (docs/PYTHON.md): the dispatcher's git steps through agent-sandbox git."""

    def test_run_git_returns_gits_result_and_raises_the_launchers_refusals(self):
        import sys
        from harness import BUILD, LAUNCHER
        sys.path.insert(0, str(BUILD / "python"))  # the caller library as built
        import agent_sandbox as caller
        ws = self.clone("caller")
        (ws / "sub").mkdir()
        plain("init", "-q", cwd=ws / "sub")
        (ws / "sub" / "f").write_text("x\n")
        plain("-C", "sub", "add", "f", cwd=ws)
        plain("-C", "sub", "commit", "-qm", "s", cwd=ws)
        plain("add", "sub", cwd=ws)
        plain("config", "core.fsmonitor", str(self.trap("fsmonitor")), cwd=ws / "sub")  # after our own gits
        env = {**ENV_BASE, "HOME": str(self.seat.dir), "XDG_CONFIG_HOME": str(self.seat.config_home)}
        steps = [["add", "-A"], ["-c", "user.name=d", "-c", "user.email=d@d", "commit", "-qm", "agent: job"],
                 ["log", "--format=%s", "-1"], ["diff", "HEAD~1", "--stat"]]
        results = [caller.run_git(ws, step, launcher=str(LAUNCHER), env=env) for step in steps]
        self.assertEqual([r.exit_code for r in results], [0, 0, 0, 0], [r.stderr for r in results])
        self.assertEqual(results[2].stdout, b"agent: job\n")
        self.assertEqual(self.fired(), [])
        self.assertEqual(caller.run_git(ws, ["rev-parse", "--verify", "nope"], launcher=str(LAUNCHER), env=env)
                         .exit_code, 128)
        with self.assertRaises(caller.WorkspaceRejected):
            caller.run_git(self.seat.dir, ["status"], launcher=str(LAUNCHER), env=env)
        # The example's commit step (examples/agent_sandbox_caller.py) goes the same way.
        from harness import ROOT
        sys.path.insert(0, str(ROOT / "examples"))
        import agent_sandbox_caller as example
        (ws / "more.txt").write_text("more\n")
        head = example.commit_session(ws, "job-2", launcher=str(LAUNCHER), env=env)
        self.assertEqual(plain("rev-parse", "HEAD", cwd=ws).stdout.strip(), head)
        self.assertEqual(self.fired(), [])
