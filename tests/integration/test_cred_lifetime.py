"""Credential lifetime (issue: a session must never be the one that rotates the host's login):
the real codex and claude CLIs against the mock model server, whose token endpoint (codex,
through CODEX_REFRESH_TOKEN_URL_OVERRIDE) and CONNECT log (claude, whose token URL is fixed,
through HTTPS_PROXY) show every refresh attempt. docs/CREDENTIALS.md, "Lifetime"."""
import base64
import json
import os
import time

from harness import CODES, SEAT_RUN
from test_agents_e2e import AgentSeat, CLAUDE_BYPASS, codex_argv

ACCOUNT_ID = "acct-mock"  # what the mock's token endpoint answers with: a refresh keeps the account


def jwt(claims):
    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return "%s.%s.%s" % (part({"alg": "none", "typ": "JWT"}), part(claims), part("sig"))


def codex_chatgpt(expires_in, tag):
    claims = {"exp": int(time.time()) + expires_in, "email": "dev@example.com",
              "https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT_ID, "chatgpt_plan_type": "pro"}}
    access = jwt(dict(claims, jti="access-" + tag))
    return {"auth_mode": "chatgpt", "OPENAI_API_KEY": None,
            "tokens": {"id_token": jwt(claims), "access_token": access, "refresh_token": "rt-secret-" + tag,
                       "account_id": ACCOUNT_ID},
            "last_refresh": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, [access, "rt-secret-" + tag]


def claude_oauth(expires_in, tag):
    access, refresh = "sk-ant-oat01-secret-" + tag, "sk-ant-ort01-secret-" + tag
    return {"claudeAiOauth": {"accessToken": access, "refreshToken": refresh,
                              "expiresAt": int(time.time() * 1000) + expires_in * 1000,
                              "scopes": ["user:inference", "user:profile"], "subscriptionType": "max"}}, [access, refresh]


def refresh_calls(mock):
    """Every refresh attempt the mock saw: codex's token POSTs, claude's tunnels to its token host."""
    return [r for r in mock.requests()
            if r["api"] == "token" or (r["api"] == "connect" and "api.anthropic.com" not in r.get("target", ""))]


class Lifetime(AgentSeat):
    def codex(self, mock):
        override = "CODEX_REFRESH_TOKEN_URL_OVERRIDE=%s/oauth/token" % mock.base_url
        return ["env", override] + codex_argv(mock, "Say done.")

    def claude(self, mock):
        return ["env", "HTTPS_PROXY=" + mock.base_url, "NO_PROXY=127.0.0.1", "claude", "-p", "Say done.",
                CLAUDE_BYPASS]

    def claude_env(self, mock):
        return self.seat.env(ANTHROPIC_BASE_URL=mock.base_url, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                             DISABLE_AUTOUPDATER="1")

    def launch(self, session, runtime, credential, mock, argv, timeout="120s", env=None):
        return self.seat.status("--id", session, "--runtime", runtime, "--credential", str(credential),
                                "--network", mock.network, "--timeout", timeout, "--", *argv, timeout=200, env=env)

    def assertNoSecret(self, record, secrets):
        ledger = self.seat.ledger.read_text() if self.seat.ledger.exists() else ""
        for text in (json.dumps(record), ledger):
            for secret in secrets:
                self.assertNotIn(secret, text)

    def assertLifetime(self, record, kind, account, low, high):
        [cred] = record["credentials"]
        self.assertEqual((cred["auth_kind"], cred["account"]), (kind, account))
        self.assertFalse(cred["refresh_due"])
        self.assertFalse(cred["refreshed_in_container"])
        self.assertIsNone(cred["refresh_expected"])
        if low is None:
            self.assertIsNone(cred["seconds_to_expiry"])
        else:
            self.assertTrue(low <= cred["seconds_to_expiry"] <= high, cred)
        ledger = json.loads(self.seat.ledger.read_text().splitlines()[-1])
        self.assertEqual(ledger["credentials"], record["credentials"])

    def assertRefused(self, proc, record, session, message, mock):
        self.assertLauncherError(proc, record, "credential_expiring", message)
        self.assertEqual(CODES["credential_expiring"], 223)
        self.assertNoContainer(session)
        self.assertFalse((self.seat.dir / "run" / session).exists())
        self.assertEqual(mock.requests(), [])


class LongLived(Lifetime):
    def test_codex_chatgpt_credential_outliving_the_timeout_runs_without_a_refresh(self):
        content, secrets = codex_chatgpt(2 * 86400, "long")
        auth = self.fake_credential("codex-auth.json", content)
        mock = self.netns("life-cx", "true", final="done")
        proc, record = self.launch("life-codex-long", "codex", auth, mock, self.codex(mock))
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        self.assertEqual(proc.stdout, b"done\n")
        self.assertEqual(refresh_calls(mock), [])
        self.assertFalse(record["credential_refreshed_in_container"])
        self.assertLifetime(record, "chatgpt", "dev@example.com", 2 * 86400 - 300, 2 * 86400)
        self.assertNoSecret(record, secrets)
        print("\nrecord credentials (codex): %s" % json.dumps(record["credentials"], indent=2))

    def test_claude_oauth_credential_outliving_the_timeout_runs_without_a_refresh(self):
        content, secrets = claude_oauth(2 * 86400, "long")
        cred = self.fake_credential("claude-credentials.json", content)
        mock = self.netns("life-cl", "true", final="done")
        proc, record = self.launch("life-claude-long", "claude", cred, mock, self.claude(mock),
                                   env=self.claude_env(mock))
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        self.assertEqual(proc.stdout, b"done\n")
        self.assertEqual(refresh_calls(mock), [])
        self.assertLifetime(record, "oauth", None, 2 * 86400 - 300, 2 * 86400)
        self.assertNoSecret(record, secrets)

    def test_codex_api_key_is_never_checked_and_runs(self):
        self.seat.write(self.seat.config_file.read_text() + 'credential_horizon = "100000h"\n')
        auth = self.fake_credential("codex-auth.json", {"auth_mode": "apikey", "OPENAI_API_KEY": "sk-secret-apikey"})
        mock = self.netns("life-key", "true", final="done")
        proc, record = self.seat.status("--id", "life-apikey", "--runtime", "codex", "--credential", str(auth),
                                        "--network", mock.network, "--", *self.codex(mock), timeout=200)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        self.assertEqual(refresh_calls(mock), [])
        self.assertLifetime(record, "api_key", None, None, None)
        self.assertNoSecret(record, ["sk-secret-apikey"])


class DueWithinTheTimeout(Lifetime):
    def test_codex_credential_due_within_the_timeout_is_refused_before_anything_exists(self):
        content, _ = codex_chatgpt(30 * 60 + 30, "short")  # codex refreshes 5 min early: due in 25m30s
        auth = self.fake_credential("codex-auth.json", content)
        mock = self.netns("life-cxs", "true")
        proc, record = self.launch("life-codex-short", "codex", auth, mock, self.codex(mock), timeout="1h")
        self.assertRefused(proc, record, "life-codex-short",
                           "the codex credential (account dev@example.com) must be refreshed in 25m, before this "
                           "session can end (--timeout 1h00m + margin 10m); the CLI would refresh it inside the "
                           "container and rotate the host's login. Refresh it on the host first: codex login", mock)
        print("\nrefused: " + proc.stderr.decode())

    def test_claude_credential_due_within_the_timeout_is_refused_before_anything_exists(self):
        content, _ = claude_oauth(20 * 60 + 30, "short")  # claude refreshes 5 min early: due in 15m30s
        cred = self.fake_credential("claude-credentials.json", content)
        mock = self.netns("life-cls", "true")
        proc, record = self.launch("life-claude-short", "claude", cred, mock, self.claude(mock), timeout="30m",
                                   env=self.claude_env(mock))
        self.assertRefused(proc, record, "life-claude-short",
                           "the claude credential must be refreshed in 15m, before this session can end (--timeout "
                           "30m + margin 10m); the CLI would refresh it inside the container and rotate the host's "
                           "login. Refresh it on the host first: claude auth login", mock)

    def test_without_a_timeout_the_seat_horizon_counts(self):
        content, _ = codex_chatgpt(3 * 3600 + 30, "horizon")  # due in 2h55m30s: whole minutes, rounded down
        auth = self.fake_credential("codex-auth.json", content)
        mock = self.netns("life-hz", "true")
        proc, record = self.seat.status("--id", "life-horizon", "--runtime", "codex", "--credential", str(auth),
                                        "--network", mock.network, "--", *self.codex(mock), timeout=200)
        self.assertRefused(proc, record, "life-horizon",
                           "the codex credential (account dev@example.com) must be refreshed in 2h55m, before this "
                           "session can end (no --timeout: the seat's credential_horizon 4h00m + margin 10m); the CLI "
                           "would refresh it inside the container and rotate the host's login. Refresh it on the "
                           "host first: codex login", mock)


class RefreshInside(Lifetime):
    def test_warn_seat_lets_a_due_credential_run_and_its_refresh_is_expected(self):
        self.seat.write(self.seat.config_file.read_text() + 'credential_expiring = "warn"\n')
        content, secrets = codex_chatgpt(120, "warn")  # inside codex's 5 minutes: it refreshes at once
        auth = self.fake_credential("codex-auth.json", content)
        before = auth.read_bytes()
        mock = self.netns("life-warn", "true", final="done")
        proc, record = self.launch("life-warn", "codex", auth, mock, self.codex(mock))
        self.assertEqual(len([r for r in mock.requests() if r["api"] == "token"]), 1, mock.requests())
        self.assertTrue(record["credential_refreshed_in_container"])
        self.assertIs(record["credential_refresh_expected"], True)
        [cred] = record["credentials"]
        self.assertEqual((cred["refresh_due"], cred["refreshed_in_container"], cred["refresh_expected"]),
                         (True, True, True))
        self.assertTrue(record["warnings"][0].startswith("the codex credential (account dev@example.com) must be "
                                                         "refreshed now, before this session can end"), record)
        self.assertNotIn("NOT expected", proc.stderr.decode())
        self.assertEqual(auth.read_bytes(), before)
        self.assertNoSecret(record, secrets)

    def test_the_claude_channel_sees_a_due_refresh(self):
        """Proves the observation channel of LongLived's claude test: a due credential (let through by
        a warn seat) makes claude tunnel to its fixed token host, which the mock logs and refuses."""
        self.seat.write(self.seat.config_file.read_text() + 'credential_expiring = "warn"\n')
        content, secrets = claude_oauth(120, "warn")
        cred = self.fake_credential("claude-credentials.json", content)
        mock = self.netns("life-clw", "true", final="done")
        proc, record = self.launch("life-claude-warn", "claude", cred, mock, self.claude(mock),
                                   env=self.claude_env(mock))
        self.assertIn("platform.claude.com:443", [r.get("target") for r in refresh_calls(mock)], mock.requests())
        self.assertTrue(record["credentials"][0]["refresh_due"])
        self.assertNoSecret(record, secrets)

    def test_a_refresh_the_preflight_did_not_expect_is_a_finding(self):
        auth = self.fake_credential("codex-auth.json", {"auth_mode": "apikey", "OPENAI_API_KEY": "sk-secret-rewrite"})
        proc, record = self.seat.status("--id", "life-unexpected", "--runtime", "codex", "--credential", str(auth),
                                        "--", "bash", "-c", "echo '{}' > $HOME/.codex/auth.json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIs(record["credential_refresh_expected"], False)
        self.assertEqual(record["credentials"][0]["refresh_expected"], False)
        line = ("the codex credential's refresh inside was NOT expected: its auth kind (api_key) has no known expiry "
                "at the start; the CLI refreshed it anyway (its refresh rule differs from the credential table's)")
        self.assertIn(line, record["warnings"])
        self.assertIn(("agent-sandbox: warning: " + line).encode(), proc.stderr)


class Doctor(Lifetime):
    def test_doctor_lists_each_runtimes_credential_with_its_time_left(self):
        home = self.seat.dir / "home"
        (home / ".codex").mkdir(parents=True)
        (home / ".claude").mkdir()
        codex, codex_secrets = codex_chatgpt(3 * 86400 + 1800, "doctor")  # 3d00h30m: no boundary within reach
        claude, claude_secrets = claude_oauth(7170, "doctor")  # 1h59m30s: never rounds to 2h00m
        (home / ".codex" / "auth.json").write_text(json.dumps(codex))
        (home / ".claude" / ".credentials.json").write_text(json.dumps(claude))
        proc = self.seat.run("doctor", "--json", exe=SEAT_RUN, env=self.seat.env(HOME=str(home)))
        checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
        self.assertTrue(checks["cred:codex"]["ok"])
        self.assertRegex(checks["cred:codex"]["detail"], r"^chatgpt \(account dev@example.com\), refresh due in "
                         r"3d00h \(expires in 3d00h\) at ")
        self.assertFalse(checks["cred:claude"]["ok"])  # due in 1h55m: inside the 4h horizon
        self.assertRegex(checks["cred:claude"]["detail"], r"^oauth, refresh due in 1h5[45]m \(expires in 1h5[89]m\) at ")
        self.assertEqual(checks["cred:claude"]["remedy"], "claude auth login")
        self.assertTrue(checks["cred:cursor-agent"]["detail"].startswith("none at "))
        self.assertEqual(proc.returncode, CODES["seat_preflight"])
        for secret in codex_secrets + claude_secrets:
            self.assertNotIn(secret.encode(), proc.stdout)


if __name__ == "__main__":
    import unittest
    unittest.main()
