"""Repositories git accepts that a HEAD-file-plus-objects-and-refs check misses (docs/THREATS.md, "What
the agent leaves behind"; docs/MOUNTS.md, "After the agent"): a bare repository whose HEAD is a
symlink to refs/heads/main, and a directory holding only HEAD and a `commondir` file that sends git to
another repository's objects, refs and config. A real session plants both; the record reports both with
the pager their config names. The CONTROL runs the owner's plain git under a terminal in a copy of
what the agent left: it runs that pager. Session ids start with `gd-`."""
import shutil

from test_host_git import AGENT, HostGit, chown_tree

PLANT = AGENT + (
    "git init -q --bare -b main s1 && T=$(git --git-dir=s1 mktree </dev/null) && "
    "C=$(git --git-dir=s1 commit-tree -m x $T) && git --git-dir=s1 update-ref refs/heads/main $C && "
    "git --git-dir=s1 config core.pager {pager} && mkdir s1/docs && "
    "rm s1/HEAD && ln -s refs/heads/main s1/HEAD && "
    "mkdir s2 && echo 'ref: refs/heads/main' > s2/HEAD && echo ../s1 > s2/commondir && "
    "git -C s1/docs rev-parse --git-dir >/dev/null && git -C s2 rev-parse --git-dir >/dev/null && echo found\n")


class GitDirectoryShapes(HostGit):
    def test_a_head_symlink_and_a_commondir_repository_are_reported(self):
        ws = self.clone("gd")
        pager = self.trap("pager")
        proc, record = self.session("gd-shapes", ws, PLANT.format(pager=pager))
        self.assertSessionExited(proc, record)
        self.assertEqual(proc.stdout.decode().splitlines(), ["found"])
        findings = [f for f in record["git"]["findings"] if f["kind"] == "bare_repository"]
        self.assertEqual(findings, [
            {"path": str(ws / "s1"), "kind": "bare_repository", "keys": ["core.pager"], "detail": None},
            {"path": str(ws / "s2"), "kind": "bare_repository", "keys": ["core.pager"], "detail": "commondir ../s1"},
        ])
        stderr = proc.stderr.decode()
        for name in ("s1", "s2"):
            self.assertIn(f"'{ws}/{name}'", stderr)
        self.assertEqual(self.fired(), [])

        # CONTROL: what the agent left, copied as it is and owned by the owner, runs the pager under the
        # owner's plain git in s1/docs (HEAD a symlink) and in s2 (commondir only).
        for where in ("s1/docs", "s2"):
            with self.subTest(where):
                self.clear_marks()
                copy = self.seat.dir / "copy"
                shutil.rmtree(copy, ignore_errors=True)
                copy.mkdir()
                for name in ("s1", "s2"):
                    shutil.copytree(ws / name, copy / name, symlinks=True)
                chown_tree(copy)
                self.assertTrue((copy / "s1" / "HEAD").is_symlink())
                self.owner("script", "-qec", "git log", "/dev/null", cwd=copy / where)
                self.assertEqual(self.fired(), ["pager"])
