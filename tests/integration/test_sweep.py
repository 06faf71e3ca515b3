"""The sweep after the agent finishes whatever it planted, or fails closed (issue 33, items 1 and 4;
docs/THREATS.md, "What the agent leaves behind"; docs/MOUNTS.md, "After the agent").

A limit of the walk (depth, entries, time) skips a subtree, never the rest: the subtree is set aside
in a quarantine no git looks at and no other local user reaches; what cannot be set aside fails the
session with sweep_incomplete. Each trap is planted by a real session; the CONTROL plants the same on
the host, where it fires. And no byte of a hostile name reaches the caller's terminal or the record raw.
Session ids start with `sw-`."""
import os
import shutil
import subprocess

from harness import CODES, session_containers
from test_host_git import AGENT, NOBODY, OWNER, VICTIM_TEXT, HostGit, SymlinkMirror, chown_tree

DEEP = 130
HOSTILE = ("x\x1b]52;c;ZWNobyBvd25lZA==\x07\x1b]0;owned\x07\x1b[2K\r\n"
           "agent-sandbox: all checks passed")


def plants(victim, fsmonitor, extra="", deep=True):
    """The issue's reproduction: a directory DEEP levels down in objects/, a reflog link to a root-owned
    file, a setuid copy of bash in the workspace, an embedded repository with core.fsmonitor."""
    return AGENT + (
        "C=$(git rev-parse --git-common-dir); B=$(git symbolic-ref --short HEAD)\n" + extra +
        (f"mkdir -p $C/objects/zz/$(printf 'a/%.0s' $(seq {DEEP}))\n" if deep else "") +
        f"rm -f $C/logs/refs/heads/$B && ln -s {victim} $C/logs/refs/heads/$B\n"
        "cp /bin/bash sh && chmod 4755 sh\n"
        f"mkdir emb && git -C emb init -q && git -C emb config core.fsmonitor {fsmonitor}\n"
        # Live inside, before the sweep: each plant is there as planted.
        "stat -c '%a' sh; readlink $C/logs/refs/heads/$B; git -C emb config core.fsmonitor\n")


def control_bytes(data):
    return sorted({b for b in data if (b < 0x20 and b != 0x0a) or b == 0x7f})


class Sweep(HostGit):
    def setUp(self):
        super().setUp()
        self.mirror = SymlinkMirror(self)
        self.ws = self.mirror.ws
        os.chmod(self.ws, 0o755)

    def limits(self, text):
        self.seat.write(self.seat.config_file.read_text() + "[git_sweep]\n" + text)

    def bash_euid_as_nobody(self, path):
        out = subprocess.run(["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups", str(path),
                              "-p", "-c", "id -u"], capture_output=True, text=True, timeout=30)
        return out.stdout.strip() or out.stderr.strip()

    def run_plants(self, session_id, extra="", deep=True):
        fs = self.trap("fsmonitor")
        proc, record = self.session(session_id, self.ws, plants(self.victim, fs, extra, deep), mirror=self.mirror.common)
        out = proc.stdout.decode().splitlines()
        self.assertEqual(out[-3:], ["4755", str(self.victim), str(fs)], proc.stderr.decode(errors="replace"))
        return proc, record

    def assertHarmless(self, record):
        """What the plants aimed at does not happen on the host after the session."""
        self.assertEqual(self.root_git("commit", "-q", "--allow-empty", "-m", "root's", cwd=self.ws).returncode, 0)
        self.assertEqual(self.victim.read_text(), VICTIM_TEXT, "the root git wrote through the agent's link")
        self.assertNotEqual(self.bash_euid_as_nobody(self.ws / "sh"), str(OWNER))
        emb = [f for f in record["git"]["findings"] if f["path"] == str(self.ws / "emb")]
        aside = [q for q in record["git"]["quarantined"] if str(self.ws) in q["path"]]
        self.assertTrue(emb or aside, record["git"])
        if emb:
            self.assertEqual(emb[0]["keys"], ["core.fsmonitor"])
        self.assertEqual(self.fired(), [])

    def test_a_directory_130_levels_deep_is_set_aside_and_everything_else_swept(self):
        proc, record = self.run_plants("sw-deep")
        # The disk wall cannot measure below 128 levels either: the session fails closed (229,
        # docs/DECISIONS.md "The disk: after a hostile pass"); the sweep is made all the same.
        self.assertEqual((proc.returncode, record["error_kind"], record["disk"]["ended"]), (229, "killed_disk", "unmeasured"))
        self.assertEqual(session_containers(record["id"]), [])
        git = record["git"]
        deep = self.mirror.common / "objects" / "zz" / "/".join(["a"] * 127)
        self.assertEqual([(q["path"], q["why"]) for q in git["quarantined"]], [(str(deep), "deeper than 128 levels")])
        to = git["quarantined"][0]["to"]
        self.assertTrue(to.startswith(str(self.mirror.common) + "/.asbx-quarantine-"), to)
        self.assertEqual(os.stat(os.path.dirname(to)).st_mode & 0o777, 0o700)
        self.assertFalse(deep.exists())
        self.assertIn({"path": str(self.mirror.common / "logs" / "refs" / "heads" / "wt"), "kind": "symlink"},
                      git["removed"])
        self.assertIn({"path": str(self.ws / "sh"), "mode": "4755", "now": "0755"}, git["setid_stripped"])
        self.assertEqual(git["unswept"], [])
        self.assertIn(f"agent-sandbox: warning: git: '{deep}' was not examined (deeper than 128 levels): set aside in "
                      f"'{to}'", proc.stderr.decode())
        self.assertHarmless(record)
        self.assertEqual(self.bash_euid_as_nobody(self.ws / "sh"), str(NOBODY))

    def test_past_the_entry_budget_directories_are_set_aside_not_skipped(self):
        self.limits("max_entries = 60\n")
        # 100 directories in one: the walk meets the budget inside it, in the workspace and in logs/.
        bulk = "mkdir bulk $C/logs/bulk && mkdir $(seq -f 'bulk/d%g' 100) $(seq -f \"$C/logs/bulk/d%g\" 100)\n"
        proc, record = self.run_plants("sw-entries", bulk, deep=False)
        self.assertSessionExited(proc, record)
        git = record["git"]
        self.assertTrue(any(q["why"] == "past 60 entries in this walk" for q in git["quarantined"]), git)
        self.assertEqual(git["unswept"], [])
        self.assertHarmless(record)

    def test_past_the_hard_time_limit_the_session_fails_closed_naming_what(self):
        self.limits('time = "1ms"\n')
        # Past the soft limit no directory is entered, but every file is still looked at: 5000 of them
        # at the top outlast the hard one.
        bulk = "touch $(seq -f 'f%g' 5000)\n"
        proc, record = self.run_plants("sw-time", bulk, deep=False)
        self.assertEqual(proc.returncode, CODES["sweep_incomplete"], proc.stderr.decode(errors="replace"))
        self.assertEqual((record["outcome"], record["error_kind"], record["agent_exit_code"]),
                         ("launcher_error", "sweep_incomplete", 0))  # the agent's own code stays on record
        self.assertTrue(record["git"]["unswept"], record["git"])
        self.assertTrue(record["message"].startswith("the check after the session could not sweep or set aside what "
                                                     "the agent left: "), record["message"])
        self.assertIn("agent-sandbox: " + record["message"], proc.stderr.decode())
        self.assertFalse(record["git"]["scan"]["complete"])

    def test_control_the_same_plants_on_the_host_fire(self):
        common = self.mirror.common
        (common / "logs" / "refs" / "heads" / "wt").unlink()
        (common / "logs" / "refs" / "heads" / "wt").symlink_to(self.victim)
        shutil.copy("/bin/bash", self.ws / "sh")
        os.chown(self.ws / "sh", OWNER, OWNER)
        os.chmod(self.ws / "sh", 0o4755)
        fs = self.trap("fsmonitor")
        emb = self.ws / "emb"
        emb.mkdir()
        subprocess.run(["git", "init", "-q", str(emb)], check=True)
        subprocess.run(["git", "-C", str(emb), "config", "core.fsmonitor", str(fs)], check=True)
        chown_tree(emb)
        self.root_git("commit", "-q", "--allow-empty", "-m", "root's", cwd=self.ws)
        self.assertNotEqual(self.victim.read_text(), VICTIM_TEXT)
        self.assertEqual(self.bash_euid_as_nobody(self.ws / "sh"), str(OWNER))
        self.owner_git("status", cwd=emb)
        self.assertIn("fsmonitor", self.fired())


class HostileNames(HostGit):
    """Item 4: a directory named with OSC 52, a title, ESC[2K\\r and a newline plus a forged launcher line,
    then `git init` in it: the finding's warning is escaped on the caller's stderr and in the record, in
    this session and in every later one on the workspace."""

    def assertClean(self, proc, record):
        err = proc.stderr
        self.assertEqual(control_bytes(err), [], err)
        self.assertFalse(any(line.startswith(b"agent-sandbox: all checks passed") for line in err.splitlines()), err)
        self.assertIn(b"agent-sandbox: warning: git: '", err)
        paths = [f["path"] for f in record["git"]["findings"]]
        self.assertTrue(any("?]52;c;" in p for p in paths), paths)
        self.assertFalse(any(any(ord(c) < 0x20 for c in p) for p in paths), paths)

    def test_hostile_directory_names_never_reach_the_terminal_raw(self):
        ws = self.clone("names")
        script = AGENT + "d=$'" + HOSTILE.encode("unicode_escape").decode().replace("'", "\\'") + "'\n" + \
            'mkdir "$d" && git -C "$d" init -q 2>/dev/null && echo made\n'
        proc, record = self.session("sw-names", ws, script)
        self.assertSessionExited(proc, record)
        self.assertEqual(proc.stdout, b"made\n")
        # The CONTROL: the name on disk holds the raw bytes a plain print would send to the terminal.
        names = [n for n in os.listdir(ws) if n.startswith("x\x1b")]
        self.assertEqual(names, [HOSTILE])
        self.assertClean(proc, record)
        proc, record = self.session("sw-names-later", ws, "true")
        self.assertSessionExited(proc, record)
        self.assertClean(proc, record)
