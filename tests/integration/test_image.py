"""The image's toolchains inside real sessions (docs/IMAGE.md), rootful and rootless: read-only
root, tmpfs HOME and /tmp, the agent's uid, no network. Every install is offline, from what the
workspace holds: a tarball `npm pack` made, a wheel `pip wheel` made, a crate with no dependencies.

Run against another image with ASBX_IMAGE=... (harness.IMAGE)."""
import os
import pathlib
import pwd
import shutil
import unittest

import json

from harness import BASE_IMAGE, CODES, IMAGE, SEAT_RUN, SeatTest, podman
from test_rootless import USER, RootlessSeatBase

FILES = {
    "hello.js": "console.log('node says ' + (6 * 7));\n",
    "math.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                    "test('adds', () => assert.strictEqual(1 + 1, 2));\n",
    "tiny-pkg/package.json": '{"name": "tiny-pkg", "version": "1.0.0", "main": "index.js"}\n',
    "tiny-pkg/index.js": "module.exports = () => 'tiny ok';\n",
    "npm-app/package.json": '{"name": "npm-app", "version": "1.0.0", "private": true}\n',
    "pnpm-app/package.json": '{"name": "pnpm-app", "version": "1.0.0", "private": true}\n',
    "hello.ts": "const n: number = 7;\nconsole.log(`bun says ${n * 6}`);\n",
    "tinypy/pyproject.toml": '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
                             '[project]\nname = "tinypy"\nversion = "1.0"\n',
    "tinypy/tinypy/__init__.py": "def answer():\n    return 42\n",
    "pytests/test_tinypy.py": "import tinypy\n\ndef test_answer():\n    assert tinypy.answer() == 42\n",
    "crate/Cargo.toml": '[package]\nname = "hello"\nversion = "0.1.0"\nedition = "2021"\n',
    "crate/src/main.rs": 'fn double(x: i32) -> i32 { x * 2 }\nfn main() { println!("rust says {}", double(21)); }\n'
                         "#[cfg(test)]\nmod tests { #[test] fn doubles() { assert_eq!(super::double(2), 4); } }\n",
    "c/hello.c": '#include <stdio.h>\nint main(void) { printf("c says %d\\n", 42); return 0; }\n',
    "c/Makefile": "hello: hello.c\n\tcc -O2 -o hello hello.c\n",
    "notes/haystack.txt": "line one\nthe needle-4711 is here\n",
}

# Each step prints its marker only when it worked (set -e stops at the first failure).
SCRIPT = r"""set -euo pipefail
cd "$1"
node hello.js
out=$(node --test math.test.js); [[ $out == *"# pass 1"* ]] && echo "OK node --test"
(cd tiny-pkg && npm pack --pack-destination .. >/dev/null); echo "OK npm pack"
(cd npm-app && npm install --offline --no-audit ../tiny-pkg-1.0.0.tgz >/dev/null &&
  node -e "console.log('npm ' + require('tiny-pkg')())")
(cd pnpm-app && pnpm add --offline ../tiny-pkg-1.0.0.tgz >/dev/null &&
  node -e "console.log('pnpm ' + require('tiny-pkg')())")
bun hello.ts
python3 -m venv --system-site-packages /tmp/venv
/tmp/venv/bin/pip wheel --no-deps --no-build-isolation --no-index -q -w wheels ./tinypy
/tmp/venv/bin/pip install --no-index -q wheels/tinypy-1.0-py3-none-any.whl; echo "OK pip install wheel"
out=$(/tmp/venv/bin/python -m pytest -q -p no:cacheprovider pytests); [[ $out == *"1 passed"* ]] && echo "OK pytest"
cd crate; cargo build --offline -q; ./target/debug/hello
out=$(cargo test --offline -q 2>&1); [[ $out == *"1 passed"* ]] && echo "OK cargo test"; cd ..
(cd c && make -s && ./hello)
out=$(gh --version); [[ $out == "gh version 2."* ]] && echo "OK gh"
rg -n 'needle-\d+' notes
echo "HOME=$HOME uid=$(id -u)"
"""

EXPECTED = ["node says 42\n", "OK node --test\n", "OK npm pack\n", "npm tiny ok\n", "pnpm tiny ok\n",
            "bun says 42\n", "OK pip install wheel\n", "OK pytest\n", "rust says 42\n", "OK cargo test\n",
            "c says 42\n", "OK gh\n", "2:the needle-4711 is here\n"]


def make_workspace(root, owner_uid, owner_gid):
    ws = pathlib.Path(root) / "toolchains"
    for name, text in FILES.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    (ws / "run.sh").write_text(SCRIPT)
    for p in [ws, *ws.rglob("*")]:
        os.chown(p, owner_uid, owner_gid)
    return ws


class ImageToolchains(SeatTest):
    def test_every_toolchain_works_offline_in_a_rootful_session(self):
        ws = make_workspace(self.seat.workspaces, 1000, 1000)
        proc = self.seat.run("--id", "img-tools", "--workspace", str(ws), "--timeout", "10m", "--",
                             "bash", "run.sh", "/sandbox/workspaces/toolchains", timeout=900)
        out = proc.stdout.decode()
        self.assertEqual(proc.returncode, 0, f"image {IMAGE}\n{out}\n{proc.stderr.decode()}")
        for line in EXPECTED:
            self.assertIn(line, out)
        self.assertIn("HOME=/sandbox/home uid=1000\n", out)
        self.assertTrue((ws / "crate" / "target" / "debug" / "hello").exists(), "cargo built in the workspace")
        self.assertTrue((ws / "npm-app" / "node_modules" / "tiny-pkg" / "index.js").exists())
        self.assertNoContainer("img-tools")

    def test_the_root_stays_read_only_for_the_package_managers(self):
        proc = self.seat.run("--id", "img-ro", "--", "bash", "-c",
                             "touch /usr/local/lib/node_modules/x 2>/dev/null && echo WROTE; "
                             "touch /usr/lib/python3/dist-packages/x 2>/dev/null && echo WROTE; "
                             "npm config get cache; pnpm config get store-dir; echo $CARGO_HOME $PIP_CACHE_DIR")
        out = proc.stdout.decode()
        self.assertNotIn("WROTE", out)
        self.assertIn("/sandbox/home/.cache/npm\n/sandbox/home/.cache/pnpm-store\n"
                      "/sandbox/home/.cargo /sandbox/home/.cache/pip\n", out)

    def test_the_toolchains_add_no_setuid_program(self):
        """The kernel surface stays the base's: no setuid/setgid file beyond what debootstrap's
        minbase has (all useless under no_new_privileges anyway), no file capabilities (getcap prints
        nothing, or is absent)."""
        proc = self.seat.run("--id", "img-suid", "--", "bash", "-c",
                             "find / -xdev -perm /6000 -type f 2>/dev/null | sort; getcap -r / 2>/dev/null")
        self.assertEqual(proc.stdout.decode().split(), BASE_SETUID)


class DoctorImageContract(SeatTest):
    """`doctor` reads the configured image the way a session does (docs/IMAGE.md "The image contract")."""

    def doctor(self):
        proc = self.seat.run("doctor", "--json", exe=SEAT_RUN)
        return proc, {c["name"]: c for c in json.loads(proc.stdout)["checks"]}

    def assertNoProbeLeft(self):
        left = podman("ps", "-a", "--filter", "name=^asbx-doctor-", "--format", "{{.Names}}").stdout.split()
        self.assertEqual(left, [], "doctor's probe container was left")

    def test_the_image_meets_the_contract(self):
        proc, checks = self.doctor()
        self.assertTrue(checks["image_contract"]["ok"], checks["image_contract"])
        self.assertEqual(checks["image_contract"]["detail"],
                         f"{IMAGE} meets the image contract (bash git codex claude, /sandbox/home, /sandbox/workspaces, "
                         "no ENTRYPOINT)")
        self.assertEqual(checks["image_tools"]["detail"],
                         "all present: node npm pnpm bun python3 pip3 pytest cargo rustc cc make gh rg jq")
        self.assertNoProbeLeft()

    def test_control_the_bare_base_image_fails_it_naming_what_is_missing(self):
        self.seat.write(self.seat.config_file.read_text().replace(IMAGE, BASE_IMAGE))
        proc, checks = self.doctor()
        self.assertEqual(proc.returncode, CODES["seat_preflight"])
        self.assertFalse(checks["image_contract"]["ok"])
        self.assertEqual(checks["image_contract"]["detail"],
                         f"{BASE_IMAGE}: no directory /sandbox/home /sandbox/workspaces; not found or not executable by "
                         "the agent on /usr/local/bin:/usr/bin:/bin: codex claude")
        self.assertIn('docs/IMAGE.md "The image contract"', checks["image_contract"]["remedy"])
        self.assertTrue(checks["image_tools"]["ok"])  # informative only
        self.assertNoProbeLeft()


# debootstrap --variant=minbase bookworm's own (tests/integration/test_image.py checks the image adds none).
BASE_SETUID = ["/usr/bin/chage", "/usr/bin/chfn", "/usr/bin/chsh", "/usr/bin/expiry", "/usr/bin/gpasswd",
               "/usr/bin/mount", "/usr/bin/newgrp", "/usr/bin/passwd", "/usr/bin/su", "/usr/bin/umount",
               "/usr/sbin/unix_chkpwd"]


class RootlessImageToolchains(RootlessSeatBase):
    def test_every_toolchain_works_offline_in_a_rootless_session(self):
        self.seat.write(self.seat.config_file.read_text() + "waive_unenforced_limits = true\n")
        pw = pwd.getpwnam(USER)
        ws = make_workspace(self.seat.workspaces, pw.pw_uid, pw.pw_gid)
        self.addCleanup(shutil.rmtree, ws, True)
        proc, record = self.run_as_user("--id", "img-rl-tools", "--workspace", str(ws), "--timeout", "10m", "--",
                                        "bash", "run.sh", "/sandbox/workspaces/toolchains", timeout=900)
        out = proc.stdout.decode()
        self.assertEqual(proc.returncode, 0, f"image {IMAGE}\n{out}\n{proc.stderr.decode()}")
        for line in EXPECTED:
            self.assertIn(line, out)
        self.assertIn(f"HOME=/sandbox/home uid={pw.pw_uid}\n", out)
        self.assertEqual(record["mode"], "rootless")
        self.assertEqual(self.containers("img-rl-tools"), [])


if __name__ == "__main__":
    unittest.main()
