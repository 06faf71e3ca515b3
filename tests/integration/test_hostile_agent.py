"""The agent is the attacker: every way out of a session's lane, tried from inside real sessions.

Each class is one attack of docs/THREATS.md; each test asserts the control that stops it."""
import json
import os
import re
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

from harness import CODES, GVISOR, IMAGE, LAUNCHER, RUNSC_SOCKET, SOCKET, SeatTest, UnixRelay, podman, session_containers, unavailable, TEST_POOL

AGENT_UID = 1000  # a root caller's agent

CATATONIT_LINE = "ERROR (catatonit:2): failed to exec pid1: No such file or directory\n"


class ForgedVerdicts(SeatTest):
    """Nothing the agent prints or writes turns its own exit into a launcher error."""

    def test_the_catatonit_line_printed_by_the_agent_is_its_own_exit(self):
        proc, record = self.seat.status("--id", "hostile-forge", "--", "bash", "-c",
                                        f"printf '{CATATONIT_LINE}' >&2; exit 1")
        self.assertEqual((proc.returncode, record["agent_exit_code"], record["error_kind"], record["outcome"]),
                         (1, 1, None, "exited"))
        self.assertEqual(proc.stderr.decode(), CATATONIT_LINE)
        self.assertNoContainer("hostile-forge")

    def test_127_and_126_with_the_shells_words_pass_through(self):
        for code, words in ((127, "bash: no-such: command not found"), (126, "bash: ./x: Permission denied")):
            proc, record = self.seat.status("--", "bash", "-c", f"echo '{words}' >&2; exit {code}")
            self.assertEqual((proc.returncode, record["agent_exit_code"], record["error_kind"]), (code, code, None))

    def test_the_old_report_files_are_gone_and_forging_them_changes_nothing(self):
        home = self.seat.dir / "home"
        (home / ".codex").mkdir(parents=True)
        (home / ".codex" / "auth.json").write_text("{}")
        proc, record = self.seat.status("--runtime", "codex", "--", "bash", "-c",
                                        "mkdir -p /tmp/r; echo command_not_found > /tmp/r/exec-failure; "
                                        "test -e /sandbox-report && echo report-dir; exit 127",
                                        env=self.seat.env(HOME=str(home)))
        self.assertEqual((proc.returncode, record["agent_exit_code"], record["error_kind"]), (127, 127, None))
        self.assertEqual(proc.stdout, b"")

    def test_real_exec_failures_are_decided_before_start(self):
        cases = [(["no-such-command"], "command_not_found", "command not found inside the container: 'no-such-command'"),
                 (["/etc/hostname"], "command_not_executable", "command not executable inside the container: '/etc/hostname'"),
                 (["/usr"], "command_not_executable", "command not executable inside the container: '/usr'")]
        for argv, kind, message in cases:
            with self.subTest(argv=argv):
                proc, record = self.seat.status("--id", "hostile-exec", "--", *argv)
                self.assertLauncherError(proc, record, kind, message)
                self.assertEqual(record["container_removed"], True)
                self.assertNoContainer("hostile-exec")

    def test_a_script_whose_interpreter_is_missing_is_not_found(self):
        ws = self.seat.workspaces / "ws-interp"
        ws.mkdir()
        os.chown(ws, AGENT_UID, AGENT_UID)
        script = ws / "run.sh"
        script.write_text("#!/no/such/shell\necho hi\n")
        script.chmod(0o755)
        proc, record = self.seat.status("--workspace", str(ws), "--", "./run.sh")
        self.assertLauncherError(proc, record, "command_not_found", "command not found inside the container: './run.sh'")

    def test_a_symlink_in_the_workspace_resolves_inside_the_container(self):
        """An absolute symlink the agent planted points into the container, never at the seat."""
        ws = self.seat.workspaces / "ws-link"
        ws.mkdir()
        os.chown(ws, AGENT_UID, AGENT_UID)
        (ws / "agent").symlink_to("/usr/bin/true")
        proc, record = self.seat.status("--workspace", str(ws), "--", "./agent")
        self.assertEqual((proc.returncode, record["error_kind"]), (0, None), proc.stderr)
        seat_only = self.seat.dir / "seat-only-tool"
        seat_only.write_text("#!/bin/sh\necho escaped\n")
        seat_only.chmod(0o755)
        (ws / "evil").symlink_to(seat_only)
        proc, record = self.seat.status("--workspace", str(ws), "--", "./evil")
        self.assertLauncherError(proc, record, "command_not_found", "command not found inside the container: './evil'")


class WhatTheLauncherReadsBack(SeatTest):
    """The only thing read back from inside is the credential copy in the tmpfs HOME: a FIFO,
    a symlink, a directory or a huge file there cannot hang, steer or fill anything."""

    def setUp(self):
        super().setUp()
        self.home = self.seat.dir / "home"
        (self.home / ".codex").mkdir(parents=True)
        (self.home / ".codex" / "auth.json").write_text('{"token": "not-for-the-record"}')

    def test_odd_files_at_the_copy_end_the_session_promptly(self):
        copy = "$HOME/.codex/auth.json"
        for name, plant in (("fifo", f"rm {copy}; mkfifo {copy}"), ("symlink", f"rm {copy}; ln -s /etc/shadow {copy}"),
                            ("dir", f"rm {copy}; mkdir {copy}"), ("huge", f"truncate -s 400m {copy}")):
            with self.subTest(plant=name):
                t0 = time.monotonic()
                proc, record = self.seat.status("--id", "hostile-back", "--runtime", "codex", "--", "bash", "-c",
                                                plant + "; exit 3", env=self.seat.env(HOME=str(self.home)))
                self.assertLess(time.monotonic() - t0, 30)
                self.assertEqual((proc.returncode, record["agent_exit_code"], record["error_kind"]), (3, 3, None),
                                 proc.stderr)
                self.assertFalse(record["credential_refreshed_in_container"])
                self.assertNoContainer("hostile-back")
        self.assertEqual(len(self.seat.ledger.read_text().splitlines()), 4)

    def test_a_rewritten_copy_is_reported_as_a_refresh(self):
        proc, record = self.seat.status("--runtime", "codex", "--", "bash", "-c", "echo rotated > $HOME/.codex/auth.json",
                                        env=self.seat.env(HOME=str(self.home)))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(record["credential_refreshed_in_container"])


class Backpressure(SeatTest):
    """A caller that stops reading cannot suspend the timeout, its signals or the wait."""

    def start(self, *args):
        status = self.seat.dir / "status-bp.json"
        p = subprocess.Popen([str(LAUNCHER), "--status-file", str(status), *args], env=self.seat.env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(self.end, p)
        return p, status

    @staticmethod
    def end(p):
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
        p.stderr.close()

    def test_the_timeout_fires_while_nobody_reads(self):
        t0 = time.monotonic()
        p, status = self.start("--id", "hostile-bp", "--timeout", "3s", "--", "yes")
        p.wait(timeout=40)
        self.assertLess(time.monotonic() - t0, 20)
        record = json.loads(status.read_text())
        self.assertEqual((p.returncode, record["error_kind"], record["cause"]), (CODES["killed_timeout"], "killed_timeout", "timeout"))
        self.assertTrue(any("the caller stopped reading" in w for w in record["warnings"]), record["warnings"])
        self.assertNoContainer("hostile-bp")

    def test_a_signal_ends_it_while_nobody_reads(self):
        p, status = self.start("--id", "hostile-bp-sig", "--", "yes")
        time.sleep(3)
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=40)
        self.assertLess(time.monotonic() - t0, 15)
        record = json.loads(status.read_text())
        self.assertEqual((p.returncode, record["outcome"], record["cause"], record["error_kind"]),
                         (128 + signal.SIGTERM, "killed", "signal", None))
        self.assertNoContainer("hostile-bp-sig")

    def test_a_slow_reader_still_gets_every_byte(self):
        p, status = self.start("--", "bash", "-c", "head -c 3000000 /dev/zero | tr '\\0' x; exit 5")
        time.sleep(2)  # the agent has long exited; its output waits for us
        out = p.stdout.read()
        p.wait(timeout=40)
        self.assertEqual((len(out), p.returncode), (3000000, 5))
        self.assertEqual(json.loads(status.read_text())["warnings"], [])


class SwappingRelay(UnixRelay):
    """A unix-socket relay in front of the real podman service that runs `on_create` just before
    it forwards the create request: exactly the window between the launcher's validation and
    podman's mount, held open deterministically."""

    def __init__(self, path, on_create, upstream=SOCKET):
        self.on_create, self.fired = on_create, False
        super().__init__(path, upstream)

    def relay(self, conn):
        with conn, socket.socket(socket.AF_UNIX) as up:
            up.connect(self.upstream)
            back = threading.Thread(target=self.copy, args=(up, conn), daemon=True)
            back.start()
            self.copy(conn, up, watch=True)
            back.join(timeout=60)

    def copy(self, src, dst, watch=False):
        try:
            while data := src.recv(65536):
                # The warm path has no create: it binds after its member's inspect, which the claim
                # asks for the moment it wins the member, before the plan is made again on the
                # member's range and the dirs are pinned. Held back, the swap comes after both, as
                # the create comes after the cold path's.
                warm = TEST_POOL and re.search(rb"/containers/[0-9a-f]{64}/json", data)
                if watch and not self.fired and (b"/containers/create " in data or warm):
                    self.fired = True
                    if warm:
                        time.sleep(0.5)
                    self.on_create()
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class MountSourceSwapped(SeatTest):
    """A concurrent writer swaps a validated directory between the check and the mount."""

    def swap_and_run(self, ws, swap):
        upstream = RUNSC_SOCKET if GVISOR else SOCKET  # the service the session's create goes to
        relay = SwappingRelay(self.seat.dir / "relay.sock", swap, upstream)
        self.addCleanup(relay.close)
        self.seat.write(self.seat.config_file.read_text().replace(f'"{upstream}"', f'"{self.seat.dir / "relay.sock"}"'))
        proc, record = self.seat.status("--id", "hostile-swap", "--workspace", str(ws), "--", "touch", "ran")
        self.assertTrue(relay.fired)
        return proc, record

    def test_a_directory_swapped_for_another_is_refused_before_start(self):
        ws = self.seat.workspaces / "swap-dir"
        ws.mkdir()
        moved = self.seat.dir / "moved-away"
        # the replacement is the agent's, as a workspace is: only the identity check can refuse it
        proc, record = self.swap_and_run(ws, lambda: (ws.rename(moved), ws.mkdir(), os.chown(ws, 1000, 1000)))
        self.assertLauncherError(proc, record, "workspace_rejected",
                                 f"'{ws}' mounted at '/sandbox/workspaces/swap-dir' is not the directory that was "
                                 "validated (it was replaced between the check and the mount); nothing was started")
        self.assertFalse((ws / "ran").exists() or (moved / "ran").exists())
        self.assertNoContainer("hostile-swap")

    def test_a_directory_swapped_for_a_symlink_is_refused_before_start(self):
        ws = self.seat.workspaces / "swap-link"
        ws.mkdir()
        elsewhere = self.seat.dir / "someone-elses"
        elsewhere.mkdir()
        proc, record = self.swap_and_run(ws, lambda: (ws.rename(self.seat.dir / "moved"), ws.symlink_to(elsewhere)))
        self.assertLauncherError(proc, record, "workspace_rejected",
                                 f"'{ws}' mounted at '/sandbox/workspaces/swap-link' is not the directory that was "
                                 "validated (it was replaced between the check and the mount); nothing was started")
        self.assertFalse((elsewhere / "ran").exists())
        self.assertNoContainer("hostile-swap")


def git(*args, cwd):
    return subprocess.run(["git", "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          cwd=cwd, capture_output=True, text=True, check=True).stdout


def chown_tree(path, uid=AGENT_UID):
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.lchown(name, uid, uid)


class GitSeat(SeatTest):
    """A git root with two mirrors; `mine` has the linked worktree `wt` as the workspace."""

    def setUp(self):
        super().setUp()
        self.root = self.seat.dir / "git-common"
        self.seat.write(self.seat.config_file.read_text() + f'git_roots = ["{self.root}"]\n')
        self.mine, self.ws = self.repo("mine", "wt")
        self.other, self.other_ws = self.repo("other", "ow")
        chown_tree(self.root)
        chown_tree(self.seat.workspaces)
        self.common = self.mine / ".git"
        self.gitdir = self.common / "worktrees" / "wt"

    def repo(self, name, worktree):
        path = self.root / name
        path.mkdir(parents=True)
        git("init", "-q", "-b", "main", cwd=path)
        (path / "README").write_text(name + "\n")
        git("add", "README", cwd=path)
        git("commit", "-qm", "first", cwd=path)
        ws = self.seat.workspaces / worktree
        git("worktree", "add", "-q", "-b", worktree, str(ws), cwd=path)
        return path, ws

    def session(self, session_id, script, *more):
        return self.seat.status("--id", session_id, "--workspace", str(self.ws), "--git-mirror", str(self.common),
                                *more, "--", "bash", "-c", script)


class GitRedirection(GitSeat):
    """The agent rewrites '.git' (and tries the gitdir's commondir) so the next session would
    mount another repository read-write: the caller names the mirror, the link is checked both ways."""

    def test_a_redirect_left_by_a_session_is_refused_in_the_next(self):
        link = (self.ws / ".git").read_text()
        redirect = (f"(echo 'gitdir: {self.other}/.git/worktrees/ow' > .git) 2>/dev/null || echo link-refused; "
                    f"echo {self.other}/.git > {self.gitdir}/commondir 2>/dev/null || echo commondir-refused")
        proc, record = self.session("hostile-git-1", redirect)
        self.assertEqual((proc.returncode, record["error_kind"]), (0, None), proc.stderr)
        self.assertEqual(proc.stdout, b"link-refused\ncommondir-refused\n")  # both bound read-only
        self.assertEqual((self.ws / ".git").read_text(), link)
        self.assertEqual((self.gitdir / "commondir").read_text(), "../..\n")
        # A redirect left behind some other way (an older launcher, a host process) is refused next time.
        (self.ws / ".git").write_text(f"gitdir: {self.other}/.git/worktrees/ow\n")
        proc, record = self.session("hostile-git-2", "true")
        self.assertLauncherError(proc, record, "git_unmountable",
                                 f"workspace '{self.ws}': '.git' names gitdir '{self.other}/.git/worktrees/ow', which "
                                 f"is not a worktree of the mirror '{self.common}'")
        self.assertNoContainer("hostile-git-2")
        # Naming the other mirror does not help: its worktree points back at another workspace.
        proc, record = self.seat.status("--id", "hostile-git-3", "--workspace", str(self.ws), "--git-mirror",
                                        str(self.other / ".git"), "--", "true")
        self.assertLauncherError(proc, record, "git_unmountable",
                                 f"workspace '{self.ws}': gitdir '{self.other}/.git/worktrees/ow' does not point back "
                                 f"at '{self.ws}/.git' (its 'gitdir' file names another worktree)")
        self.assertNoContainer("hostile-git-3")

    def test_a_commondir_planted_earlier_is_refused(self):
        (self.gitdir / "commondir").write_text(f"{self.other}/.git\n")  # what an older launcher let an agent write
        proc, record = self.session("hostile-git-cd", "true")
        self.assertLauncherError(proc, record, "git_unmountable",
                                 f"workspace '{self.ws}': gitdir '{self.gitdir}' has no 'commondir' leading back to "
                                 f"the mirror '{self.common}'")
        self.assertNoContainer("hostile-git-cd")

    def test_without_a_named_mirror_a_linked_worktree_is_refused(self):
        proc, record = self.seat.status("--id", "hostile-git-none", "--workspace", str(self.ws), "--", "true")
        self.assertLauncherError(proc, record, "git_unmountable",
                                 f"workspace '{self.ws}': it is a linked worktree: name its mirror (the common dir) "
                                 "with --git-mirror PATH; the '.git' file is written by the agent and is not trusted "
                                 "alone")
        self.assertNoContainer("hostile-git-none")


class MirrorCodeExecution(GitSeat):
    """What git executes or obeys in the mirror is read-only inside; commits still land."""

    ATTEMPTS = {
        "fsmonitor": "git config core.fsmonitor 'touch {mark}'",
        "config": "echo '[core]fsmonitor = touch {mark}' >> {common}/config",
        "hook": "printf '#!/bin/sh\\ntouch {mark}\\n' > {common}/hooks/post-commit && chmod +x {common}/hooks/post-commit",
        "info": "echo '* filter=evil' > {common}/info/attributes",
        "alternates": "echo {seat}/objects > {common}/objects/info/alternates",
        "commondir": "echo {seat} > {gitdir}/commondir",
        "worktree-config": "echo '[core]fsmonitor = touch {mark}' > {gitdir}/config.worktree && "
                           "git config --file {gitdir}/config.worktree core.hooksPath {seat}",
    }

    def test_the_agent_cannot_plant_what_the_hosts_git_runs_and_commits_still_land(self):
        mark = self.seat.dir / "host-ran-agent-code"
        fields = dict(mark=mark, common=self.common, gitdir=self.gitdir, seat=self.seat.dir)
        script = "".join(f"({cmd.format(**fields)}) 2>/dev/null && echo '{name} written' || echo '{name} refused'; "
                         for name, cmd in self.ATTEMPTS.items())
        script += "git -c user.name=a -c user.email=a@a commit -q --allow-empty -m from-inside && echo committed"
        proc, record = self.session("hostile-mirror", script)
        self.assertEqual((proc.returncode, record["error_kind"]), (0, None), proc.stderr)
        said = proc.stdout.decode().splitlines()
        self.assertEqual(said, [f"{name} refused" for name in self.ATTEMPTS
                                if name != "worktree-config"] + ["worktree-config written", "committed"])
        # The host's git, in the mirror and in a trusted worktree of it: nothing of the agent's runs.
        host_wt = self.seat.dir / "host-wt"
        git("worktree", "add", "-q", "-b", "host", str(host_wt), cwd=self.mine)
        (host_wt / "f").write_text("x\n")
        git("status", "--short", cwd=host_wt)
        git("add", "f", cwd=host_wt)
        git("commit", "-qm", "on-the-host", cwd=host_wt)
        git("status", cwd=self.mine)
        git("commit", "-q", "--allow-empty", "-m", "in-the-mirror", cwd=self.mine)
        self.assertFalse(mark.exists(), "the host's git ran the agent's code")
        self.assertEqual(git("log", "--format=%s", "-1", "wt", cwd=self.mine), "from-inside\n")
        self.assertEqual((self.gitdir / "commondir").read_text(), "../..\n")
        self.assertFalse((self.common / "objects" / "info" / "alternates").exists())


class NestedWorkspace(SeatTest):
    def test_a_workspace_inside_another_is_refused(self):
        outer = self.seat.workspaces / "outer"
        (outer / "inner").mkdir(parents=True)
        chown_tree(outer)
        proc, record = self.seat.status("--id", "hostile-nested", "--workspace", str(outer / "inner"), "--", "true")
        self.assertLauncherError(proc, record, "workspace_rejected",
                                 f"workspace '{outer}/inner' is nested below '{outer}': a workspace must be a direct "
                                 f"child of the permitted root '{self.seat.workspaces}' (one inside another would show "
                                 "one session's files to another)")
        self.assertNoContainer("hostile-nested")

    def test_one_path_is_never_mounted_twice(self):
        ws = self.seat.workspaces / "once"
        ws.mkdir()
        proc = self.seat.run("--dry-run", "--workspace", str(ws), "--", "true")
        destinations = [m["destination"] for m in json.loads(proc.stdout)["create_body"]["mounts"]]
        self.assertEqual(len(destinations), len(set(destinations)), destinations)


class NetworkReach(SeatTest):
    """Every path to the seat's own network stack is refused; /run/netns/ and the seat's lists are not."""

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            unavailable(self, "network namespaces need root")
        self.name = "asbx-hostile-%d" % os.getpid()
        subprocess.run(["ip", "netns", "add", self.name], check=True)
        self.addCleanup(subprocess.run, ["ip", "netns", "delete", self.name], check=False)
        self.planted = []
        self.addCleanup(self.remove_planted)

    def remove_planted(self):
        for path in self.planted:
            subprocess.run(["umount", path], capture_output=True)
            if os.path.lexists(path):
                os.unlink(path)

    def plant(self, suffix, how):
        path = f"/run/netns/{self.name}-{suffix}"
        self.planted.append(path)
        if how == "symlink":
            os.symlink("/proc/1/ns/net", path)
        else:
            open(path, "w").close()
            subprocess.run(["mount", "--bind", "/proc/self/ns/net", path], check=True)
        return path

    def refused(self, spec, why):
        proc, record = self.seat.status("--id", "hostile-net", "--network", spec, "--", "true")
        self.assertLauncherError(proc, record, "usage", f"--network: '{spec}' is refused: {why}")
        self.assertNoContainer("hostile-net")

    def test_paths_that_reach_the_seats_stack_are_refused(self):
        outside = "only namespaces directly in /run/netns/ or listed in the seat config's netns_allowed"
        for path in ("/proc/self/ns/net", "/proc/1/ns/net", "/proc/thread-self/ns/net", f"/var/run/netns/{self.name}",
                     f"/run/netns/{self.name}/x"):
            with self.subTest(path=path):
                self.refused("ns:" + path, outside)
        with self.subTest(path="symlink"):
            self.refused("ns:" + self.plant("link", "symlink"), "a symlink is on its path")
        with self.subTest(path="bind mount of the seat's own"):
            self.refused("ns:" + self.plant("bind", "bind"), "it is the seat's own network namespace")
        with self.subTest(path="a plain file"):
            plain = f"/run/netns/{self.name}-file"
            self.planted.append(plain)
            open(plain, "w").close()
            self.refused("ns:" + plain, "it is not a namespace (nsfs)")
        with self.subTest(path="container"):
            self.refused("container:model-proxy",
                         f"only containers listed in the seat config's network_containers ({self.seat.config_file})")

    # The joined namespace's interfaces, from /proc (the process's own namespace): /sys is the seat's
    # under a user namespace, and masked there (test_userns_range).
    NETDEVS = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"

    def test_a_namespace_in_run_netns_is_joined(self):
        proc, record = self.seat.status("--network", f"ns:/run/netns/{self.name}", "--", "sh", "-c", self.NETDEVS)
        self.assertEqual((proc.returncode, record["error_kind"]), (0, None), proc.stderr)
        self.assertEqual(proc.stdout, b"lo\n")

    def test_the_seat_config_lists_what_else_may_be_reached(self):
        self.seat.write(self.seat.config_file.read_text() + f'netns_allowed = ["/var/run/netns/{self.name}"]\n'
                        'network_containers = ["hostile-absent-proxy"]\n')
        proc, record = self.seat.status("--network", f"ns:/var/run/netns/{self.name}", "--", "sh", "-c", self.NETDEVS)
        self.assertEqual((proc.returncode, proc.stdout, record["error_kind"]), (0, b"lo\n", None), proc.stderr)
        # A listed container passes the policy; podman then judges whether it exists.
        proc, record = self.seat.status("--id", "hostile-net-c", "--network", "container:hostile-absent-proxy",
                                        "--", "true")
        self.assertNotEqual(record["error_kind"], "usage", record["message"])
        self.assertNoContainer("hostile-net-c")


class LauncherFiles(SeatTest):
    """A root launcher writes its status file, capture log and ledger where the caller said, possibly
    in the agent's workspace: a symlink or hardlink planted there steers nothing."""

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            unavailable(self, "the attack is on a root launcher")
        self.ws = self.seat.workspaces / "files"
        self.ws.mkdir()
        os.chown(self.ws, AGENT_UID, AGENT_UID)
        self.victims = {}
        for name in ("status", "ledger", "capture", "ledger-link"):
            path = self.seat.dir / ("victim-" + name)
            path.write_text("precious " + name + "\n")
            self.victims[name] = path

    def assertVictimsIntact(self):
        for name, path in self.victims.items():
            self.assertEqual(path.read_text(), "precious " + name + "\n", name)

    def test_symlinks_planted_by_the_agent_are_replaced_or_refused(self):
        status, ledger = self.ws / "status.json", self.ws / "ledger.jsonl"
        plant = (f"ln -s {self.victims['status']} status.json && ln -s {self.victims['ledger']} ledger.jsonl "
                 "&& echo planted; exit 4")
        proc = self.seat.run("--id", "hostile-files", "--workspace", str(self.ws), "--status-file", str(status),
                             "--ledger", str(ledger), "--", "bash", "-c", plant)
        self.assertEqual((proc.returncode, proc.stdout), (4, b"planted\n"), proc.stderr)
        self.assertFalse(status.is_symlink())
        self.assertEqual(json.loads(status.read_text())["agent_exit_code"], 4)
        self.assertIn(f"agent-sandbox: warning: cannot append to ledger {ledger}: it is a symlink (refused)\n",
                      proc.stderr.decode())
        self.assertVictimsIntact()
        self.assertEqual(sorted(p.name for p in self.ws.iterdir()), ["ledger.jsonl", "status.json"])

    def test_hardlinks_planted_where_the_launcher_writes_are_never_written_through(self):
        capture, ledger = self.ws / "capture.log", self.ws / "ledger.jsonl"
        os.link(self.victims["capture"], capture)
        os.link(self.victims["ledger-link"], ledger)
        proc = self.seat.run("--id", "hostile-links", "--capture-log", str(capture), "--ledger", str(ledger), "--",
                             "bash", "-c", "echo agent-output; exit 6")
        self.assertEqual((proc.returncode, proc.stdout), (6, f"{capture}\n".encode()), proc.stderr)
        self.assertEqual(capture.read_text(), "agent-output\n")
        self.assertEqual(os.stat(capture).st_nlink, 1)
        self.assertIn(f"agent-sandbox: warning: cannot append to ledger {ledger}: it has 2 hard links (refused)\n",
                      proc.stderr.decode())
        self.assertVictimsIntact()

    def test_a_ledger_of_someone_else_is_not_appended_to(self):
        ledger = self.ws / "ledger.jsonl"
        ledger.write_text("")
        os.chown(ledger, AGENT_UID, AGENT_UID)
        proc = self.seat.run("--ledger", str(ledger), "--", "true")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"cannot append to ledger {ledger}: it is owned by uid {AGENT_UID}, not by the launcher's uid 0 "
                      "(refused)\n", proc.stderr.decode())
        self.assertEqual(ledger.read_text(), "")


class SessionMarker(SeatTest):
    def test_every_container_carries_the_marker_runtime_sessions_too(self):
        home = self.seat.dir / "home"
        (home / ".codex").mkdir(parents=True)
        (home / ".codex" / "auth.json").write_text("{}")
        for more in ((), ("--runtime", "codex")):
            with self.subTest(more=more):
                proc = self.seat.run("--id", "hostile-marker", *more, "--", "bash", "-c", "echo $AGENT_SANDBOX_SESSION",
                                     env=self.seat.env(HOME=str(home)))
                self.assertEqual((proc.returncode, proc.stdout), (0, b"hostile-marker\n"), proc.stderr)


class GcOddLabels(SeatTest):
    """Anyone who can create a container can label it: gc skips what it cannot judge, with a warning."""

    def test_gc_skips_containers_with_odd_labels(self):
        boot = pathlib.Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        odd = {"hostile-gc-nan": "not-a-pid", "hostile-gc-huge": "99999999999", "hostile-gc-partial": "12abc"}
        for name, pid in odd.items():
            podman("create", "--name", name, "--label", "agent-sandbox.session=" + name, "--label",
                   "agent-sandbox.launcher-pid=" + pid, "--label", "agent-sandbox.boot-id=" + boot, "--label",
                   "agent-sandbox.started=1", "--network", "none", IMAGE, "true")
            self.addCleanup(podman, "rm", "-f", name, check=False)
        gc = self.seat.run("gc", "--json")
        self.assertEqual(gc.returncode, 0, gc.stderr)
        out = json.loads(gc.stdout)
        skipped = out["skipped"]
        stderr = gc.stderr.decode()
        for name, pid in odd.items():
            why = (f"label agent-sandbox.launcher-pid is {pid}, past any pid" if pid.isdigit()
                   else f"label agent-sandbox.launcher-pid is '{pid}', not a number")
            self.assertTrue(any(line.endswith(f"(session '{name}'): {why}") for line in skipped), (name, skipped))
            self.assertIn(f"(session '{name}'): {why}\n", stderr)
            # Kept: never judged. (Not asserted through podman afterwards: a launcher built before this
            # rule, running on the same shared service, may judge it meanwhile.)
            self.assertFalse(any(f"(session {name})" in line for line in out["removed"]), out["removed"])
        ps = self.seat.run("ps", "--json")
        self.assertEqual(ps.returncode, 0, ps.stderr)


class RootCaller(GitSeat):
    """A root caller's agent runs as 1000: a workspace or git dir it cannot use is refused before start."""

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            unavailable(self, "the root caller's case")

    def test_a_workspace_the_agent_cannot_write_is_refused(self):
        ws = self.seat.workspaces / "roots"
        ws.mkdir()
        proc, record = self.seat.status("--id", "hostile-rootws", "--workspace", str(ws), "--", "touch", "ran")
        self.assertLauncherError(proc, record, "workspace_rejected",
                                 f"workspace '{ws}' is not writable by the container user (owner 0:0, mode 0755); the "
                                 f"agent runs as 1000:1000: chown -R 1000:1000 '{ws}' (or make it writable for that "
                                 "user); nothing was started")
        self.assertTrue(record["container_removed"])
        self.assertFalse((ws / "ran").exists())
        self.assertNoContainer("hostile-rootws")

    def test_a_mirror_under_root_is_refused_with_the_remedy(self):
        home = pathlib.Path(tempfile.mkdtemp(prefix="asbx-hostile-", dir="/root"))
        self.addCleanup(shutil.rmtree, home, True)
        git_root = home / "git-common"
        git_root.mkdir()
        repo = git_root / "r"
        repo.mkdir()
        git("init", "-q", "-b", "main", cwd=repo)
        git("commit", "-q", "--allow-empty", "-m", "x", cwd=repo)
        ws = self.seat.workspaces / "under-root"
        git("worktree", "add", "-q", str(ws), cwd=repo)
        chown_tree(repo)
        chown_tree(ws)
        self.seat.write(self.seat.config_file.read_text().replace(f'git_roots = ["{self.root}"]', f'git_roots = ["{git_root}"]'))
        proc, record = self.seat.status("--id", "hostile-rootgit", "--workspace", str(ws), "--git-mirror",
                                        str(repo / ".git"), "--", "touch", "ran")
        self.assertLauncherError(proc, record, "git_unmountable",
                                 f"git dir '{repo}/.git/config' cannot be reached inside the container: '/root' is owner 0:0, "
                                 "mode 0700 there; the agent runs as 1000:1000: keep the mirror where that user can "
                                 "reach it (outside /root, e.g. git_roots = [\"/srv/agent-sandbox/git-common\"]) and "
                                 "owned by it (chown -R 1000:1000 on the mirror); nothing was started")
        self.assertFalse((ws / "ran").exists())
        self.assertNoContainer("hostile-rootgit")
