// Sessions seen through their containers' labels: `agent-sandbox ps` lists them and
// `agent-sandbox gc` removes those whose launcher is gone (SIGKILL, crash, reboot) or
// whose timeout has passed. Every launch runs a quiet gc first. See docs/LIFECYCLE.md.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace asbx {

class PodmanApi;

// One container carrying the agent-sandbox.session label.
struct LiveSession {
  std::string container_id;
  std::string container_name;
  std::string session;
  std::string owner;
  std::string state;  // podman's: created, running, exited, ...
  std::int64_t started_unix = 0;
  std::int64_t timeout_ms = 0;
  long launcher_pid = 0;  // 0 when the label is missing: such a container is never judged
  std::string boot_id;
  std::string wall = "runc";  // label agent-sandbox.isolation (absent: runc), docs/ISOLATION.md
  bool persist = false;  // label agent-sandbox.persist: a supervisor owns it; terminals attach
  bool pool = false;     // label agent-sandbox.pool: a warm pool member (launcher/pool/pool.h)
  std::string runtime_dir;  // label agent-sandbox.runtime-dir: its seat config's (absent: made before the label)
  std::string pool_runtime_dir;  // label agent-sandbox.pool-runtime-dir: where its claim file is
  std::string seat_config;  // label agent-sandbox.seat-config: the seat config file it was made from (absent: none, or before the label)
  std::string pool_session;      // the member's own id (its session dir's name); `session` becomes the claim's
  bool pool_claimed = false;  // its claim file names the session's launcher (apply_pool_claim)
  bool pool_session_ran = false;  // ... and a session (not gc's or a fill's claim before a removal)
  std::string odd;  // why its labels cannot be judged ("" = fine): such a container is skipped with a warning
};

struct HostFacts {
  std::string boot_id;
  std::int64_t now_unix = 0;
  // Is `pid` the launcher that labelled its container at `started_unix`? (pid reuse aware)
  std::function<bool(long pid, std::int64_t started_unix)> launcher_alive;
};

// A launcher may still be killing and deleting for this long after its timeout.
constexpr std::int64_t kTimeoutSlackSeconds = 60;

LiveSession session_from_list_entry(const nlohmann::json& entry);
// Why the container should be removed, or "" to keep it. Pure.
std::string orphan_reason(const LiveSession& s, const HostFacts& host);
HostFacts current_host_facts();

std::vector<LiveSession> list_sessions(PodmanApi& api);
// The runtime dir of the seat config `s` belongs to: its label (a member's pool label), else `own`
// (a container made before the label). Seat configs sharing one service each judge their own:
// their removal markers, session dirs and ledger are theirs. Pure.
std::string session_runtime_dir(const LiveSession& s, const std::string& own);
// Why an unclaimed member, its keeper alive, is gc's all the same: the seat config it was made for
// was deleted, so no session claims it and no `pool fill` of that seat removes it. "" otherwise.
std::string idle_member_of_a_deleted_seat(const LiveSession& s, const std::function<bool(const std::string&)>& exists);
// Whether `own`'s gc leaves `s` to another seat's: its runtime dir is another that still exists
// (EXISTS: as its owner's, gc.cc), and the seat config it was made from (when labelled) too. A seat
// whose runtime dir or config file is gone has no gc of its own left: any seat's removes its orphans'
// containers, and acts in that dir never. (A killed launcher's seat tmpfs keeps its runtime dir after
// the config went: docs/THREATS.md.)
bool judged_elsewhere(const LiveSession& s, const std::string& own, const std::function<bool(const std::string&)>& exists);
// Removes every orphan and its session dir under `runtime_dir` (staged credential copies
// a killed launcher left); each removal is one line (container, session, reason) in
// `removed`, each container with odd labels one line in `skipped` (kept, never judged), and
// one record in `ledger` (unless empty): the session's launcher could not write one.
// Returns how many removals failed. A gVisor session's container is removed through `gvisor_api`
// when given (the runsc service): a service whose runtimes do not name runsc cannot stop it.
int collect_orphans(PodmanApi& api, const HostFacts& host, const std::string& runtime_dir,
                    std::vector<std::string>& removed, std::vector<std::string>* skipped = nullptr,
                    const std::string& ledger = "", PodmanApi* gvisor_api = nullptr);
// The ledger line of an orphan gc removed: outcome killed, cause "orphaned", why in the message.
nlohmann::json orphan_record(const LiveSession& s, const std::string& why);
// The text only gc's orphan line for CONTAINER_ID has, as the ledger holds it (compact JSON, keys
// sorted): what a second gc looks for before it writes the line again.
std::string orphan_line_key(const std::string& container_id);

// The subcommands; `program` prefixes messages. Exit 0, or a launcher code.
int gc_main(const std::string& program, bool json);
int ps_main(const std::string& program, bool json);
// What ps prints: one object per session (plus "terminal": attached/detached/null, "left_s"), and
// the same as a table (a SEAT column when the objects carry "seat": ps through a registry).
nlohmann::json ps_entry(const LiveSession& s, const HostFacts& host, const std::string& terminal);
std::string ps_table(const nlohmann::json& entries);
// Launch-time gc: quiet, never fails the launch.
void gc_before_launch(const std::string& socket, const std::string& runtime_dir, const std::string& ledger = "",
                      const std::string& gvisor_socket = "");

}  // namespace asbx
