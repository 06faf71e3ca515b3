"""A warm member's stub (docs/DECISIONS.md "The member started ahead: the stub waits on a fifo"):
the fill starts each member, whose one process under podman's init is the stub, the image's shell
blocked opening its fifo; nothing of a session runs in it until a claim has bound the session and
written a line there. The fifo, which the agent can see, leads nowhere once the stub has gone on."""
import json
import pathlib

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
