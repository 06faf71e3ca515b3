"""The seat image's id is asked of podman as soon as the seat config is read, beside the plan
(launcher/pool/take.h `ask_image_id`), on a thread nothing waits for: a launcher that fails in its
plan, or goes cold, never waits for that answer, even from a service that never gives one."""
import socket
import threading

from harness import CODES, SeatTest, UnixRelay, session_containers


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
