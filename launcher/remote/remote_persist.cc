#include "launcher/remote/remote_persist.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <unistd.h>

#include "base/error.h"
#include "base/util.h"
#include "launcher/lifecycle/status.h"
#include "launcher/lifecycle/terminal.h"
#include "launcher/podman/gc.h"
#include "launcher/remote/quote.h"
#include "launcher/remote/ssh_exec.h"
#include "launcher/remote/ssh_session.h"

namespace asbx {
namespace {

using nlohmann::json;
const char* kProgram = "agent-sandbox";

struct Seats {
  RemoteOptions opts;
  std::vector<SeatHost> hosts;
  std::vector<std::string> notes;  // seats that could not be asked, and why
};

Seats load_seats(RemoteOptions opts) {
  UserFacts user = current_user_facts();
  if (opts.registry.empty()) opts.registry = default_registry_path(user);
  Registry registry = load_registry(opts.registry);
  return Seats{opts, seat_candidates(registry, opts.host), {}};
}

// The seat's own `ps --json`, each entry marked with the seat; nullopt when it cannot be asked.
std::optional<json> seat_sessions(SshConnection& conn) {
  Captured got = conn.capture("sandbox-run ps --json");
  json list = got.exit_status == 0 ? json::parse(got.out, nullptr, false) : json();
  if (!list.is_array()) return std::nullopt;
  for (auto& e : list) e["seat"] = conn.host().name;
  return list;
}

struct Found {
  std::unique_ptr<SshConnection> conn;
  json entry;
};

// The seat that runs session `id`, connected. Error(attach_refused) when none does, or it is not persistent.
Found find_session(Seats& seats, const std::string& id) {
  if (!is_plain_name(id, 64)) throw Error(ErrorKind::usage, "'" + id + "' is not a session id (1-64 letters, digits, '-', '_' or '.')");
  for (const auto& host : seats.hosts) {
    std::unique_ptr<SshConnection> conn;
    try {
      conn = std::make_unique<SshConnection>(host, SshOptions{});
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::host_key_rejected) throw;
      seats.notes.push_back(host.name + " unreachable");
      continue;
    }
    auto list = seat_sessions(*conn);
    if (!list) seats.notes.push_back(host.name + " did not answer ps");
    for (const auto& e : list.value_or(json::array()))
      if (e.value("session", "") == id) {
        if (!e.value("persist", false))
          throw Error(ErrorKind::attach_refused, "session '" + id + "' on " + host.name +
                                                     " is not persistent (started without --persist): only the terminal "
                                                     "that started it shows it");
        return Found{std::move(conn), e};
      }
    seats.notes.push_back(host.name + ": not there");
  }
  throw Error(ErrorKind::attach_refused, "no persistent session '" + id + "' on the registry's seats (" +
                                             join(seats.notes, "; ") + "; registry " + seats.opts.registry + ")");
}

// The session ended while this side watched: the seat's record joins the caller's ledger.
void keep_record(SshConnection& conn, const std::string& id) {
  if (auto record = fetch_seat_record(conn, id)) {
    (*record)["seat"] = conn.host().name;
    Request req;
    append_ledger(caller_ledger(req, current_user_facts()), *record);
  }
}

int failed(const char* command, const Error& e) {
  std::fprintf(stderr, "%s: %s: %s\n", kProgram, command, printable(e.what()).c_str());
  return e.exit_code();
}

}  // namespace

int remote_ps_main(const RemoteOptions& opts, bool as_json) {
  try {
    Seats seats = load_seats(opts);
    json all = json::array();
    for (const auto& host : seats.hosts) {
      try {
        SshConnection conn(host, SshOptions{});
        auto list = seat_sessions(conn);
        if (!list) throw Error(ErrorKind::ssh_failed, "sandbox-run ps --json gave no list");
        for (auto& e : *list) all.push_back(e);
      } catch (const Error& e) {
        std::fprintf(stderr, "%s: ps: warning: %s: %s\n", kProgram, printable(host.name).c_str(), printable(e.what()).c_str());
      }
    }
    if (as_json) std::cout << all.dump(2) << std::endl;
    else std::cout << ps_table(all) << std::flush;
    return 0;
  } catch (const Error& e) {
    return failed("ps", e);
  }
}

int remote_attach_main(const RemoteOptions& opts, const std::string& id) {
  try {
    Seats seats = load_seats(opts);
    Found found = find_session(seats, id);
    SignalPipe signals;
    RemoteExit ex;
    {
      TerminalGuard term(true, 0);
      ex = ssh_exec(*found.conn, "sandbox-run attach " + shell_quote(id), ::isatty(0), StdioFds{}, signals, false);
    }
    std::string seat = found.conn->host().name;
    if (ex.dropped)
      throw Error(ErrorKind::ssh_failed, seat + ": connection dropped: " + ex.drop_reason + "; session " + id + " goes on");
    if (ex.caller_signal) return 128 + ex.caller_signal;
    if (ex.exit_status < 0) throw Error(ErrorKind::ssh_failed, seat + ": no exit status from the seat");
    keep_record(*found.conn, id);
    return ex.exit_status;
  } catch (const Error& e) {
    return failed("attach", e);
  }
}

int remote_stop_main(const RemoteOptions& opts, const std::string& id) {
  try {
    Seats seats = load_seats(opts);
    Found found = find_session(seats, id);
    Captured got = found.conn->capture("sandbox-run stop " + shell_quote(id) + " 2>&1");
    std::fputs(got.out.c_str(), got.exit_status == 0 ? stdout : stderr);
    if (got.exit_status == 0) keep_record(*found.conn, id);
    return got.exit_status < 0 ? exit_code_of(ErrorKind::ssh_failed) : got.exit_status;
  } catch (const Error& e) {
    return failed("stop", e);
  }
}

}  // namespace asbx
