"""`agent-sandbox kube`: the printed manifest is valid Kubernetes (schema-checked), creates nothing,
and, played with podman's own `kube play`, gives the same session as the launcher: the same probes
run inside both, compared row by row; every difference is a gap docs/KUBERNETES.md documents."""
import json
import os
import subprocess
import sys
import time
import unittest

import yaml

from harness import CODES, ROOT, SeatTest, podman, session_containers, sha256, unavailable

AGENT_UID = 1000  # rootful, caller root: the agent runs as 1000:1000
MARKER = "asbx-kube-MARKER-51c7"  # the credential's content: never in a manifest
VALIDATOR = ROOT / "scripts" / "kube-validator.sh"
SESSION = ["--memory", "1g", "--cpus", "1.5", "--pids", "256", "--cpu-shares", "512", "--timeout", "120s"]

# Prints one "row<TAB>value" line per fact into $1 (the workspace), then commits in the repository
# `repo/` inside it (the workspace itself is no clone: `kube` refuses a plain clone, docs/MOUNTS.md).
# The same script runs as the launcher's session and as the played Pod's agent container. It does
# not start with a newline: podman 4.3's `kube play` re-encodes such a string into YAML it then
# cannot read (docs/KUBERNETES.md, runner quirks).
PROBE = r'''set -u
out=$1 who=$2
cg=/sys/fs/cgroup
row() { printf '%s\t%s\n' "$1" "$2" >> "$out"; }
: > "$out"
row uid "$(id -u):$(id -g)"
for k in CapEff CapPrm CapBnd NoNewPrivs Seccomp; do row "$k" "$(awk -v k="$k:" '$1 == k {print $2}' /proc/self/status)"; done
if touch /probe-root 2>/dev/null; then row root writable; else row root read-only; fi
row memory "$(cat $cg/memory/memory.limit_in_bytes)"
row memory+swap "$(cat $cg/memory/memory.memsw.limit_in_bytes)"
row cpu "$(cat $cg/cpu/cpu.cfs_quota_us)/$(cat $cg/cpu/cpu.cfs_period_us)"
row cpu-shares "$(cat $cg/cpu/cpu.shares)"
row pids "$(cat $cg/pids/pids.max)"
row nofile "$(ulimit -Sn):$(ulimit -Hn)"
row nproc "$(ulimit -Su):$(ulimit -Hu)"
row pid1 "$(cat /proc/1/comm)"
row hostname "$(hostname)"
row interfaces "$(awk 'NR > 2 {sub(":", "", $1); print $1}' /proc/net/dev | sort | tr '\n' ' ')"
row home "$HOME $(stat -c '%a %u' "$HOME")"
row tmp "$(stat -c '%a %u' /tmp)"
row path "$PATH"
row session-env "${AGENT_SANDBOX_SESSION:+set}"
# Mount points (not the runtime's /proc, /dev, /sys and /etc plumbing): read-only or not, fs type.
awk '{ for (i = 7; $i != "-"; i++); split($6, o, ","); print $5, o[1], $(i + 1) }' /proc/self/mountinfo |
  grep -Ev '^/(proc|dev|sys)(/| )|^/etc/(hosts|hostname|resolv.conf) |^/run/.containerenv ' | sort |
  while read -r point mode fs; do row "mount $point" "$mode $fs"; done
c=$HOME/.codex/auth.json
row credential "$(stat -c '%a %u' "$c") $(sha256sum < "$c" | cut -c1-64)"
row credential-dir "$(stat -c '%a %u' "${c%/*}")"
if echo tampered >> "$c"; then row credential-copy writable; else row credential-copy read-only; fi
row workdir "$PWD"
cd repo && echo "note from $who" > "note-$who.txt"
if git add "note-$who.txt" && git -c user.email=agent@sandbox -c user.name=agent commit -q -m "parity $who"; then
  row git-commit ok
else
  row git-commit failed
fi
'''

# Rows allowed to differ, each with the gap in docs/KUBERNETES.md that explains it.
GAPS = {
    "memory+swap": "agent-sandbox/memory-swap",
    "cpu-shares": "agent-sandbox/cpu-shares",
    "pids": "agent-sandbox/pids-limit",
    "nofile": "agent-sandbox/nofile",
    "nproc": "agent-sandbox/nproc",
    "pid1": "agent-sandbox/init",
    "mount /run/podman-init": "agent-sandbox/init",
    "home": "agent-sandbox/mount-options.VOLUME",
    "tmp": "agent-sandbox/mount-options.VOLUME",
    "credential-dir": "agent-sandbox/mount-options.VOLUME",
    "mount /tmp": "runner: podman-emptydir",
    "mount /sandbox/home": "runner: podman-emptydir",
    "interfaces": "tripwire0",  # the launcher's catch-all device: a Pod has none (not carried)
}


def git(*args, cwd):
    return subprocess.run(["git", "-c", "safe.directory=*", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout


def rows(text):
    return dict(line.split("\t", 1) for line in text.splitlines())


class KubeTest(SeatTest):
    def setUp(self):
        super().setUp()
        self.tag = "%d-%d" % (os.getpid(), int(time.time() * 1000) % 100000)
        self.workspace = self.seat.workspaces / "proj"
        self.repo = self.workspace / "repo"
        self.repo.mkdir(parents=True)
        git("init", "-q", "-b", "main", cwd=self.repo)
        (self.repo / "README").write_text("seed\n")
        git("add", "README", cwd=self.repo)
        git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "seed", cwd=self.repo)
        subprocess.run(["chown", "-R", "%d:%d" % (AGENT_UID, AGENT_UID), str(self.workspace)], check=True)
        self.credential = self.seat.dir / "auth.json"
        self.credential.write_text(json.dumps({"refresh_token": MARKER}))
        self.credential.chmod(0o600)
        self.credential_sha = sha256(self.credential.read_bytes())

    def session_args(self, session):
        return ["--id", session, "--workspace", str(self.workspace), "--runtime", "codex",
                "--credential", str(self.credential), *SESSION]

    def kube(self, session, *command):
        proc = self.seat.run("kube", *self.session_args(session), "--", *command)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        self.assertEqual(proc.stderr, b"")
        return proc.stdout.decode()

    def validate(self, manifest):
        """The schema check: scripts/kube-validator.sh (kubernetes-models + tsc, from npm)."""
        if subprocess.run(["node", "--version"], capture_output=True).returncode != 0:
            unavailable(self, "node is not installed (scripts/setup.sh installs npm)")
        if subprocess.run([str(VALIDATOR), "install"], capture_output=True).returncode != 0:
            unavailable(self, "scripts/kube-validator.sh install failed (npm registry?)")
        path = self.seat.dir / "manifest.json"
        path.write_text(json.dumps(list(yaml.safe_load_all(manifest))))
        return subprocess.run([str(VALIDATOR), "check", str(path)], capture_output=True, text=True)


class Manifest(KubeTest):
    def test_prints_a_valid_pod_and_policy_and_creates_nothing(self):
        session = "kube-valid-" + self.tag
        manifest = self.kube(session, "bash", "-c", "true")
        docs = list(yaml.safe_load_all(manifest))
        self.assertEqual([d["kind"] for d in docs], ["Pod", "NetworkPolicy"])
        self.assertEqual(docs[0]["spec"]["containers"][0]["name"], "agent")
        self.assertNotIn(MARKER, manifest)
        result = self.validate(manifest)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "2 document(s) valid: Pod, NetworkPolicy")
        self.assertNoContainer(session)
        self.assertFalse((self.seat.dir / "run" / session).exists(), "kube made a session dir")
        self.assertFalse(self.seat.ledger.exists(), "kube wrote a ledger line")

    def test_the_validator_refuses_an_unknown_field_and_a_bad_value(self):
        manifest = yaml.safe_load_all(self.kube("kube-invalid-" + self.tag, "true"))
        pod = next(manifest)
        pod["spec"]["containers"][0]["securityContext"]["runAsUsr"] = 0
        pod["spec"]["restartPolicy"] = "Sometimes"
        result = self.validate(yaml.safe_dump(pod))
        self.assertEqual(result.returncode, 1)
        self.assertIn("restartPolicy must be equal to one of the allowed values", result.stderr)
        self.assertIn("'\"runAsUsr\"' does not exist in type 'ISecurityContext'", result.stderr)

    def test_run_options_and_seat_namespaces_are_refused(self):
        for args, message in [
            (["--status-file", "/dev/null"], "kube: --status-file does not apply: kube prints a manifest and runs nothing"),
            (["--dry-run"], "kube: --dry-run does not apply: kube prints a manifest and runs nothing"),
            (["--persist"], "kube: --persist does not apply: kube prints a manifest and runs nothing"),
            (["--network", "ns:/run/netns/x"], "kube: --network ns:/run/netns/x has no Pod form "
                                               "(a Pod cannot join a network namespace of the seat); use none"),
            (["--id", "Upper_1"], "kube: 'asbx-Upper_1' is not a Kubernetes name (at most 63 lowercase letters, "
                                  "digits and '-'); use a shorter --id of lowercase letters, digits and '-'"),
        ]:
            with self.subTest(args=args):
                proc = self.seat.run("kube", *args, "--", "true")
                self.assertEqual(proc.returncode, CODES["usage"])
                self.assertEqual(proc.stdout, b"")
                self.assertEqual(proc.stderr.decode(), "agent-sandbox: " + message + "\n")


class Parity(KubeTest):
    """One session run twice: by the launcher, and as the printed Pod played by `podman kube play`."""

    def run_launcher(self, session):
        proc = self.seat.run(*self.session_args(session), "--", "bash", "-c", PROBE, "probe",
                             "/sandbox/workspaces/proj/.probe-launcher", "launcher")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        self.assertNoContainer(session)
        return rows((self.workspace / ".probe-launcher").read_text())

    def play(self, session):
        manifest = self.kube(session, "bash", "-c", PROBE, "probe", "/sandbox/workspaces/proj/.probe-kube", "kube")
        result = self.validate(manifest)
        self.assertEqual(result.returncode, 0, result.stderr)
        pod = next(yaml.safe_load_all(manifest))
        path = self.seat.dir / "pod.yaml"
        path.write_text(manifest)
        secret = pod["spec"]["volumes"][-1]["secret"]["secretName"]
        self.create_secret(secret)
        self.addCleanup(self.tear_down, path, pod["metadata"]["name"], secret)
        played = podman("kube", "play", "--network", "none", str(path), check=False)
        self.assertEqual(played.returncode, 0, played.stderr)
        agent = pod["metadata"]["name"] + "-agent"
        waited = podman("wait", agent, check=False)
        self.assertEqual((waited.returncode, waited.stdout.strip()), (0, "0"), waited.stderr)
        return rows((self.workspace / ".probe-kube").read_text())

    def create_secret(self, name):
        """What `kubectl create secret generic NAME --from-file=auth.json=PATH` is on a cluster.
        podman 4.3 reads a Secret document and writes each data value as is (no base64 decoding)."""
        doc = self.seat.dir / "secret.json"
        doc.write_text(json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
                                   "data": {"auth.json": self.credential.read_text()}}))
        doc.chmod(0o600)
        podman("secret", "create", name, str(doc))
        doc.unlink()

    def tear_down(self, path, pod, secret):
        podman("kube", "down", str(path), check=False)
        podman("pod", "rm", "-f", pod, check=False)
        podman("volume", "rm", "-f", secret, check=False)  # podman 4.3 keeps a secret volume by that name
        podman("secret", "rm", secret, check=False)
        self.assertEqual(podman("pod", "ps", "-q", "--filter", "name=" + pod).stdout.strip(), "")
        self.assertEqual(podman("ps", "-aq", "--filter", "name=" + pod).stdout.strip(), "")
        volumes = podman("volume", "ls", "--format", "{{.Name}}").stdout.split()
        self.assertEqual([v for v in volumes if v.startswith(pod)], [])
        self.assertNotIn(secret, podman("secret", "ls", "--format", "{{.Name}}").stdout.split())

    def test_played_pod_is_the_launchers_session(self):
        if podman("image", "exists", "localhost/agent-sandbox:latest", check=False).returncode != 0:
            unavailable(self, "the image is not built (scripts/setup.sh)")
        launcher = self.run_launcher("kube-parity-l-" + self.tag)
        kube = self.play("kube-parity-k-" + self.tag)
        table, undocumented = [], []
        for row in sorted(set(launcher) | set(kube)):
            a, b = launcher.get(row, "(none)"), kube.get(row, "(none)")
            table.append((row, a, b, "same" if a == b else GAPS.get(row, "UNDOCUMENTED")))
            if a != b and row not in GAPS:
                undocumented.append(row)
        print("\n" + "\n".join("| %s | %s | %s | %s |" % r for r in table), file=sys.stderr)
        self.assertEqual(undocumented, [], "differences no documented gap explains")
        docs = (ROOT / "docs" / "KUBERNETES.md").read_text()
        for gap in set(GAPS.values()):
            self.assertTrue("`%s`" % gap in docs, "gap %s is not in docs/KUBERNETES.md" % gap)
        # What both must show, not only agree on.
        for side in (launcher, kube):
            self.assertEqual(side["uid"], "1000:1000")
            self.assertEqual((side["CapEff"], side["CapBnd"], side["NoNewPrivs"]), ("0000000000000000",) * 2 + ("1",))
            self.assertEqual(side["Seccomp"], "2")
            self.assertEqual(side["root"], "read-only")
            self.assertEqual(side["mount /"].split()[0], "ro")
            self.assertEqual(side["memory"], str(1 << 30))
            self.assertEqual(side["cpu"], "150000/100000")
            self.assertEqual(side["interfaces"], "lo tripwire0 " if side is launcher else "lo ")
            self.assertEqual(side["mount /sandbox/workspaces/proj"].split()[0], "rw")
            self.assertEqual(side["credential"], "600 1000 " + self.credential_sha)
            self.assertEqual(side["credential-copy"], "writable")
            self.assertEqual(side["workdir"], "/sandbox/workspaces/proj")
            self.assertEqual(side["git-commit"], "ok")
        self.assertEqual(sha256(self.credential.read_bytes()), self.credential_sha, "host credential modified")
        self.assertEqual(git("log", "--format=%s", cwd=self.repo).split("\n")[:2], ["parity kube", "parity launcher"])
        self.assertEqual(git("status", "--porcelain", cwd=self.repo), "")


if __name__ == "__main__":
    unittest.main()
