#!/usr/bin/python3
"""Scripted mock model server for the codex and claude CLIs (stdlib only, Python >= 3.9).

One scripted agent turn per conversation:
  turn 1  -> the model asks the CLI's shell tool to run COMMAND
  turn 2  -> (request carries the tool's output) the model answers FINAL and stops

APIs:
  POST /v1/responses            OpenAI Responses API, SSE        (codex)
  POST /v1/messages[?...]       Anthropic Messages API, SSE/JSON (claude)
  POST .../oauth/token          OAuth refresh (codex via CODEX_REFRESH_TOKEN_URL_OVERRIDE,
                                claude via USE_LOCAL_OAUTH + CLAUDE_LOCAL_OAUTH_API_BASE):
                                logged as api "token" (grant_type only), answered with fresh
                                fake tokens valid for a day
  GET .../codex/models, /wham/accounts/check, /wham/settings/user, /ps/mcp, /api/oauth/profile:
                                the ChatGPT backend (codex in ChatGPT mode) and claude's profile
  any request with Upgrade: websocket -> 426 (codex falls back to SSE)
  CONNECT host:443               logged as api "connect" with its target, refused (403): a CLI
                                whose token URL is fixed (claude) is seen through HTTPS_PROXY
  POST /v1/messages/count_tokens, GET /v1/models, HEAD/GET /, anything else:
                                harmless 200 JSON (unknown paths are logged as "other")

Usage:
  server.py [--host 127.0.0.1] [--port 0] [--script FILE | --command CMD --final TEXT]
            [--log FILE] [--max-seconds 300] [--tls-cert PEM --tls-key PEM] [--log-secrets]
            [--account-id ID]
--tls-cert/--tls-key: serve TLS (ALPN http/1.1), the handshake in the request's thread; each log
line then carries the SNI name the client asked for ("sni").
--log-secrets: log the VALUES of Authorization, x-api-key and ChatGPT-Account-Id (tests that must
show which token arrived: the injecting wall's); never use it with a real credential.
With it, GET /v1/echo-auth answers the Authorization value it got (an upstream that echoes the
credential: inject mode's secret scan must then find what the agent wrote down).
With --port 0 a free port is picked; the first stdout line is always PORT=<n>.
Without --log-secrets the request log (JSON lines) records header *presence* only.
"""

import argparse
import gzip
import json
import os
import signal
import ssl
import sys
import subprocess
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

DEFAULT_COMMAND = "echo mock-model-was-here"
DEFAULT_FINAL = "Done: the command ran."
OUTPUT_EXCERPT = 400


class Script:
    def __init__(self, command, final):
        self.command = command
        self.final = final


class RequestLog:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.t0 = time.monotonic()
        self.counter = 0

    def write(self, record):
        with self.lock:
            self.counter += 1
            record = dict(record)
            record["seq"] = self.counter
            record["t"] = round(time.monotonic() - self.t0, 3)
            record["at"] = round(time.time(), 6)  # the wall clock: bench/first_request.py's end mark
            line = json.dumps(record, sort_keys=True)
            if self.path:
                with open(self.path, "a", encoding="utf-8") as f:
                    f.write(line + "\n")
            print("mock: " + line, file=sys.stderr, flush=True)


def sse(event, data):
    return ("event: %s\ndata: %s\n\n" % (event, json.dumps(data, separators=(",", ":")))).encode()


def text_of(content):
    """Flatten a tool output / tool_result content into a short string for the log."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for c in content:
            if isinstance(c, dict):
                parts.append(str(c.get("text", c.get("output", ""))))
            else:
                parts.append(str(c))
        return "".join(parts)
    if isinstance(content, dict):
        return str(content.get("text", content.get("output", json.dumps(content))))
    return "" if content is None else str(content)


# ---------------------------------------------------------------- Responses API (codex)

def responses_turn(body):
    """Return (turn, tool_output_excerpt): 2 if the input carries a function_call_output."""
    items = body.get("input") if isinstance(body, dict) else None
    if isinstance(items, list):
        for item in reversed(items):
            if isinstance(item, dict) and item.get("type") in (
                "function_call_output", "custom_tool_call_output", "local_shell_call_output"
            ):
                return 2, text_of(item.get("output"))[:OUTPUT_EXCERPT]
    return 1, None


def tool_names(body):
    names = []
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            names.append(t.get("name") or (t.get("function") or {}).get("name") or t.get("type"))
    return [n for n in names if n]


def responses_events(turn, body, script, n):
    rid = "resp_mock_%d" % n
    model = body.get("model", "mock-model")
    events = [sse("response.created", {"type": "response.created",
                                        "response": {"id": rid, "model": model, "status": "in_progress"}})]
    if turn == 1:
        names = tool_names(body)
        if "exec_command" in names or "shell" not in names:
            name, args = "exec_command", {"cmd": script.command}
        else:  # older tool surface: shell with an argv
            name, args = "shell", {"command": ["bash", "-lc", script.command]}
        item = {"type": "function_call", "id": "fc_mock_%d" % n, "call_id": "call_mock_%d" % n,
                "name": name, "arguments": json.dumps(args), "status": "completed"}
        events.append(sse("response.output_item.added",
                          {"type": "response.output_item.added", "output_index": 0, "item": item}))
        events.append(sse("response.output_item.done",
                          {"type": "response.output_item.done", "output_index": 0, "item": item}))
    else:
        mid = "msg_mock_%d" % n
        events.append(sse("response.output_item.added", {
            "type": "response.output_item.added", "output_index": 0,
            "item": {"type": "message", "id": mid, "role": "assistant", "status": "in_progress", "content": []}}))
        events.append(sse("response.output_text.delta", {
            "type": "response.output_text.delta", "item_id": mid, "output_index": 0,
            "content_index": 0, "delta": script.final}))
        item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": script.final, "annotations": []}]}
        events.append(sse("response.output_item.done",
                          {"type": "response.output_item.done", "output_index": 0, "item": item}))
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    events.append(sse("response.completed", {"type": "response.completed",
                                              "response": {"id": rid, "model": model, "status": "completed",
                                                           "usage": usage}}))
    return events


# ---------------------------------------------------------------- Messages API (claude)

def messages_turn(body):
    """Return (turn, tool_output_excerpt).

    2  -> the last user message carries a tool_result
    1  -> an agent request (offers the Bash tool)
    "aux" -> a side request (title, quota check, ...) that gets a plain text answer
    """
    msgs = body.get("messages") if isinstance(body, dict) else None
    if isinstance(msgs, list) and msgs:
        last = msgs[-1]
        content = last.get("content") if isinstance(last, dict) else None
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    return 2, text_of(block.get("content"))[:OUTPUT_EXCERPT]
    if "Bash" in tool_names(body):
        return 1, None
    return "aux", None


def messages_content(turn, script, n=1):
    if turn == 1:  # a new id per tool call: the claude TUI runs several prompts in one conversation
        return [{"type": "tool_use", "id": "toolu_mock_%d" % n, "name": "Bash",
                 "input": {"command": script.command}}], "tool_use"
    if turn == 2:
        return [{"type": "text", "text": script.final}], "end_turn"
    return [{"type": "text", "text": "mock"}], "end_turn"


def messages_events(turn, body, script, n):
    content, stop = messages_content(turn, script, n)
    model = body.get("model", "mock-model")
    msg = {"id": "msg_mock_%d" % n, "type": "message", "role": "assistant", "model": model,
           "content": [], "stop_reason": None, "stop_sequence": None,
           "usage": {"input_tokens": 10, "output_tokens": 1,
                     "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
    ev = [sse("message_start", {"type": "message_start", "message": msg})]
    for i, block in enumerate(content):
        if block["type"] == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        ev.append(sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
        ev.append(sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
        ev.append(sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(sse("message_delta", {"type": "message_delta",
                                    "delta": {"stop_reason": stop, "stop_sequence": None},
                                    "usage": {"output_tokens": 5}}))
    ev.append(sse("message_stop", {"type": "message_stop"}))
    return ev


def messages_json(turn, body, script, n):
    content, stop = messages_content(turn, script, n)
    return {"id": "msg_mock_%d" % n, "type": "message", "role": "assistant",
            "model": body.get("model", "mock-model"), "content": content,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}


# ---------------------------------------------------------------- HTTP plumbing

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-model/1"

    def log_message(self, fmt, *args):  # the JSON request log replaces the access log
        pass

    # -- helpers
    def read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            raw = b"".join(chunks)
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        enc = (self.headers.get("Content-Encoding") or "").lower()
        if enc == "gzip":
            raw = gzip.decompress(raw)
        elif enc == "deflate":
            raw = zlib.decompress(raw)
        elif enc == "zstd":  # codex in ChatGPT mode compresses its responses bodies
            raw = subprocess.run(["zstd", "-dcq"], input=raw, capture_output=True, check=True).stdout
        elif enc:
            raise ValueError("unsupported Content-Encoding: " + enc)
        return raw

    def base_record(self):
        h = self.headers
        rec = {
            "method": self.command,
            "path": self.path,
            "authorization": h.get("Authorization") is not None,
            "x_api_key": h.get("x-api-key") is not None,
            "user_agent": (h.get("User-Agent") or "")[:120],
            "host": h.get("Host"),
            "fields": sorted({k.lower() for k in h.keys()}),  # names only: what the wall lets through
        }
        sni = getattr(self.connection, "asbx_sni", None)
        if getattr(self.server, "tls", False):
            rec["sni"] = sni
        if self.server.log_secrets:
            rec.update(authorization_value=h.get("Authorization"), x_api_key_value=h.get("x-api-key"),
                       account_id_header=h.get("ChatGPT-Account-Id"))
        return rec

    def send_json(self, obj, status=200):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_sse(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")  # codex ends the turn only at EOF
        self.end_headers()
        for e in events:
            self.wfile.write(e)
            self.wfile.flush()
        self.close_connection = True

    def next_n(self):
        with self.server.n_lock:
            self.server.n += 1
            return self.server.n

    # -- verbs
    def do_GET(self):
        if (self.headers.get("Upgrade") or "").lower() == "websocket":
            rec = self.base_record()
            rec.update(api="websocket")
            self.server.log.write(rec)
            self.send_json({"error": "no websocket here"}, 426)
            return
        if self.server.log_secrets and urlsplit(self.path).path == "/v1/echo-auth":
            # an upstream that echoes the credential it got (test tokens only): the threat the
            # end-of-session secret scan is for (docs/CREDENTIALS.md "What inject mode cannot protect")
            rec = self.base_record()
            rec.update(api="echo_auth")
            self.server.log.write(rec)
            self.send_json({"authorization": self.headers.get("Authorization")})
            return
        if self.server.log_secrets and urlsplit(self.path).path == "/v1/echo-headers":
            # every field as it arrived, values too (test tokens only): what a header-echoing upstream hands back
            rec = self.base_record()
            rec.update(api="echo_headers")
            self.server.log.write(rec)
            self.send_json({"headers": [[k, v] for k, v in self.headers.items()]})
            return
        self.handle_other(b"")

    def do_HEAD(self):
        self.handle_other(b"")

    def do_PUT(self):
        self.handle_other(self.read_body())

    def do_DELETE(self):
        self.handle_other(self.read_body())

    def do_CONNECT(self):
        """A CLI that honours HTTPS_PROXY asks for a tunnel (claude's OAuth refresh goes to a
        fixed https host): logged as api "connect" with its target, refused with 403."""
        rec = self.base_record()
        rec.update(api="connect", target=self.path)
        self.server.log.write(rec)
        self.send_json({"error": "the mock tunnels nothing"}, 403)
        self.close_connection = True

    def do_OPTIONS(self):
        self.handle_other(b"")

    def do_POST(self):
        rec = self.base_record()
        if urlsplit(self.path).path.rstrip("/").endswith("/oauth/token"):
            self.handle_token(rec)
            return
        try:
            raw = self.read_body()
            body = json.loads(raw or b"{}")
        except (ValueError, OSError, zlib.error) as e:
            rec.update(api="bad-request", error=str(e)[:200])
            self.server.log.write(rec)
            self.send_json({"error": {"type": "invalid_request_error", "message": str(e)}}, 400)
            return
        path = urlsplit(self.path).path.rstrip("/")
        script = self.server.script
        if path.endswith("/responses"):
            turn, out = responses_turn(body)
            n = self.next_n()
            rec.update(api="responses", turn=turn, model=body.get("model"), stream=body.get("stream"),
                       tools=tool_names(body))
            if out is not None:
                rec["tool_output"] = out
            self.server.log.write(rec)
            self.send_sse(responses_events(turn, body, script, n))
        elif path.endswith("/messages/count_tokens"):
            rec.update(api="count_tokens")
            self.server.log.write(rec)
            self.send_json({"input_tokens": 10})
        elif path.endswith("/messages"):
            turn, out = messages_turn(body)
            n = self.next_n()
            rec.update(api="messages", turn=turn, model=body.get("model"), stream=bool(body.get("stream")),
                       tools=len(body.get("tools") or []))
            if out is not None:
                rec["tool_output"] = out
            self.server.log.write(rec)
            if body.get("stream"):
                self.send_sse(messages_events(turn, body, script, n))
            else:
                self.send_json(messages_json(turn, body, script, n))
        else:
            self.handle_other(raw, rec)

    def handle_token(self, rec):
        """An OAuth refresh: the request is logged (its grant type, never a token value) and
        answered with fresh fake tokens, so a CLI that refreshes goes on working."""
        raw = self.read_body()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = dict(kv.split("=", 1) for kv in raw.decode(errors="replace").split("&") if "=" in kv)
        rec.update(api="token", grant_type=body.get("grant_type") if isinstance(body, dict) else None)
        self.server.log.write(rec)
        now = int(time.time())
        claims = {"exp": now + 86400, "iat": now, "email": "refreshed@mock.invalid",
                  "https://api.openai.com/auth": {"chatgpt_account_id": "acct-mock", "chatgpt_plan_type": "pro"}}
        self.send_json({"access_token": fake_jwt(claims), "id_token": fake_jwt(claims),
                        "refresh_token": "mock-refresh-rotated-%d" % now, "expires_in": 86400,
                        "token_type": "Bearer", "scope": "user:inference user:profile"})

    def handle_other(self, raw, rec=None):
        rec = rec or self.base_record()
        path = urlsplit(self.path).path.rstrip("/")
        if path.endswith("/codex/models"):  # the ChatGPT backend's model list (codex ChatGPT mode)
            rec.update(api="models")
            obj = {"models": []}
        elif path.endswith("/wham/accounts/check"):
            rec.update(api="accounts_check")
            aid = self.server.account_id
            account = {"id": aid, "account_id": aid, "name": None, "structure": "personal", "plan_type": "pro",
                       "is_deactivated": False, "workspace_backend_origin": "https://chatgpt.com",
                       "account_routing_override": "NO_CONSTRAINT"}
            obj = {"accounts": [account], "account_ordering": [aid]}
        elif path == "/api/oauth/profile":
            rec.update(api="profile")
            obj = {"account": {"uuid": "00000000-0000-4000-8000-000000000001", "email": "dev@example.com",
                               "display_name": "dev", "has_claude_max": True, "has_claude_pro": False},
                   "organization": {"uuid": "00000000-0000-4000-8000-000000000002", "name": "mock",
                                    "organization_type": "claude_max", "billing_type": "stripe_subscription",
                                    "rate_limit_tier": "default_claude_max_20x"}}
        elif path.endswith("/models"):
            rec.update(api="models")
            obj = {"object": "list", "data": [{"id": "mock-model", "object": "model", "type": "model",
                                               "display_name": "Mock", "created_at": "2025-01-01T00:00:00Z"}],
                   "models": [], "has_more": False, "first_id": "mock-model", "last_id": "mock-model"}
        else:
            rec.update(api="other", body_bytes=len(raw))
            obj = {}
        self.server.log.write(rec)
        self.send_json(obj)


class TlsServer(ThreadingHTTPServer):
    """TLS on every accepted connection, the handshake in the request's own thread (a client that
    stalls in its handshake holds up nobody else). ALPN offers http/1.1 only."""
    tls = True

    def set_tls(self, cert, key):
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        self.ctx.set_alpn_protocols(["http/1.1"])

        def remember(sock, name, _ctx):
            sock.asbx_sni = name
        self.ctx.sni_callback = remember

    def finish_request(self, request, client_address):
        request.settimeout(30)
        try:
            tls = self.ctx.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            self.log.write({"api": "tls_failed", "error": str(e)[:200]})
            return
        tls.settimeout(None)
        try:
            super().finish_request(tls, client_address)
        finally:
            try:
                tls.close()
            except OSError:
                pass


def fake_jwt(claims):
    """An unsigned JWT (header.payload.signature) carrying `claims`; for the CLIs' parsers only."""
    import base64

    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return "%s.%s.%s" % (part({"alg": "none", "typ": "JWT"}), part(claims), part("mock-signature"))


def load_script(args):
    command, final = DEFAULT_COMMAND, DEFAULT_FINAL
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            data = json.load(f)
        command = data.get("command", command)
        final = data.get("final", final)
    if args.command is not None:
        command = args.command
    if args.final is not None:
        final = args.final
    return Script(command, final)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--script", help='JSON file {"command": "...", "final": "..."}')
    p.add_argument("--command", help="shell command the model asks the CLI to run (turn 1)")
    p.add_argument("--final", help="final assistant text (turn 2)")
    p.add_argument("--log", help="append one JSON line per request here")
    p.add_argument("--max-seconds", type=float, default=300.0, help="exit by itself after this long")
    p.add_argument("--tls-cert", help="serve TLS with this certificate chain (PEM)")
    p.add_argument("--tls-key", help="the certificate's key (PEM)")
    p.add_argument("--log-secrets", action="store_true", help="log credential header values, echo Authorization at GET /v1/echo-auth (test tokens only)")
    p.add_argument("--account-id", default="acct-mock", help="the account /wham/accounts/check lists")
    args = p.parse_args(argv)

    script = load_script(args)
    if args.log:
        open(args.log, "a").close()

    httpd = (TlsServer if args.tls_cert else ThreadingHTTPServer)((args.host, args.port), Handler)
    if args.tls_cert:
        httpd.set_tls(args.tls_cert, args.tls_key)
    httpd.log_secrets = args.log_secrets
    httpd.account_id = args.account_id
    httpd.daemon_threads = True
    httpd.script = script
    httpd.log = RequestLog(args.log)
    httpd.n = 0
    httpd.n_lock = threading.Lock()

    print("PORT=%d" % httpd.server_address[1], flush=True)

    def stop(*_):
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    timer = threading.Timer(args.max_seconds, stop)
    timer.daemon = True
    timer.start()
    try:
        httpd.serve_forever(poll_interval=0.2)
    finally:
        timer.cancel()
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
