"""Documentation that must stay true: the exit-code page equals the launcher's own table."""
import json
import re
import subprocess
import unittest

from harness import LAUNCHER, ROOT


class ExitCodeDoc(unittest.TestCase):
    def test_exit_codes_page_matches_the_table(self):
        table = json.loads(subprocess.run([str(LAUNCHER), "exit-codes", "--json"], capture_output=True,
                                          check=True).stdout)
        rows = re.findall(r"^\| (\d+) \| (\w+) \| (.+) \|$", (ROOT / "docs" / "EXIT-CODES.md").read_text(), re.M)
        self.assertEqual([(int(c), n, m) for c, n, m in rows], [(r["code"], r["name"], r["meaning"]) for r in table])

    def test_plain_table_has_the_same_rows(self):
        out = subprocess.run([str(LAUNCHER), "exit-codes"], capture_output=True, check=True, text=True).stdout
        table = json.loads(subprocess.run([str(LAUNCHER), "exit-codes", "--json"], capture_output=True,
                                          check=True).stdout)
        self.assertEqual(len(out.splitlines()), len(table))
        for line, row in zip(out.splitlines(), table):
            self.assertEqual(line.split()[:2], [str(row["code"]), row["name"]])


if __name__ == "__main__":
    unittest.main()
