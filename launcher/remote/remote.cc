#include "launcher/remote/remote.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fdio.h"
#include "launcher/lifecycle/capture_log.h"
#include "launcher/remote/quote.h"
#include "launcher/remote/remote_state.h"
#include "launcher/remote/ssh_exec.h"
#include "launcher/lifecycle/diagnostics.h"
#include "launcher/lifecycle/status.h"
#include "launcher/lifecycle/terminal.h"
#include "base/util.h"
#include "state/plan_state.h"

namespace asbx {
namespace {

using nlohmann::json;
const char* kProgram = "agent-sandbox";
constexpr int kStoppedStateWaitSeconds = 20;  // the seat's grace (10 s) and its removal

void add(std::vector<std::string>& a, const char* flag, const std::string& value) {
  if (!value.empty()) a.insert(a.end(), {flag, value});
}

template <class T>
void add(std::vector<std::string>& a, const char* flag, const std::optional<T>& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (value) a.insert(a.end(), {flag, *value});
  } else {
    if (value) a.insert(a.end(), {flag, std::to_string(*value)});
  }
}


json fetch_record(SshConnection& conn, const std::string& id) {
  if (auto record = fetch_seat_record(conn, id)) return *record;
  return {{"id", id}, {"outcome", nullptr}, {"warnings", {"the seat's status record could not be fetched"}}};
}

// After a dropped connection the seat goes on alone: it sees its caller gone (SIGHUP), stops and
// removes the container and writes its record. A new connection (3 tries, 1 s apart: a killed
// sshd is restarted by systemd) waits for that record (at most 30 s), takes it and removes it
// from the seat; nullopt when the seat cannot be reached.
std::optional<json> record_after_drop(const SeatHost& host, const std::string& id) {
  std::string path = seat_status_path(id);
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) ::sleep(1);
    try {
      SshConnection conn(host, SshOptions{});
      Captured got = conn.capture("i=0; while [ ! -e " + path + " ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; " +
                                  "cat -- " + path + " && rm -f -- " + path);
      json record = got.exit_status == 0 ? json::parse(got.out, nullptr, false) : json();
      return record.is_object() ? std::optional<json>(record) : std::nullopt;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::ssh_failed) return std::nullopt;
    }
  }
  return std::nullopt;
}

struct Dispatch {
  Request req;
  RemoteOptions opts;
  std::string ledger;
  std::vector<std::string> tried;
  StatePlan state;     // --state-dir: where the seat's export goes on this machine
  SignalPipe signals;  // before the first connect: a Ctrl-C while connecting is queued
  UniqueFd log;        // --capture-log: the channel's stdout (the agent's two streams) goes here

  // With --capture-log the seat's sandbox-run (--capture-stdout) sends the agent's stdout and
  // stderr on the channel's stdout, into LOG as they arrive; its own lines come on the channel's
  // stderr, to ours. Without it, the agent's streams are ours, as locally.
  StdioFds stdio() const { return log ? StdioFds{0, log.get(), 2} : StdioFds{}; }

  int run(const std::vector<SeatHost>& candidates) {
    for (const auto& host : candidates) {
      std::unique_ptr<SshConnection> conn;
      try {
        conn = std::make_unique<SshConnection>(host, SshOptions{});
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::ssh_failed || !opts.host.empty()) throw;
        tried.push_back(host.name + " unreachable");
        continue;
      }
      if (auto code = attempt(*conn)) return *code;
      tried.push_back(host.name + " full");
    }
    throw Error(ErrorKind::no_seat, "no agent-seat host was reachable with free capacity: tried " + join(tried, "; ") +
                                        " (registry " + (opts.registry) + ")");
  }

  // The exit code to return, or nullopt when the seat was full and the next one may be tried.
  std::optional<int> attempt(SshConnection& conn) {
    RemoteExit ex;
    {
      TerminalGuard term(req.tty, 0);
      ex = ssh_exec(conn, seat_command(req, conn.host().capacity), req.tty, stdio(), signals);
    }
    if (req.persist && ex.claimed) return left_running(conn, ex);
    if (ex.dropped) return dropped(conn.host(), ex.drop_reason);
    if (ex.caller_signal) return stopped(conn, ex.caller_signal);
    if (ex.exit_status < 0) throw Error(ErrorKind::ssh_failed, conn.host().name + ": no exit status from the seat");
    json record = fetch_record(conn, req.id);
    bool full = !ex.claimed && record.value("error_kind", json()) == json("seat_full");
    if (full && opts.host.empty()) return std::nullopt;
    write_all(req.tty ? 1 : 2, ex.held.data(), ex.held.size());
    if (!state.dir.empty() && record.value("state", json()).is_object())
      record["state"] = state_json(fetch_state(conn, req.id, state, record["state"], 0));
    finish(record, conn.host().name);
    return ex.exit_status;
  }

  // A persistent session outlives this terminal and this connection: the seat's supervisor writes its
  // records when it ends. Here they are fetched only when it ended while this terminal was attached.
  int left_running(SshConnection& conn, const RemoteExit& ex) {
    std::string seat = conn.host().name;
    if (ex.dropped || ex.caller_signal) {
      std::fprintf(stderr, "\n%s: %s; session %s goes on on %s (reattach: agent-sandbox attach %s)\n", kProgram,
                   ex.dropped ? ("connection dropped: " + ex.drop_reason).c_str() : "detached by a signal", req.id.c_str(),
                   seat.c_str(), req.id.c_str());
      return ex.dropped ? exit_code_of(ErrorKind::ssh_failed) : 128 + ex.caller_signal;
    }
    if (auto record = fetch_seat_record(conn, req.id)) finish(*record, seat);
    return ex.exit_status;
  }

  // The caller's record says the link dropped; the seat's own record, when it can be fetched, says
  // what the seat did about it. Both reach the status file and the ledger.
  int dropped(const SeatHost& host, const std::string& why) {
    Error e(ErrorKind::ssh_failed, host.name + ": connection dropped: " + why);
    say(std::string(kProgram) + ": " + e.what());
    json record = early_failure_record(req.id, e);
    if (auto seat = record_after_drop(host, req.id)) record["seat_record"] = *seat;
    finish(record, host.name);
    return e.exit_code();
  }

  int stopped(SshConnection& conn, int sig) {
    std::string message = "stopped: the launcher received signal " + std::to_string(sig);
    say(std::string(kProgram) + ": " + message);
    json record = {{"id", req.id}, {"outcome", "killed"}, {"exit_code", 128 + sig}, {"cause", "signal"},
                   {"signal", sig}, {"message", message}};
    if (!state.dir.empty())  // the seat ends the session and keeps its state: wait for it, bounded
      record["state"] = state_json(fetch_state(conn, req.id, state, json(), kStoppedStateWaitSeconds));
    finish(record, conn.host().name);
    return 128 + sig;
  }

  void finish(json record, const std::string& seat) {
    log = UniqueFd();  // every byte that arrived is in LOG before the record says the session ended
    if (!req.capture_log.empty()) record["capture_log"] = req.capture_log;
    record["seat"] = seat;
    record["seats_tried"] = tried;
    if (!req.status_file.empty()) write_status_file(req.status_file, record);
    append_ledger(ledger, record);
  }
};

}  // namespace

std::string caller_ledger(const Request& req, const UserFacts& user) {
  if (!req.ledger.empty()) return req.ledger;
  return load_seat_config(default_seat_config_path(user), user).ledger;
}

std::optional<json> fetch_seat_record(SshConnection& conn, const std::string& id) {
  std::string path = seat_status_path(id);
  Captured got = conn.capture("cat -- " + path + " && rm -f -- " + path);
  json record = got.exit_status == 0 ? json::parse(got.out, nullptr, false) : json();
  return record.is_object() ? std::optional<json>(record) : std::nullopt;
}

bool wants_remote(const RemoteOptions& opts, const UserFacts& user) {
  struct stat st{};
  return !opts.registry.empty() || !opts.host.empty() || ::stat(default_registry_path(user).c_str(), &st) == 0;
}

std::vector<std::string> seat_argv(const Request& req, std::int64_t slots) {
  std::vector<std::string> a = {"sandbox-run", "--slots", std::to_string(slots), "--id", req.id};
  add(a, "--image", req.image);
  add(a, "--workspace", req.workspace);
  add(a, "--git-mirror", req.git_mirror);
  add(a, "--memory", req.memory);
  add(a, "--pids", req.pids);
  add(a, "--cpus", req.cpus);
  add(a, "--cpu-shares", req.cpu_shares);
  add(a, "--timeout", req.timeout);
  add(a, "--network", req.network);
  for (const auto& e : req.egress) add(a, "--egress", e);
  add(a, "--isolation", req.isolation);
  add(a, "--runtime", req.runtime);
  add(a, "--account", req.account);
  add(a, "--credential", req.credential);
  if (req.tty) a.push_back("--tty");
  if (req.persist) a.push_back("--persist");
  if (req.dry_run) a.push_back("--dry-run");
  if (req.state_export) a.push_back("--state-export");
  if (!req.capture_log.empty()) a.push_back("--capture-stdout");  // LOG itself is the caller's, never sent
  a.push_back("--");
  a.insert(a.end(), req.argv.begin(), req.argv.end());
  return a;
}

std::string seat_status_path(const std::string& session_id) {
  return "\"$XDG_RUNTIME_DIR\"/agent-sandbox-status." + session_id + ".json";  // the id is validated
}

std::string seat_command(const Request& req, std::int64_t slots) {
  std::vector<std::string> argv = seat_argv(req, slots);
  return argv[0] + " --status-file " + seat_status_path(req.id) + " " +
         shell_join(std::vector<std::string>(argv.begin() + 1, argv.end()));
}

int run_remote(Request req, const RemoteOptions& given) {
  RemoteOptions opts = given;
  bool log_created = false;  // usage and config errors come first: then there is no LOG and stdout is empty
  try {
    UserFacts user = current_user_facts();
    if (opts.registry.empty()) opts.registry = default_registry_path(user);
    if (req.id.empty()) req.id = new_session_id(current_session_facts().now_unix);
    validate_session_id(req.id);
    Registry registry = load_registry(opts.registry);
    auto candidates = seat_candidates(registry, opts.host);
    StatePlan state = caller_state_plan(req, load_seat_config(default_seat_config_path(user), user));
    req.state_export = !state.dir.empty();
    Dispatch d{req, opts, caller_ledger(req, user), {}, state, {}, {}};
    if (!req.capture_log.empty()) {
      d.log = open_capture_log(req.capture_log);  // before the first connect, as locally before the container
      log_created = true;
    }
    int code = d.run(candidates);
    flush_diagnostics();
    return code;
  } catch (const Error& e) {
    say(std::string(kProgram) + ": " + e.what());
    json record = early_failure_record(req.id, e);
    if (log_created) record["capture_log"] = req.capture_log;
    if (!req.status_file.empty()) write_status_file(req.status_file, record);
    flush_diagnostics();
    return e.exit_code();
  }
}

}  // namespace asbx
