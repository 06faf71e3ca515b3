#include "launcher/podman/gc.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "base/error.h"
#include "base/util.h"
#include "launcher/lifecycle/local.h"
#include "launcher/persist/commands.h"
#include "launcher/podman/deferred_removal.h"
#include "launcher/podman/podman_api.h"
#include "launcher/pool/pool_gc.h"

// `ps`: the seat's sessions as gc judges them (launcher/podman/gc.h), as JSON or a table.
namespace asbx {
namespace {

std::string age_text(std::int64_t seconds) {
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 7200) return std::to_string(seconds / 60) + "m";
  return std::to_string(seconds / 3600) + "h";
}

}  // namespace

nlohmann::json ps_entry(const LiveSession& s, const HostFacts& host, const std::string& terminal) {
  std::string why = orphan_reason(s, host);
  auto or_null = [](const std::string& v) { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); };
  nlohmann::json left = nullptr;
  if (s.timeout_ms > 0) left = std::max<std::int64_t>(0, s.started_unix + s.timeout_ms / 1000 - host.now_unix);
  return {{"session", s.session},        {"owner", s.owner},
          {"container", s.container_name}, {"container_id", s.container_id},
          {"state", s.state},            {"started_unix", s.started_unix},
          {"timeout_ms", s.timeout_ms},  {"left_s", left},
          {"persist", s.persist},        {"terminal", or_null(terminal)}, {"wall", s.wall},
          {"launcher_pid", s.launcher_pid}, {"orphan", or_null(why)}, {"odd", or_null(s.odd)},
          {"age_s", host.now_unix - s.started_unix}};
}

std::string ps_table(const nlohmann::json& entries) {
  bool seats = false;
  for (const auto& e : entries) seats = seats || e.contains("seat");
  auto text = [](const nlohmann::json& e, const char* k) {
    return e.contains(k) && e[k].is_string() ? e[k].get<std::string>() : std::string("-");
  };
  auto secs = [](const nlohmann::json& e, const char* k, std::int64_t scale) {
    return e.contains(k) && e[k].is_number_integer() && e[k].get<std::int64_t>() >= 0 ? age_text(e[k].get<std::int64_t>() / scale)
                                                                                     : std::string("-");
  };
  char line[512];
  std::snprintf(line, sizeof line, "%-*s%-28s %-10s %-8s %6s %9s %6s %-9s %-6s %8s  %s\n", seats ? 11 : 0, seats ? "SEAT" : "",
                "SESSION", "OWNER", "STATE", "AGE", "TIMEOUT", "LEFT", "TERMINAL", "WALL", "LAUNCHER", "ORPHAN");
  std::string out = line;
  for (const auto& e : entries) {
    std::string orphan = e.contains("orphan") && e["orphan"].is_string() ? e["orphan"].get<std::string>() : "";
    std::string timeout = e.value("timeout_ms", std::int64_t{0}) > 0 ? secs(e, "timeout_ms", 1000) : "-";
    std::snprintf(line, sizeof line, "%-*s%-28s %-10s %-8s %6s %9s %6s %-9s %-6s %8ld  %s\n", seats ? 11 : 0,
                  seats ? text(e, "seat").c_str() : "", text(e, "session").c_str(), text(e, "owner").c_str(),
                  text(e, "state").c_str(), secs(e, "age_s", 1).c_str(), timeout.c_str(), secs(e, "left_s", 1).c_str(),
                  text(e, "terminal").c_str(), text(e, "wall").c_str(), e.value("launcher_pid", 0L), orphan.c_str());
    out += line;
  }
  return out;
}

int ps_main(const std::string& program, bool json) {
  try {
    SeatConfig seat = current_seat_config();
    PodmanApi api(seat.socket);
    HostFacts host = current_host_facts();
    nlohmann::json out = nlohmann::json::array();
    for (auto s : list_sessions(api)) {
      apply_pool_claim(s);
      if (s.pool && !s.pool_claimed) continue;  // a member waiting for a claim is no session
      std::string dir = session_runtime_dir(s, seat.runtime_dir);  // its seat config's, when another's
      out.push_back(ps_entry(s, host, s.persist ? attach_state(dir, s.session) : ""));
      bool handed = read_removal_marker(dir, s.container_id).present;  // answered, being removed
      out.back()["removal"] = handed ? nlohmann::json("deferred") : nlohmann::json(nullptr);
    }
    if (json) std::cout << out.dump(2) << std::endl;
    else std::cout << ps_table(out) << std::flush;
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: ps: %s\n", program.c_str(), printable(e.what()).c_str());
    return e.exit_code();
  }
}

}  // namespace asbx
