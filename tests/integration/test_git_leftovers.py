"""Two things the agent leaves that would act on the host's git after the session (docs/THREATS.md,
"What the agent leaves behind"; docs/MOUNTS.md, "After the agent"):
 - an index whose entry paths climb out of the work tree (`../../x`, `/etc/shadow`): the host's
   `git commit -a` would read and commit the outside file. Such an index is not copied back and is
   removed from the host gitdir (git.removed, kind "index"); `git reset` rebuilds one.
 - FIFOs in the workspace (.gitignore, .gitattributes, .mailmap): the host's git blocks on them.
   The sweep removes FIFOs, sockets and devices in the workspace (git.removed).
Each is planted by a real session; each CONTROL plants the same on the host, where it fires.
Session ids start with `lo-`."""
import hashlib
import os
import struct
import subprocess

from test_host_git import AGENT, OWNER, HostGit, SymlinkMirror

SECRET = "a root-only file outside every workspace\n"


def crafted_index(path, content):
    """A version 2 index of one entry at `path` (git itself never writes such a path)."""
    blob = hashlib.sha1(b"blob %d\0" % len(content) + content).digest()
    name = path.encode()
    entry = bytes(24) + struct.pack(">I", 0o100644) + bytes(12) + blob + struct.pack(">H", min(len(name), 0xfff)) + name
    entry += b"\0" * (8 - (len(entry) % 8))
    body = b"DIRC" + struct.pack(">II", 2, 1) + entry
    return body + hashlib.sha1(body).digest()


class CraftedIndex(HostGit):
    def setUp(self):
        super().setUp()
        self.secret = self.seat.dir / "outside" / "root-secret"
        self.secret.parent.mkdir(mode=0o700)
        self.secret.write_text(SECRET)
        os.chmod(self.secret, 0o600)
        (self.seat.dir / ".gitconfig").write_text("[user]\n\tname = root\n\temail = root@seat\n")  # root's HOME

    def index_for(self, ws):
        return crafted_index(os.path.relpath(self.secret, ws), SECRET.encode())

    def plant(self, ws):
        """The crafted index, handed to the agent as a file; the agent puts it where git reads its index."""
        (ws / "crafted").write_bytes(self.index_for(ws))
        os.chown(ws / "crafted", OWNER, OWNER)
        return AGENT + 'G=$(git rev-parse --git-dir) && cp crafted "$G/index" && rm crafted && echo planted\n'

    def taken(self, ws):
        """Whether the root's last commit holds the outside file's content."""
        show = self.root_git("log", "-p", "-1", "--format=", cwd=ws).stdout
        return "root-only file outside" in show

    def check(self, ws, gitdir, mirror, proc, record):
        self.assertSessionExited(proc, record)
        self.assertEqual(proc.stdout, b"planted\n")
        removed = [r for r in record["git"]["removed"] if r["kind"] == "index"]
        self.assertEqual(removed, [{"path": str(gitdir / "index"), "kind": "index"}])
        self.assertIn("git: removed '" + str(gitdir / "index") + "': an entry's path is one git refuses (outside the "
                      "work tree); rebuild it with 'git reset'", proc.stderr.decode(errors="replace"))
        self.assertFalse((gitdir / "index").exists())
        git = lambda *a: self.safe_git(ws, *a, mirror=mirror, as_owner=False)
        self.assertEqual(git("reset", "-q").returncode, 0)  # git rebuilds the index
        self.assertNotIn("root-only", git("diff", "HEAD").stdout)
        out = git("commit", "-a", "-q", "--allow-empty", "-m", "x")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertFalse(self.taken(ws))

    def test_in_a_plain_clone_the_index_is_not_copied_back(self):
        ws = self.clone("idx-plain")
        proc, record = self.session("lo-idx-plain", ws, self.plant(ws))
        self.assertIn("index: a path git refuses, entry 0 '" + os.path.relpath(self.secret, ws) + "': a '..' component; "
                      "the host's is kept", record["git"]["not_copied_back"])
        self.assertSessionExited(proc, record)
        self.assertEqual(self.root_git("ls-files", cwd=ws).stdout, "a.txt\n")
        self.assertNotIn("root-only", self.safe_git(ws, "diff", "HEAD", as_owner=False).stdout)
        out = self.safe_git(ws, "commit", "-a", "-q", "--allow-empty", "-m", "x", as_owner=False)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertFalse(self.taken(ws))

    def test_in_a_linked_worktree_the_index_is_removed(self):
        mirror = SymlinkMirror(self)
        os.chmod(mirror.ws, 0o755)
        proc, record = self.session("lo-idx-linked", mirror.ws, self.plant(mirror.ws), mirror=mirror.common)
        self.check(mirror.ws, mirror.gitdir(), mirror.common, proc, record)

    def test_control_the_same_index_on_the_host_commits_the_outside_file(self):
        ws = self.clone("idx-ctl")
        (ws / ".git" / "index").write_bytes(self.index_for(ws))
        out = self.root_git("commit", "-a", "-q", "-m", "x", cwd=ws)
        self.assertTrue(self.taken(ws), out.stdout + out.stderr)


class WorkspaceFifos(HostGit):
    NAMES = (".gitignore", ".gitattributes", ".mailmap")

    def test_fifos_in_the_workspace_are_removed(self):
        ws = self.clone("fifo")
        script = AGENT + "mkfifo .gitignore .gitattributes .mailmap && mkdir -p u && mkfifo u/.gitignore && echo planted\n"
        proc, record = self.session("lo-fifo", ws, script)
        self.assertSessionExited(proc, record)
        self.assertEqual(proc.stdout, b"planted\n")
        self.assertEqual(record["git"]["removed"], [{"path": str(ws / n), "kind": "fifo"}
                                                    for n in sorted([*self.NAMES, "u/.gitignore"])])
        for name in self.NAMES:
            self.assertFalse(os.path.lexists(ws / name), name)
        out = subprocess.run(["timeout", "10", "git", "-c", "safe.directory=*", "status", "--porcelain"], cwd=ws,
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(self.safe_git(ws, "status", "--porcelain", as_owner=False).returncode, 0)

    def test_control_a_fifo_gitignore_on_the_host_hangs_git(self):
        ws = self.clone("fifo-ctl")
        (ws / "u").mkdir()
        os.mkfifo(ws / "u" / ".gitignore")
        out = subprocess.run(["timeout", "5", "git", "-c", "safe.directory=*", "status"], cwd=ws, capture_output=True)
        self.assertEqual(out.returncode, 124)
