"""Point the real codex / claude CLIs at the mock model server (stdlib only).

    from agent_config import write_codex_home, codex_env, claude_env
    env = codex_env(write_codex_home(home, "http://127.0.0.1:PORT/v1"))
    env = claude_env("http://127.0.0.1:PORT", home)

The keys are fake; the mock only records whether a credential header was present.
"""

import json
import os

FAKE_OPENAI_KEY = "sk-mock-not-a-real-key"
FAKE_ANTHROPIC_KEY = "sk-ant-mock-not-a-real-key"
MOCK_ENV_KEY = "MOCK_API_KEY"

CODEX_CONFIG = """\
model = "mock-model"
model_provider = "mock"

[model_providers.mock]
name = "Mock"
base_url = "{base_url}"
wire_api = "responses"
env_key = "{env_key}"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false
"""


def write_codex_home(home, base_url, api_key=FAKE_OPENAI_KEY):
    """Write HOME/.codex/config.toml (mock provider at base_url, e.g. http://127.0.0.1:N/v1)
    and an API-key-mode HOME/.codex/auth.json (0600). Returns the CODEX_HOME path."""
    codex_home = os.path.join(home, ".codex")
    os.makedirs(codex_home, mode=0o700, exist_ok=True)
    with open(os.path.join(codex_home, "config.toml"), "w", encoding="utf-8") as f:
        f.write(CODEX_CONFIG.format(base_url=base_url.rstrip("/"), env_key=MOCK_ENV_KEY))
    auth = os.path.join(codex_home, "auth.json")
    fd = os.open(auth, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"auth_mode": "apikey", "OPENAI_API_KEY": api_key}, f, indent=2)
    os.chmod(auth, 0o600)
    return codex_home


def codex_env(codex_home, api_key=FAKE_OPENAI_KEY):
    """Env for `codex exec`: CODEX_HOME plus the provider's env_key (sent as a Bearer token)."""
    return {"CODEX_HOME": codex_home, MOCK_ENV_KEY: api_key}


def claude_env(base_url, home=None, api_key=FAKE_ANTHROPIC_KEY, is_sandbox=False):
    """Env for `claude -p ... --dangerously-skip-permissions` against base_url
    (no /v1 suffix: claude appends /v1/messages). is_sandbox=True is needed only as root."""
    env = {
        "ANTHROPIC_BASE_URL": base_url.rstrip("/"),
        "ANTHROPIC_API_KEY": api_key,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
    if home is not None:
        env["HOME"] = home
    if is_sandbox:
        env["IS_SANDBOX"] = "1"
    return env
