"""The Debian package (scripts/package.sh) and seats provisioned from it (seat-host/provision-seat.sh).

The .deb: lintian without errors (each warning explained in docs/INSTALL.md), the files and Depends
it must carry, --version of every executable. The seats rd-1/rd-2 (scripts/test-prep.d/40-remote-seats.sh;
ASBX_REMOTE_PREFIX=P for seats P-1, P-2): installed from that package, `man` works there, and
`agent-sandbox doctor --registry` checks them over ssh.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import CODES, LAUNCHER, ROOT, unavailable

STATE = pathlib.Path(os.environ.get("ASBX_SEAT_STATE", "/var/lib/agent-sandbox/seats"))
PREFIX = os.environ.get("ASBX_REMOTE_PREFIX", "rd")
REGISTRY = STATE / f"registry-{PREFIX}.toml"
SEATS = R1, R2 = f"{PREFIX}-1", f"{PREFIX}-2"
SSH = ROOT / "scripts" / "seat-host" / "ssh.sh"
VERSION = re.search(r"project\(agent-sandbox VERSION (\S+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
DEB_VERSION = re.match(r"agent-sandbox \((\S+)\)", (ROOT / "packaging" / "changelog").read_text()).group(1)
EXECUTABLES = ("agent-sandbox", "sandbox-run", "agent-sandbox-unsafe")
PY_LIB = "/usr/lib/python3/dist-packages/agent_sandbox"  # the caller library (docs/PYTHON.md)
_DEB = []


def deb():
    """The .deb: $ASBX_DEB, else what scripts/package.sh builds (reused when nothing changed)."""
    if not _DEB:
        given = os.environ.get("ASBX_DEB")
        if not given:
            proc = subprocess.run([str(ROOT / "scripts" / "package.sh")], capture_output=True, text=True, timeout=3600)
            assert proc.returncode == 0, proc.stderr[-3000:]
            given = proc.stdout.strip().splitlines()[-1]
        _DEB.append(pathlib.Path(given))
    return _DEB[0]


def on_seat(seat, command):
    return subprocess.run([str(SSH), seat, command], capture_output=True, text=True, timeout=120)


class PackageTest(unittest.TestCase):
    def test_file_name_and_control_fields(self):
        path = deb()
        self.assertEqual(path.name, f"agent-sandbox_{DEB_VERSION}_amd64.deb")
        field = lambda name: subprocess.run(["dpkg-deb", "-f", str(path), name], capture_output=True, text=True,
                                            check=True).stdout.strip()
        self.assertEqual(field("Version"), DEB_VERSION)
        self.assertTrue(DEB_VERSION.startswith(VERSION + "-"), "packaging/changelog names another version")
        depends = {d.strip().split(" ")[0] for d in field("Depends").split(",")}
        # libssh, cpp-httplib and toml++ have runtime packages; nlohmann-json and CLI11 are header-only,
        # doctest is for the unit tests only.
        for want in ("libssh-4", "libcpp-httplib0.11", "libtomlplusplus3", "libstdc++6", "libc6",
                     "podman", "uidmap", "slirp4netns", "systemd"):
            self.assertIn(want, depends)
        self.assertEqual(field("Section"), "admin")
        self.assertIn("python3", [r.strip() for r in field("Recommends").split(",")])  # the caller library only

    def test_contents(self):
        listing = subprocess.run(["dpkg-deb", "-c", str(deb())], capture_output=True, text=True, check=True).stdout
        files = {line.split()[5].lstrip(".") for line in listing.splitlines()}
        modes = {line.split()[5].lstrip("."): line.split()[0] for line in listing.splitlines()}
        want = {f"/usr/bin/{e}" for e in EXECUTABLES} | {
            "/usr/share/agent-sandbox/credtable.toml",
            "/usr/share/agent-sandbox/shims/cdx", "/usr/share/agent-sandbox/shims/cld",
            "/usr/lib/systemd/user/agent-sandbox-gc.service", "/usr/lib/systemd/user/agent-sandbox-gc.timer",
            "/usr/share/man/man1/agent-sandbox.1.gz", "/usr/share/man/man1/sandbox-run.1.gz",
            "/usr/share/man/man1/agent-sandbox-unsafe.1.gz", "/usr/share/man/man5/seat.toml.5.gz",
            "/usr/share/bash-completion/completions/agent-sandbox", "/usr/share/bash-completion/completions/sandbox-run",
            "/usr/share/bash-completion/completions/agent-sandbox-unsafe",
            "/usr/share/doc/agent-sandbox/copyright", "/usr/share/doc/agent-sandbox/changelog.Debian.gz",
            "/usr/libexec/agent-sandbox/runsc-ptrace", "/usr/libexec/agent-sandbox/runsc-kvm",
            "/usr/libexec/agent-sandbox/gvisor-compat.so", "/usr/libexec/agent-sandbox/gvisor-ld.so.preload",
            # a rootful seat's gVisor service (test_package_gvisor runs it on a provisioned seat)
            "/usr/share/agent-sandbox/containers-runsc.conf", "/lib/systemd/system/agent-sandbox-runsc.socket",
            "/lib/systemd/system/agent-sandbox-runsc.service",
            "/etc/containers/containers.conf.d/50-agent-sandbox-runsc.conf"}
        library = {f"{PY_LIB}/{name}" for name in ("__init__.py", "__main__.py", "_table.py", "buildbox.py",
                                                    "capture.py", "errors.py", "git.py", "py.typed")}
        self.assertEqual(want - files, set())
        self.assertEqual({f for f in files if f.startswith(PY_LIB + "/") and not f.endswith("/")}, library)
        for f in library:
            self.assertEqual(modes[f], "-rw-r--r--", f)
        self.assertEqual([f for f in files if f.startswith("/usr/local") or "testroot" in f], [])
        for e in EXECUTABLES:
            self.assertEqual(modes[f"/usr/bin/{e}"], "-rwxr-xr-x")
        self.assertEqual(modes["/usr/share/agent-sandbox/credtable.toml"], "-rw-r--r--")
        conffiles = subprocess.run(["dpkg-deb", "--info", str(deb()), "conffiles"], capture_output=True, text=True,
                                   check=True).stdout
        self.assertEqual(conffiles, "/etc/containers/containers.conf.d/50-agent-sandbox-runsc.conf\n")
        self.assertEqual([f for f in files if f.startswith("/etc/") and not f.endswith("/")],
                         ["/etc/containers/containers.conf.d/50-agent-sandbox-runsc.conf"])
        for shim in ("cdx", "cld"):  # shipped, but not on PATH
            self.assertEqual(modes[f"/usr/share/agent-sandbox/shims/{shim}"], "-rwxr-xr-x")
            self.assertNotIn(f"/usr/bin/{shim}", files)

    def test_installed_files_work(self):
        """--version of every packaged executable; the gc unit runs the packaged agent-sandbox."""
        root = pathlib.Path(tempfile.mkdtemp(prefix="asbx-deb-"))
        self.addCleanup(shutil.rmtree, root, True)
        subprocess.run(["dpkg-deb", "-x", str(deb()), str(root)], check=True)
        for e in EXECUTABLES:
            out = subprocess.run([str(root / "usr" / "bin" / e), "--version"], capture_output=True, text=True)
            self.assertEqual((out.returncode, out.stdout), (0, f"{e} {VERSION}\n"))
        out = subprocess.run([str(LAUNCHER), "--version"], capture_output=True, text=True)
        self.assertEqual(out.stdout, f"agent-sandbox {VERSION}\n", "the build tree's launcher")
        unit = (root / "usr/lib/systemd/user/agent-sandbox-gc.service").read_text()
        self.assertIn("\nExecStart=/usr/bin/agent-sandbox gc\n", unit)
        for page in ("man1/agent-sandbox.1.gz", "man1/sandbox-run.1.gz", "man1/agent-sandbox-unsafe.1.gz",
                     "man5/seat.toml.5.gz"):
            out = subprocess.run(["man", "-l", str(root / "usr/share/man" / page)], capture_output=True, text=True,
                                 env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0"))
            self.assertEqual((out.returncode, out.stderr), (0, ""), page)

    def test_lintian_has_no_errors_and_every_warning_is_explained(self):
        if not shutil.which("lintian"):
            unavailable(self, "lintian is not installed (scripts/setup.sh installs it)")
        out = subprocess.run(["lintian", "--no-tag-display-limit", str(deb())], capture_output=True, text=True,
                             timeout=600)
        lines = out.stdout.splitlines()
        self.assertEqual([l for l in lines if l.startswith("E:")], [], out.stdout)
        explained = (ROOT / "docs" / "INSTALL.md").read_text()
        warnings = {l.split()[2] for l in lines if l.startswith("W:")}
        self.assertEqual({w for w in warnings if f"`{w}`" not in explained}, set(),
                         "lintian warnings not explained in docs/INSTALL.md:\n" + out.stdout)


class ProvisionedSeatTest(unittest.TestCase):
    def setUp(self):
        if not LAUNCHER.exists() or not REGISTRY.exists():
            unavailable(self, f"seats {R1}/{R2} not up ({REGISTRY}; scripts/test-prep.d/40-remote-seats.sh)")

    def test_seats_run_the_package(self):
        for seat in SEATS:
            out = on_seat(seat, "dpkg-query -W -f='${Version}' agent-sandbox; echo; command -v sandbox-run; "
                                "sandbox-run --version; systemctl --user is-enabled podman.socket agent-sandbox-gc.timer")
            self.assertEqual(out.stdout, f"{DEB_VERSION}\n/usr/bin/sandbox-run\nsandbox-run {VERSION}\nenabled\nenabled\n",
                             out.stderr)

    def test_man_pages_render_on_a_seat(self):
        out = on_seat(R1, "export LANG=C MANWIDTH=200; man agent-sandbox | head -n 5; man 5 seat.toml | grep -c host_key")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("agent-sandbox - run an AI coding agent in an ephemeral, locked-down podman container", out.stdout)
        self.assertGreater(int(out.stdout.strip().splitlines()[-1]), 0)

    def provision(self, *args):
        archive = subprocess.run([str(ROOT / "scripts" / "seat-host" / "image-archive.sh")], capture_output=True,
                                 text=True, check=True, timeout=1800).stdout.strip().splitlines()[-1]
        return subprocess.run([str(ROOT / "scripts" / "seat-host" / "provision-seat.sh"), "--ssh-config",
                               str(STATE / "ssh_config"), *args, R1, str(deb()), archive],
                              capture_output=True, text=True, timeout=1800)

    def test_provisioning_fails_when_the_seat_doctor_fails(self):
        conf = "~/.config/agent-sandbox/seat.toml"
        good = on_seat(R1, f"cat {conf}").stdout
        self.addCleanup(subprocess.run, [str(SSH), R1, f"cat >{conf}"], input=good, text=True, timeout=60)
        tmp = pathlib.Path(tempfile.mkdtemp(prefix="asbx-prov-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        bad = tmp / "seat.toml"
        bad.write_text('image = "localhost/no-such-image:latest"\nwaive_unenforced_limits = true\n')
        proc = self.provision("--seat-config", str(bad))
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("FAIL  image", proc.stderr)
        self.assertIn("localhost/no-such-image:latest is missing", proc.stderr)
        self.assertTrue(proc.stderr.endswith(
            f"[provision-seat.sh] error: {R1}: sandbox-run doctor failed (above); the seat is not ready\n"), proc.stderr)

    def test_provisioning_refuses_a_missing_seat_user_before_installing(self):
        before = on_seat(R1, "stat -c %Y /var/lib/agent-sandbox/package.sha256").stdout
        proc = self.provision("--user", "nosuchseat")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(proc.stderr, f"[provision-seat.sh] error: {R1}: no user nosuchseat (useradd -m nosuchseat && "
                                      "usermod --add-subuids 100000-165535 --add-subgids 100000-165535 nosuchseat)\n")
        self.assertEqual(on_seat(R1, "stat -c %Y /var/lib/agent-sandbox/package.sha256").stdout, before)

    def doctor(self, registry, *args):
        return subprocess.run([str(LAUNCHER), "doctor", "--registry", str(registry), *args], capture_output=True,
                              text=True, timeout=300)

    def test_doctor_registry_passes_on_provisioned_seats(self):
        out = self.doctor(REGISTRY)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        lines = out.stdout.splitlines()
        self.assertEqual([l.split()[:2] for l in lines[:2]], [["ok", R1], ["ok", R2]])
        self.assertIn(f"sandbox-run {VERSION}", lines[0])
        self.assertRegex(lines[0], r"; \d+/\d+ sessions running$")
        self.assertEqual(lines[-1], "2 of 2 seats ready")
        report = json.loads(self.doctor(REGISTRY, "--json").stdout)
        self.assertEqual((report["ok"], [s["name"] for s in report["seats"]]), (True, [R1, R2]))
        self.assertEqual([c["name"] for c in report["seats"][0]["checks"]],
                         ["reachable", "host_key", "version", "seat_doctor", "image", "limits",
                          "disk", "disk",  # the seat's workspace root and git root: how the budget is kept
                          "capacity"])

    def test_doctor_registry_names_the_broken_seat_and_the_remedy(self):
        tmp = pathlib.Path(tempfile.mkdtemp(prefix="asbx-doctor-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        text = REGISTRY.read_text()
        keys = re.findall(r'(?m)^host_key = (".*")$', text)
        blocks = text.split("[[host]]")
        blocks[1] = blocks[1].replace(keys[0], keys[1])  # R1 with R2's key
        reg = tmp / "registry.toml"
        reg.write_text("[[host]]".join(blocks))
        out = self.doctor(reg)
        self.assertEqual(out.returncode, CODES["seat_preflight"], out.stdout + out.stderr)
        lines = out.stdout.splitlines()
        self.assertTrue(lines[0].startswith(f"FAIL  {R1}  seat@127.0.0.1:"), lines[0])
        self.assertIn("host_key FAILED: ", lines[0])
        self.assertTrue(lines[1].startswith(f"      fix host_key: confirm the seat's key out of band"), lines[1])
        self.assertIn(f"then set host_key of '{R1}' in {reg}", lines[1])
        self.assertTrue(lines[2].startswith(f"ok    {R2}  "), lines[2])
        self.assertEqual(lines[-1], "1 of 2 seats ready")


if __name__ == "__main__":
    unittest.main()
