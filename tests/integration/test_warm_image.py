"""The seat image's id is asked of podman as soon as the seat config is read, beside the plan
(launcher/pool/take.h `ask_image_id`), on a thread nothing waits for: a launcher that fails in its
plan, or goes cold, never waits for that answer, even from a service that never gives one. A fill
asks it once and makes each member from that id: a tag moved meanwhile changes nothing a ready file
says (docs/DECISIONS.md "Refill")."""
import json
import re
import socket
import subprocess
import threading
import uuid

from harness import CODES, IMAGE, LAUNCHER, SeatTest, UnixRelay, podman, session_containers
from test_warm_faults import PausingRelay
from test_warm_path import WarmSeat, members


class SilentService(UnixRelay):
    """Accepts, reads what it is sent, and never answers."""

    def __init__(self, path):
        self.asked = threading.Event()
        self.held = []
        super().__init__(path)

    def relay(self, conn):
        self.held.append(conn)
        try:
            if conn.recv(65536):
                self.asked.set()
        except OSError:
            pass

    def close(self):
        super().close()
        for conn in self.held:
            conn.close()


class AskedBesideThePlan(SeatTest):
    def test_a_usage_error_in_the_plan_does_not_wait_for_a_silent_service(self):
        service = SilentService(self.seat.dir / "silent.sock")
        self.addCleanup(service.close)
        text = "".join(l for l in self.seat.config_file.read_text().splitlines(True)
                       if not l.startswith(("socket = ", "pool_size", "pool_tty_size")))
        self.seat.config_file.write_text(f'pool_size = 1\nsocket = "{service.path}"\n' + text)
        proc = self.seat.run("--id", "img-usage", "--memory", "lots", "--", "true", timeout=60)
        self.assertEqual((proc.returncode, proc.stdout, proc.stderr),
                         (CODES["usage"], b"", b"agent-sandbox: --memory: 'lots' is not a number\n"))
        self.assertEqual(session_containers("img-usage", settle=0), [])


class MadeFromTheId(WarmSeat):
    def test_a_tag_moved_while_a_member_is_made_leaves_it_the_image_its_ready_file_names(self):
        tag = f"localhost/asbx-warm-{uuid.uuid4().hex[:8]}:latest"
        podman("tag", IMAGE, tag)
        relay = PausingRelay(self.seat.dir / "held.sock", re.compile(rb"POST \S*/containers/create"))
        self.addCleanup(relay.close)
        self.addCleanup(lambda: podman("rmi", "-f", tag, check=False))  # after its members (the drain, next)
        self.addCleanup(self.drain)  # through the relay, which holds nothing once `go` is set
        self.addCleanup(relay.go.set)
        self.base = "".join(l for l in self.base.splitlines(True) if not l.startswith("socket = "))
        self.base = f'socket = "{relay.path}"\n' + self.base.replace(f'image = "{IMAGE}"', f'image = "{tag}"')
        self.seat.config_file.write_text("pool_size = 1\n" + self.base)
        fill = subprocess.Popen([str(LAUNCHER), "pool", "fill"], env=self.seat.env(), stderr=subprocess.PIPE)
        self.assertTrue(relay.arrived.wait(60), "the fill never created a member")
        asked = podman("image", "inspect", "--format", "{{.Id}}", tag).stdout.strip()
        cid = podman("create", tag, "true").stdout.strip()
        podman("commit", "-q", cid, tag)  # the tag now names another image
        podman("rm", cid)
        relay.go.set()
        _, err = fill.communicate(timeout=120)
        self.assertEqual(fill.returncode, 0, err)
        made = members(self.seat)
        self.assertEqual(len(made), 1, err)
        (mid, m), = made.items()
        ready = [json.loads(f.read_text()) for f in (self.seat.dir / "run").glob("pool-*/ready")]
        self.assertEqual([r["image"] for r in ready if r["id"] == mid], [asked])
        self.assertEqual(podman("inspect", "--format", "{{.Image}}", mid).stdout.strip(), asked)
