#include "launcher/podman/gc.h"
#include "launcher/pool/pool_gc.h"
#include "launcher/lifecycle/runtime_dir.h"
#include "launcher/lifecycle/seat_tmpfs.h"
#include "launcher/lifecycle/session_owner.h"
#include "launcher/lifecycle/session_dir.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "launcher/lifecycle/local.h"
#include "launcher/lifecycle/seccomp_file.h"
#include "launcher/persist/commands.h"
#include "launcher/podman/deferred_removal.h"
#include "launcher/podman/liveness.h"
#include "launcher/podman/podman_api.h"
#include "base/request.h"
#include "launcher/state/export.h"
#include "launcher/lifecycle/status.h"
#include "plan/isolation.h"
#include "base/util.h"

namespace asbx {
namespace {

// Anyone who can create a container on the seat can set these labels: they are read
// strictly (all digits, in range) and an odd one makes the container unjudgeable.
constexpr std::int64_t kMaxLabelNumber = 1'000'000'000'000'000;  // way past any pid, time or timeout

std::int64_t label_number(const nlohmann::json& labels, const char* key, std::string& odd) {
  if (!labels.is_object() || !labels.contains(key)) return 0;
  const auto& v = labels[key];
  std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  bool digits = v.is_string() && !text.empty() && text.size() <= 16 &&
                text.find_first_not_of("0123456789") == std::string::npos;
  std::int64_t n = digits ? std::stoll(text) : -1;
  if (n >= 0 && n <= kMaxLabelNumber) return n;
  if (odd.empty()) odd = "label " + std::string(key) + " is '" + text.substr(0, 64) + "', not a number";
  return 0;
}

std::string label_text(const nlohmann::json& labels, const char* key) {
  return labels.is_object() && labels.contains(key) && labels[key].is_string() ? labels[key].get<std::string>() : "";
}

std::string string_field(const nlohmann::json& e, const char* key) {
  return e.is_object() && e.contains(key) && e[key].is_string() ? e[key].get<std::string>() : "";
}

constexpr std::int64_t kMaxPid = 4'194'304;  // the kernel's PID_MAX_LIMIT
constexpr int kGcLockWaitMs = 200;  // a launcher holds a session dir's lock while it writes its owner

}  // namespace

LiveSession session_from_list_entry(const nlohmann::json& e) {
  nlohmann::json labels = e.is_object() && e.contains("Labels") ? e["Labels"] : nlohmann::json::object();
  LiveSession s;
  s.container_id = string_field(e, "Id");
  if (e.is_object() && e.contains("Names") && e["Names"].is_array() && !e["Names"].empty() && e["Names"][0].is_string())
    s.container_name = e["Names"][0];
  s.session = label_text(labels, "agent-sandbox.session");
  s.owner = label_text(labels, "agent-sandbox.owner");
  s.state = string_field(e, "State");
  s.started_unix = label_number(labels, "agent-sandbox.started", s.odd);
  s.timeout_ms = label_number(labels, "agent-sandbox.timeout-ms", s.odd);
  s.launcher_pid = static_cast<long>(label_number(labels, "agent-sandbox.launcher-pid", s.odd));
  s.boot_id = label_text(labels, "agent-sandbox.boot-id");
  s.persist = label_text(labels, "agent-sandbox.persist") == "1";
  s.pool = !label_text(labels, "agent-sandbox.pool").empty();
  s.runtime_dir = label_text(labels, "agent-sandbox.runtime-dir");
  s.pool_runtime_dir = label_text(labels, "agent-sandbox.pool-runtime-dir");
  s.seat_config = label_text(labels, "agent-sandbox.seat-config");
  if (label_text(labels, "agent-sandbox.isolation") == "gvisor") s.wall = "gvisor";
  if (s.odd.empty() && s.launcher_pid > kMaxPid)
    s.odd = "label agent-sandbox.launcher-pid is " + std::to_string(s.launcher_pid) + ", past any pid";
  if (s.odd.empty() && s.container_id.empty()) s.odd = "podman listed it without an Id";
  if (s.odd.empty() && s.container_name.empty()) s.odd = "podman listed it without a name";
  return s;
}

std::string orphan_reason(const LiveSession& s, const HostFacts& host) {
  if (!s.odd.empty() || s.launcher_pid <= 0 || s.boot_id.empty()) return "";
  if (s.boot_id != host.boot_id) return "the seat rebooted since its launch (boot id " + s.boot_id + ")";
  if (!host.launcher_alive(s.launcher_pid, s.started_unix))
    return "its launcher (pid " + std::to_string(s.launcher_pid) + ") is gone";
  if (s.timeout_ms > 0 && host.now_unix > s.started_unix + s.timeout_ms / 1000 + kTimeoutSlackSeconds)
    return "its timeout of " + std::to_string(s.timeout_ms) + " ms passed " +
           std::to_string(host.now_unix - s.started_unix - s.timeout_ms / 1000) + " s ago";
  return "";
}

HostFacts current_host_facts() {
  HostFacts h;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::getline(boot, h.boot_id);
  h.now_unix = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch()).count();
  h.launcher_alive = launcher_alive;
  return h;
}

std::vector<LiveSession> list_sessions(PodmanApi& api) {
  std::vector<LiveSession> out;
  nlohmann::json list = api.list_by_label("agent-sandbox.session");
  if (list.is_array())
    for (const auto& e : list) out.push_back(session_from_list_entry(e));
  return out;
}

std::string session_runtime_dir(const LiveSession& s, const std::string& own) {
  const std::string& labelled = s.pool ? s.pool_runtime_dir : s.runtime_dir;
  return labelled.empty() || labelled[0] != '/' ? own : labelled;  // never a path relative to gc's own dir
}

std::string idle_member_of_a_deleted_seat(const LiveSession& s, const std::function<bool(const std::string&)>& exists) {
  if (!s.pool || s.pool_claimed || s.seat_config.empty() || s.seat_config[0] != '/' || exists(s.seat_config)) return "";
  return "its seat config " + s.seat_config + " is gone (no claim or fill of that seat is left)";
}

bool judged_elsewhere(const LiveSession& s, const std::string& own, const std::function<bool(const std::string&)>& exists) {
  std::string dir = session_runtime_dir(s, own);
  if (dir == own || !exists(dir)) return false;
  return s.seat_config.empty() || s.seat_config[0] != '/' || exists(s.seat_config);
}

// The label is only trusted as a dir name when it is a valid session id (no "/", no ".."). Under the
// dir's lock, and only when no live launcher owns it: a new launcher of the id may have taken it.
void remove_session_dir(const std::string& runtime_dir, const std::string& session, const HostFacts& host) {
  try {
    validate_session_id(session);
  } catch (const Error&) {
    return;
  }
  if (runtime_dir.empty()) return;
  const std::string dir = runtime_dir + "/" + session;
  with_session_dir_locked(dir, kGcLockWaitMs, [&] {
    std::error_code ignored;
    if (!owner_holds(dir, host.boot_id, host.launcher_alive) && unmount_seat_tmpfs(dir))  // never across a mount left
      std::filesystem::remove_all(dir, ignored);  // never follows links
  });
}

std::string orphan_line_key(const std::string& container_id) {
  return "\"cause\":\"orphaned\",\"container_id\":\"" + container_id + "\"";  // keys sorted, side by side
}

nlohmann::json orphan_record(const LiveSession& s, const std::string& why) {
  return {{"id", s.session},          {"outcome", "killed"},     {"exit_code", nullptr},
          {"agent_exit_code", nullptr}, {"error_kind", nullptr}, {"message", "removed by gc: " + why},
          {"failed", "killed"},       {"cause", "orphaned"},     {"container_id", s.container_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.container_id)},
          {"container_removed", true}, {"started_unix", s.started_unix}};
}

// A session dir no container leads to (its launcher killed before its create, or its container removed
// by another hand: a gVisor session's seat tmpfs) goes; its record is written as an orphan's.
void collect_stale_tmpfs(const std::string& runtime_dir, const std::set<std::string>& listed, const HostFacts& host,
                         std::vector<std::string>& removed, const std::string& ledger) {
  for (const auto& stale : collect_stale_seat_tmpfs(runtime_dir, listed, host.boot_id, host.launcher_alive)) {
    LiveSession s{"", "", stale.session, "", "", stale.started_unix};
    if (!ledger.empty()) append_ledger(ledger, orphan_record(s, stale.why));  // no container id: it is gone
    removed.push_back("removed the session dir of " + stale.session + ": " + stale.why);
  }
}

// A runtime dir or seat config file is there as a launcher finds it: through links (a dangling one
// is none: the launcher would read no file and use the default seat's). OWNER_UID (-1: unknown):
// one another user made again in its place, after its seat was taken down, is not the seat's.
bool there_as(const std::string& path, uid_t owner_uid) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return errno != ENOENT;
  return owner_uid == static_cast<uid_t>(-1) || st.st_uid == owner_uid || st.st_uid == 0;
}

uid_t uid_of(const std::string& user) {
  struct passwd* pw = user.empty() ? nullptr : ::getpwnam(user.c_str());
  return pw ? pw->pw_uid : static_cast<uid_t>(-1);
}

int collect_orphans(PodmanApi& api, const HostFacts& host, const std::string& runtime_dir,
                    std::vector<std::string>& removed, std::vector<std::string>* skipped,
                    const std::string& ledger, PodmanApi* gvisor_api) {
  int failures = 0;
  std::set<std::string> listed;  // what collect_stale_tmpfs leaves to this loop
  std::set<std::string> ids;  // what collect_stale_claims leaves
  for (auto s : list_sessions(api)) {
    listed.insert(s.session);
    ids.insert(s.container_id);
    const std::string dir = session_runtime_dir(s, runtime_dir);  // its own, or another seat's
    // Another seat's runtime dir: gc reads a claim there only beneath a trusted walk, and acts in it never.
    const bool foreign = dir != runtime_dir;
    bool known = true;
    if (foreign) known = apply_foreign_pool_claim(s, dir);
    else apply_pool_claim(s);
    listed.insert(s.session);  // a claimed member carries its session's own dir (launcher/pool/take.h)
    if (!s.odd.empty()) {
      if (skipped) skipped->push_back("skipped container " + (s.container_id.empty() ? "(no id)" : s.container_id.substr(0, 12)) +
                                      " (session '" + s.session.substr(0, 64) + "'): " + s.odd);
      continue;
    }
    const uid_t owner = foreign ? uid_of(s.owner) : static_cast<uid_t>(-1);
    auto stands = [owner](const std::string& path) { return there_as(path, owner); };
    if (judged_elsewhere(s, runtime_dir, stands)) continue;  // its seat's gc: its markers, its ledger
    if (!known) continue;  // a member whose claim someone else could have written: left (THREATS)
    std::string why = orphan_reason(s, host);
    bool keeper_lives = why.empty() && !(why = idle_member_of_a_deleted_seat(s, stands)).empty();
    if (why.empty()) continue;
    // An unclaimed member: a claim may have landed since its file was read, and its keeper is
    // killed only after it. gc claims it itself before removing it; a session's claim wins instead.
    // (No launcher of another seat that is gone is left to claim one.)
    if (s.pool && !s.pool_claimed && !foreign && !claim_for_removal(s)) continue;
    // A session answered before its removal (deferred_removal.h): its remover is at work, or it
    // died and its record is written already (no orphan line).
    RemovalMarker handed = foreign ? RemovalMarker{} : read_removal_marker(dir, s.container_id);
    if (handed.present && host.launcher_alive(handed.pid, handed.started_unix)) continue;
    if (handed.present) why = "its remover (pid " + std::to_string(handed.pid) + ") ended before it; its record was written";
    bool was_there = true;  // two concurrent gc runs: only the one that removed it writes the line
    PodmanApi& by = s.wall == "gvisor" && gvisor_api ? *gvisor_api : api;
    if (!by.remove_retrying(s.container_id, &was_there)) {
      ++failures;
      continue;
    }
    if (keeper_lives) end_keeper(s, host.launcher_alive);  // it waits to be claimed for ever, holding its range
    if (!foreign) {
      remove_session_dir(dir, s.pool ? s.pool_session : s.session, host);
      // and the claiming session's own dir, unless a new launcher of its id holds it by now
      if (s.pool && s.pool_session_ran) remove_session_dir(s.pool_runtime_dir, s.session, host);
      if (handed.present) ::unlink(removal_marker_path(dir, s.container_id).c_str());
      if (s.pool) drop_pool_claim(s.pool_runtime_dir, s.container_id);
    } else if (there_as(dir, static_cast<uid_t>(-1))) {
      why += "; its runtime dir " + dir + " is left to its owner";
    }
    bool ran = !s.pool || s.pool_session_ran;  // an unclaimed member never ran a session: no ledger line
    // Two gcs removing it at once both hear 200 from podman: only the first orphan line is kept
    // (the launcher's own line, when it wrote one, stays beside it).
    if (!ledger.empty() && was_there && !handed.present && ran)
      append_ledger(ledger, orphan_record(s, why), orphan_line_key(s.container_id));
    removed.push_back("removed " + s.container_name + " (session " + s.session + "): " + why);
  }
  if (runtime_dir.empty()) return failures;
  collect_stale_tmpfs(runtime_dir, listed, host, removed, ledger);
  for (const auto& line : collect_stale_claims(runtime_dir, ids, host.now_unix)) removed.push_back(line);
  for (const auto& name : collect_stale_profiles(runtime_dir, host.now_unix))  // a launcher killed in its create
    removed.push_back("removed the seccomp profile " + name + " of a launcher that is gone");
  return failures;
}

void gc_before_launch(const std::string& socket, const std::string& runtime_dir, const std::string& ledger,
                      const std::string& gvisor_socket) {
  try {
    PodmanApi api(socket), gvisor(gvisor_socket.empty() ? socket : gvisor_socket);
    std::vector<std::string> removed;
    collect_orphans(api, current_host_facts(), runtime_dir, removed, nullptr, ledger, &gvisor);
  } catch (const std::exception&) {
    // The session's own first call reports an unreachable service with its own code.
  }
}

int gc_main(const std::string& program, bool json) {
  try {
    SeatConfig seat = current_seat_config();
    check_runtime_dir(seat);  // gc acts on what it finds there
    PodmanApi api(seat.socket), gvisor(runsc_socket(seat));
    std::vector<std::string> removed, skipped;
    int failures = collect_orphans(api, current_host_facts(), seat.runtime_dir, removed, &skipped, seat.ledger, &gvisor);
    for (const auto& line : skipped) std::fprintf(stderr, "%s: gc: warning: %s\n", program.c_str(), printable(line).c_str());
    for (auto& line : remove_stale_exports(state_export_area(seat), current_host_facts().now_unix, kStaleExportSeconds))
      removed.push_back(line);
    if (json)
      std::cout << nlohmann::json{{"removed", removed}, {"skipped", skipped}, {"failed", failures}}.dump(2) << std::endl;
    else for (const auto& line : removed) std::cout << line << "\n";
    if (failures == 0) return 0;
    throw Error(ErrorKind::internal, std::to_string(failures) + " orphaned container(s) could not be removed");
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: gc: %s\n", program.c_str(), printable(e.what()).c_str());
    return e.exit_code();
  }
}

}  // namespace asbx
