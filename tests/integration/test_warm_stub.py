"""A warm member's stub (docs/DECISIONS.md "The member started ahead: the stub waits on a fifo"):
the fill starts each member, whose one process under podman's init is the stub, the image's shell
blocked opening its fifo; nothing of a session runs in it until a claim has bound the session and
written a line there. The fifo, which the agent can see, leads nowhere once the stub has gone on."""
import json
import os
import pathlib
import signal
import time

from test_warm_path import WarmSeat, members

STUB = ["/bin/sh", "-c", "read -r go < /sandbox/.claim/go && exec /bin/sh /sandbox/.claim/spec"]


def children(pid):
    return [int(c) for c in pathlib.Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def argv(pid):
    return pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


class Stub(WarmSeat):
    def one_member(self):
        self.drain()  # a seat the harness filled (ASBX_TEST_POOL) starts empty here
        self.seat.config_file.write_text("pool_size = 1\n" + self.base)
        self.fill()
        (cid, m), = members(self.seat).items()
        ready = json.loads((self.seat.dir / "run" / m["Labels"]["agent-sandbox.session"] / "ready").read_text())
        return cid, m, ready["init_pid"]

    def test_a_ready_member_runs_its_stub_alone_blocked_on_the_fifo(self):
        cid, m, init = self.one_member()
        self.assertEqual(m["State"], "running")
        stub, = children(init)  # podman's init, and under it the stub alone
        self.assertEqual(argv(stub), STUB)
        self.assertEqual(children(stub), [])
        self.assertEqual(pathlib.Path(f"/proc/{stub}/stat").read_text().rsplit(")", 1)[1].split()[0], "S")
        fifo = self.seat.dir / "run" / m["Labels"]["agent-sandbox.session"] / "claim" / "go"
        st = fifo.lstat()  # the agent's host ids (1000, or its range's), as the stub's own
        ids = {l.split(":")[0]: int(l.split()[1]) for l in pathlib.Path(f"/proc/{stub}/status").read_text().splitlines()
               if l.startswith(("Uid:", "Gid:"))}
        self.assertEqual((oct(st.st_mode), st.st_uid, st.st_gid), ("0o10600", ids["Uid"], ids["Gid"]))

    def test_the_agent_runs_after_the_line_and_its_fifo_leads_nowhere(self):
        cid, _, init = self.one_member()
        proc, rec = self.seat.status("--id", "stub-fifo", "--", "sh", "-c",
                                     "dd if=/dev/zero of=/sandbox/.claim/go oflag=nonblock count=1 2>&1; "
                                     "echo rc=$?")
        self.assertEqual((proc.returncode, rec["path"], rec["container_id"]), (0, "warm", cid), proc.stderr)
        self.assertEqual(proc.stdout.decode().splitlines(), ["dd: failed to open '/sandbox/.claim/go': No such device or address", "rc=1"])


class StubEnded(WarmSeat):
    """Found by a hostile pass (stop 53): a session's refill inherited its caller's umask, 077 made
    the member's claim dir 0700, the stub could not read its fifo and ended, and its keeper lived on
    holding a range slot of the seat; no fill removed it."""

    def test_a_refill_spawned_by_a_caller_with_umask_077_makes_members_a_session_runs_on(self):
        self.drain()
        self.seat.config_file.write_text("pool_size = 1\n" + self.base)
        self.fill()
        first = self.seat.run("--", "true", preexec_fn=lambda: os.umask(0o077),
                              env=self.seat.env(CALLER_TOKEN="sk-caller-only"))
        self.assertEqual(first.returncode, 0, first.stderr)
        self.ready(1)  # the refill's member: its stub waits
        (cid, m), = [(c, m) for c, m in members(self.seat).items() if m["State"] == "running"]
        claim = self.seat.dir / "run" / m["Labels"]["agent-sandbox.session"] / "claim"
        self.assertEqual(oct(claim.stat().st_mode & 0o777), "0o755")
        # the refill, and so the keeper it left, has only the variables a fill reads
        keeper = int(m["Labels"]["agent-sandbox.launcher-pid"])
        self.assertNotIn(b"CALLER_TOKEN", pathlib.Path(f"/proc/{keeper}/environ").read_bytes())
        proc, rec = self.seat.status("--id", "after-077", "--", "echo", "ran")
        self.assertEqual((proc.returncode, rec["path"], rec["container_id"], proc.stdout), (0, "warm", cid, b"ran\n"),
                         proc.stderr)

    def test_a_member_whose_stub_ended_is_removed_by_the_next_fill_with_its_keeper(self):
        self.drain()
        self.seat.config_file.write_text("pool_size = 1\n" + self.base)
        self.fill()
        (cid, m), = members(self.seat).items()
        keeper = int(m["Labels"]["agent-sandbox.launcher-pid"])
        init = json.loads((self.seat.dir / "run" / m["Labels"]["agent-sandbox.session"] / "ready").read_text())["init_pid"]
        stub, = children(init)
        os.kill(stub, signal.SIGKILL)  # podman's init ends with it: the container exits
        until = time.monotonic() + 30
        while members(self.seat)[cid]["State"] != "exited":  # "stopped" first, until podman's cleanup is done
            self.assertLess(time.monotonic(), until, "the member has not exited")
            time.sleep(0.2)
        proc = self.fill()
        self.assertIn(f"pool: removed member {cid[:12]}: its stub has ended (podman says exited)\n", proc.stderr.decode())
        self.assertNotIn(cid, members(self.seat))
        self.assertEqual(len(members(self.seat)), 1)  # and one made in its place
        until = time.monotonic() + 10  # the keeper ended with its member (a zombie at most)
        while os.path.exists(f"/proc/{keeper}") and pathlib.Path(f"/proc/{keeper}/stat").read_text().split()[2] not in "ZX":
            self.assertLess(time.monotonic(), until, f"keeper {keeper} lives on")
            time.sleep(0.1)
