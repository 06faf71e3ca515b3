"""scripts/denial-proofs.sh: the exact mount allowlist and the denials, asserted from inside a real session."""
import subprocess

from harness import BUILD, ROOT, SeatTest


class DenialProofs(SeatTest):
    def test_denial_proofs_hold(self):
        proc = subprocess.run(["bash", str(ROOT / "scripts" / "denial-proofs.sh")], capture_output=True, text=True,
                              timeout=300, env=dict(self.seat.env(), ASBX_BUILD=str(BUILD)))
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertNotIn("FAIL", proc.stdout)
        self.assertRegex(proc.stdout.splitlines()[-1], r"^denial-proofs: (\d+)/\1 checks hold$")
