"""The host user's kernel keyring and a rootful session's user namespace (docs/DECISIONS.md, issue 34).

The keyring is met as the host user meets it: host uid 1000 puts a "user" key in its user keyring
(probes/keyring.c, run with setpriv in a session keyring of its own, pam_keyinit's way); the probe
inside then searches, links, reads and overwrites it. Each container is the launcher's own create
body (`--dry-run`) created through the same podman API: as the launcher sends it (no user namespace
on a rootful seat today: the CONTROL, reachable), and with a test-only user namespace added (a map
that owns nothing on the host: closed). The map the launcher would need (plan/userns.h: the agent's
uid kept 1:1) does not start on podman 4.3.1's storage; `test_blocker_…` pins that blocker, and
`test_way_on_…` the route past it measured since: the same map from a rootfs (the image's layers as a
read-only overlay of the session's own, every mount point made by root before create), and
`test_way_on_idmapped_…` a second, closer one: the agent a range uid too, every bind idmapped by the
launcher itself (probes/idmap_bind.c), so that its writes still land as the owner's.
"""
import json
import os
import pathlib
import secrets
import shutil
import subprocess
import tempfile
import urllib.parse

from harness import CONTAINERS_CONF, SOCKET, SeatTest, podman, unavailable

ROOT = pathlib.Path(__file__).resolve().parent
AGENT_UID = 1000
RANGE = 0x70000000  # plan/userns.h
AS_HOST_USER = ["setpriv", "--reuid", str(AGENT_UID), "--regid", str(AGENT_UID), "--clear-groups"]


def probe_lines(out):
    """`STEP result [detail]` lines → {step: (result, detail)}."""
    steps = {}
    for line in out.decode(errors="replace").splitlines():
        parts = line.split()
        if parts:
            steps[parts[0]] = (parts[1] if len(parts) > 1 else "", " ".join(parts[2:]))
    return steps


class UsernsSeatTest(SeatTest):
    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            unavailable(self, "the rootful seat's tests run as root")
        # These tests measure what a map does to a body without one: the body of a seat that says
        # user_namespace = "host" (the default's own tests: test_userns_range).
        text = self.seat.config_file.read_text()
        if "\nuser_namespace = " not in "\n" + text:
            self.seat.config_file.write_text('user_namespace = "host"\n' + text)
        self.ws = self.seat.workspaces / "ws"
        self.ws.mkdir()
        self.probe = self.ws / "keyring"
        subprocess.run(["gcc", "-static", "-O1", "-o", str(self.probe), str(ROOT / "probes" / "keyring.c")], check=True)
        for path in (self.ws, self.probe):
            os.chown(path, AGENT_UID, AGENT_UID)

    def dry_body(self, *argv):
        sid = "userns-" + secrets.token_hex(3)
        proc = self.seat.run("--dry-run", "--id", sid, "--workspace", str(self.ws), "--", *argv)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        body = json.loads(proc.stdout)["create_body"]
        # The project's profile refuses keyctl outright (test_seccomp); this file measures what the
        # user namespace alone closes, so its containers keep podman's default profile. (The dry
        # run names a profile file it never writes.)
        body.pop("seccomp_profile_path", None)
        return body

    def run_body(self, body):
        """Creates and starts `body` through the seat's podman API: (exit code, stdout, stderr)."""
        made = subprocess.run(["curl", "-fsS", "--unix-socket", SOCKET, "-H", "Content-Type: application/json",
                               "--data-binary", "@-", "http://d/v4.0.0/libpod/containers/create"],
                              input=json.dumps(body).encode(), capture_output=True)
        self.assertEqual(made.returncode, 0, made.stderr)
        self.addCleanup(podman, "rm", "-f", body["name"], check=False)
        run = podman("start", "--attach", body["name"], check=False)
        return run.returncode, run.stdout.encode(), run.stderr

    def with_map(self, body, ranges):
        """Test-only: the same body with a user namespace of the given (container, host, size) ranges."""
        m = [{"container_id": c, "host_id": h, "size": n} for c, h, n in ranges]
        return dict(body, userns={"nsmode": "private"}, idmappings={"UIDMap": m, "GIDMap": m})


class Keyring(UsernsSeatTest):
    def setUp(self):
        super().setUp()
        self.name = "asbx-test-" + secrets.token_hex(4)
        self.value = "host-secret-" + secrets.token_hex(4)
        out = self.host("host-add", self.name, self.value)
        self.user_keyring = out.split("user_keyring=")[1].strip()
        self.addCleanup(self.host, "host-remove", self.name)

    def host(self, *args):
        return subprocess.run(AS_HOST_USER + [str(self.probe), *args], capture_output=True, text=True, check=True).stdout

    def reach(self, ranges=None):
        body = self.dry_body("./keyring", "probe", self.name, self.user_keyring)
        self.assertNotIn("userns", body)  # what the launcher sends where the seat says "host"
        code, out, err = self.run_body(self.with_map(body, ranges) if ranges else body)
        self.assertEqual(code, 0, err)
        return probe_lines(out)

    def test_in_a_user_namespace_that_owns_nothing_the_keyring_is_out_of_reach(self):
        steps = self.reach([(0, RANGE, 65536)])
        self.assertEqual(steps["uid_map"], ("0", f"{RANGE} 65536;"))
        self.assertEqual(steps["user-search"], ("ENOKEY", ""))
        self.assertEqual(steps["link-user"], ("ok", ""))  # its own namespace's (empty) user keyring
        self.assertEqual(steps["session-search"], ("ENOKEY", ""))
        self.assertEqual(steps["link-serial"], ("EACCES", ""))  # even knowing the serial
        self.assertNotIn("serial-read", steps)
        self.assertEqual(self.host("host-read", self.name), self.value + "\n")

    def test_control_as_the_launcher_sends_it_the_agent_reads_and_overwrites_it(self):
        steps = self.reach()
        self.assertEqual(steps["uid_map"], ("0", "0 4294967295;"))
        self.assertEqual(steps["user-search"], ("ok", ""))
        self.assertEqual(steps["session-read"], ("ok", self.value))
        self.assertEqual(steps["session-update"], ("ok", ""))
        self.assertEqual(steps["serial-read"], ("ok", "agent-wrote-this"))
        self.assertEqual(self.host("host-read", self.name), "agent-wrote-this\n")

    def test_blocker_the_agent_kept_1_to_1_does_not_start_on_this_storage(self):
        """plan/userns.h's map (the agent's uid is the host's, for its workspace writes): podman 4.3.1
        creates it, and the start fails in the storage's idmapped overlay mount. When this test fails,
        the map starts: turn plan_rootful_userns on in plan/build_plan.cc (docs/DECISIONS.md)."""
        body = self.with_map(self.dry_body("true"), [(0, RANGE, 1000), (1000, 1000, 1), (1001, RANGE + 1001, 64535)])
        code, _, err = self.run_body(body)
        self.assertNotEqual(code, 0)
        self.assertIn("creating overlay mount to", err)
        self.assertIn("permission denied", err)

    def rootfs_for(self, body):
        """Test-only, the way on (docs/DECISIONS.md, issue 34): the body's image as a rootfs podman does
        not idmap — an overlay of the image's layers with an upper dir of this session's own, at a
        path the container's root (a range uid) can walk, holding every mount point the body needs
        (made here as host root: that root cannot create them in dirs owned by host root), then
        made read-only."""
        image = body.pop("image")
        local = lambda *a: subprocess.run(["podman", *a], capture_output=True, text=True, check=True,  # same storage
                                          env=dict(os.environ, CONTAINERS_CONF=CONTAINERS_CONF))
        lower = local("image", "mount", image).stdout.strip()  # (the API has no image mount)
        self.addCleanup(local, "image", "unmount", image)
        d = pathlib.Path(tempfile.mkdtemp(prefix="asbx-rootfs-", dir="/run"))
        self.addCleanup(shutil.rmtree, d, True)
        os.chmod(d, 0o755)
        root = d / "root"
        for sub in ("upper", "work", "root"):
            (d / sub).mkdir(mode=0o755)
        subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                        f"lowerdir={lower},upperdir={d}/upper,workdir={d}/work", str(root)], check=True)
        self.addCleanup(subprocess.run, ["umount", str(root)], check=True)
        for m in body["mounts"]:
            target = root / m["destination"].lstrip("/")
            if m["type"] == "bind" and not os.path.isdir(m["source"]):
                target.parent.mkdir(parents=True, exist_ok=True)
                target.touch()
            else:
                target.mkdir(parents=True, exist_ok=True)
        for f in ("etc/hosts", "etc/resolv.conf", "etc/hostname", "run/.containerenv", "run/podman-init"):
            (root / f).parent.mkdir(parents=True, exist_ok=True)
            (root / f).touch()
        if not os.path.lexists(root / "etc/mtab"):
            os.symlink("../proc/self/mounts", root / "etc/mtab")
        subprocess.run(["mount", "-o", "remount,ro", str(root)], check=True)
        return dict(body, rootfs=str(root))

    def test_way_on_the_same_map_starts_from_a_rootfs_and_closes_the_keyring_by_name_only(self):
        """plan/userns.h's map through a rootfs instead of the image: it starts; the agent is host uid
        1000 in a user namespace (its workspace writes land as 1000), root is a range uid, the image's
        files read as nobody's, and the host user's keyring is out of reach by name (by serial it is
        not: the seccomp profile's refusal of keyctl closes that, docs/DECISIONS.md)."""
        ranges = [(0, RANGE, 1000), (1000, 1000, 1), (1001, RANGE + 1001, 64535)]
        body = self.dry_body("./keyring", "probe", self.name, self.user_keyring)
        code, out, err = self.run_body(self.with_map(self.rootfs_for(body), ranges))
        self.assertEqual(code, 0, err)
        steps = probe_lines(out)
        self.assertEqual(steps["uid_map"], ("0", f"{RANGE} 1000; 1000 1000 1; 1001 {RANGE + 1001} 64535;"))
        self.assertEqual(steps["user-search"], ("ENOKEY", ""))
        self.assertEqual(steps["session-search"], ("ENOKEY", ""))
        # By serial the key is still the agent's (its kernel uid is the owner's; the serial is given
        # here, guessing it took hours): what closes that is the profile refusing keyctl (test_seccomp).
        self.assertEqual((steps["link-serial"], steps["serial-read"]), (("ok", ""), ("ok", self.value)))
        body = self.dry_body("sh", "-c", "touch written && stat -c '%u %U' /usr/bin/ls && touch /etc/x")
        code, out, err = self.run_body(self.with_map(self.rootfs_for(body), ranges))
        self.assertEqual((code, out), (1, b"65534 nobody\n"), err)  # root stays read-only
        self.assertIn("Read-only file system", err)
        self.assertEqual(((self.ws / "written").stat().st_uid, (self.ws / "written").stat().st_gid), (AGENT_UID, AGENT_UID))

    def idmapped_binds(self, body):
        """Test-only, the second way on (docs/DECISIONS.md, issue 34): each bind of the body replaced by
        an idmapped clone of its source (probes/idmap_bind.c), on-disk AGENT_UID seen as the agent's
        range uid and every other id unmapped, at a mount point of its own."""
        helper = self.seat.dir / "idmap_bind"
        subprocess.run(["gcc", "-O1", "-o", str(helper), str(ROOT / "probes" / "idmap_bind.c")], check=True)
        d = pathlib.Path(tempfile.mkdtemp(prefix="asbx-idmap-", dir="/run"))
        self.addCleanup(os.rmdir, d)  # empty once each mount below is gone: never a recursive removal
        mounts = []
        for n, m in enumerate(body["mounts"]):
            if m["type"] == "bind":
                stage = d / str(n)
                if os.path.isdir(m["source"]):
                    stage.mkdir()
                    self.addCleanup(os.rmdir, stage)
                else:
                    stage.touch()
                    self.addCleanup(os.unlink, stage)
                subprocess.run([str(helper), m["source"], str(stage), str(AGENT_UID), str(RANGE + AGENT_UID)], check=True)
                self.addCleanup(subprocess.run, ["umount", "-l", str(stage)], check=True)
                m = dict(m, source=str(stage))
            mounts.append(m)
        return dict(body, mounts=mounts)

    def test_way_on_idmapped_binds_the_agent_owns_nothing_and_its_writes_land_as_the_owner(self):
        """The map of one range (it starts on this storage: the image's layers idmapped by podman) with
        each bind idmapped by the launcher (runc 1.1.5 has no idmap option, the kernel's mount API
        does): the agent is a range uid that owns nothing on the host, so the host user's keyring is
        out of reach by name and by serial; its workspace writes land as the owner's uid; the image
        reads as root's; container root is not mapped onto the workspace at all."""
        body = self.dry_body("./keyring", "probe", self.name, self.user_keyring)
        code, out, err = self.run_body(self.with_map(self.idmapped_binds(body), [(0, RANGE, 65536)]))
        self.assertEqual(code, 0, err)
        steps = probe_lines(out)
        self.assertEqual(steps["uid_map"], ("0", f"{RANGE} 65536;"))
        self.assertEqual(steps["user-search"], ("ENOKEY", ""))
        self.assertEqual(steps["session-search"], ("ENOKEY", ""))
        self.assertEqual(steps["link-serial"], ("EACCES", ""))  # even knowing the serial
        self.assertEqual(self.host("host-read", self.name), self.value + "\n")
        body = self.dry_body("sh", "-c", "id -u; touch written; mkdir made; stat -c '%u %U' /usr/bin/ls written")
        code, out, err = self.run_body(self.with_map(self.idmapped_binds(body), [(0, RANGE, 65536)]))
        self.assertEqual((code, out), (0, b"1000\n0 root\n1000 agent\n"), err)
        for made in (self.ws / "written", self.ws / "made"):
            self.assertEqual((made.stat().st_uid, made.stat().st_gid), (AGENT_UID, AGENT_UID))
        # Container root (an agent that also escalated inside) has no id on the workspace's mount: even
        # where the mode lets anyone write, what it would create could not be owned (EOVERFLOW).
        os.chmod(self.ws, 0o777)
        self.addCleanup(os.chmod, self.ws, 0o755)
        body = dict(self.dry_body("sh", "-c", "touch by-root 2>&1; mkdir by-root-dir 2>&1; true"), user="0:0")
        code, out, err = self.run_body(self.with_map(self.idmapped_binds(body), [(0, RANGE, 65536)]))
        self.assertEqual(code, 0, err)
        self.assertEqual(out.decode().count("Value too large for defined data type"), 2, out)
        self.assertFalse((self.ws / "by-root").exists())
        self.assertFalse((self.ws / "by-root-dir").exists())
        # CONTROL: the same as the agent, where the mode allows it, works
        body = self.dry_body("sh", "-c", "touch by-agent")
        code, out, err = self.run_body(self.with_map(self.idmapped_binds(body), [(0, RANGE, 65536)]))
        self.assertEqual(code, 0, err)
        self.assertEqual((self.ws / "by-agent").stat().st_uid, AGENT_UID)
        self.assertEqual((self.ws / "written").stat().st_uid, AGENT_UID)
