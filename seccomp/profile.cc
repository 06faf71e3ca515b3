#include "seccomp/profile.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <sys/socket.h>

#include "base/error.h"
#include "base/sha256.h"
#include "seccomp/table.h"

namespace asbx {
namespace {

using nlohmann::json;

json arg(int index, std::uint64_t value, const char* op, std::uint64_t value_two = 0) {
  return {{"index", index}, {"value", value}, {"valueTwo", value_two}, {"op", op}};
}

// A refusal: the kernel answers the row's errno, or (`notify`, a recorded row) the session's
// recorder does, with the same errno, after counting it (launcher/lifecycle/seccomp_recorder.h).
json rule(const std::vector<std::string>& names, const SeccompRow& row, bool notify, json args = json::array()) {
  json r = {{"names", names}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", row.errno_value}, {"args", std::move(args)},
            {"comment", "agent-sandbox: " + row.family}};
  if (notify && row.recorded) {
    r["action"] = "SCMP_ACT_NOTIFY";
    r.erase("errnoRet");
  }
  return r;
}

json allow(const std::string& name, json args) {
  return {{"names", {name}}, {"action", "SCMP_ACT_ALLOW"}, {"args", std::move(args)}, {"comment", "agent-sandbox"}};
}

// The names of every table row: taken out of the default's entries, whatever their action.
std::set<std::string> table_names(const std::string& wall) {
  std::set<std::string> out;
  for (const auto& row : seccomp_table())
    if (seccomp_row_applies(row, wall)) out.insert(row.calls.begin(), row.calls.end());
  return out;
}

// Does the default allow `name` in any entry (possibly under conditions)? Only then may the table
// allow part of it.
bool default_allows(const json& base, const std::string& name) {
  for (const auto& entry : base["syscalls"]) {
    if (entry.value("action", "") != "SCMP_ACT_ALLOW") continue;
    if (entry.value("name", "") == name) return true;
    if (entry.contains("names") && std::find(entry["names"].begin(), entry["names"].end(), name) != entry["names"].end())
      return true;
  }
  return false;
}

json without_table_names(const json& entries, const std::string& wall) {
  std::set<std::string> ours = table_names(wall);
  json out = json::array();
  for (json entry : entries) {
    if (ours.count(entry.value("name", ""))) continue;
    if (entry.contains("names")) {
      json kept = json::array();
      for (const auto& n : entry["names"])
        if (!n.is_string() || !ours.count(n.get<std::string>())) kept.push_back(n);
      if (kept.empty()) continue;
      entry["names"] = kept;
    }
    out.push_back(entry);
  }
  return out;
}

void clone_rules(const SeccompRow& row, bool allowed, bool notify, json& out) {
  if (allowed) out.push_back(allow("clone", json::array({arg(0, kCloneNewMask, "SCMP_CMP_MASKED_EQ", 0)})));
  for (std::uint64_t flag : clone_new_flags())
    out.push_back(rule({"clone"}, row, notify, json::array({arg(0, flag, "SCMP_CMP_MASKED_EQ", flag)})));
}

void socket_rules(const SeccompRow& row, bool allowed, bool notify, json& out) {
  std::set<int> open;
  if (allowed) {
    for (const auto& f : socket_families_allowed()) {
      // AF_INET/AF_INET6 are allowed by type and protocol (inet_protocol_rules), not whole.
      if (!inet_family(f.number)) out.push_back(allow("socket", json::array({arg(0, f.number, "SCMP_CMP_EQ")})));
      open.insert(f.number);
    }
    out.push_back(allow("socket", json::array({arg(0, kAfNetlink, "SCMP_CMP_EQ"), arg(2, kNetlinkRoute, "SCMP_CMP_EQ")})));
    out.push_back(rule({"socket"}, row, notify, json::array({arg(0, kAfNetlink, "SCMP_CMP_EQ"), arg(2, kNetlinkRoute, "SCMP_CMP_NE")})));
    open.insert(kAfNetlink);
  }
  for (int family = 0; family < kAfMax; ++family)
    if (!open.count(family)) out.push_back(rule({"socket"}, row, notify, json::array({arg(0, family, "SCMP_CMP_EQ")})));
  out.push_back(rule({"socket"}, row, notify, json::array({arg(0, kAfMax, "SCMP_CMP_GE")})));
}

void personality_rules(bool allowed, json& out) {
  if (!allowed) return;  // the default action refuses it whole
  for (std::uint64_t persona : {std::uint64_t(0), std::uint64_t(0xffffffff)})
    out.push_back(allow("personality", json::array({arg(0, persona, "SCMP_CMP_EQ")})));
}

// AF_INET/AF_INET6 of any type but those kInetProtocols names (the type's low 4 bits). When the
// default refuses socket, socket_rules refused these families whole: nothing to add.
void inet_type_rules(const SeccompRow& row, bool allowed, bool notify, json& out) {
  if (!allowed) return;
  std::set<std::pair<int, int>> open;
  for (const auto& p : inet_protocols_allowed()) open.insert({p.family, p.type});
  for (int family : {AF_INET, AF_INET6})
    for (std::uint64_t type = 0; type <= kSocketTypeMask; ++type)
      if (!open.count({family, int(type)}))
        out.push_back(rule({"socket"}, row, notify, json::array({arg(0, family, "SCMP_CMP_EQ"),
                                                         arg(1, kSocketTypeMask, "SCMP_CMP_MASKED_EQ", type)})));
}

// The allowed (family, type) pairs: their protocols allowed one by one (64-bit equality: exact
// under the kernel's int truncation), every other value refused by disjoint rules (aligned blocks
// below kProtocolBlock, then everything at or above it).
void inet_protocol_rules(const SeccompRow& row, bool allowed, bool notify, json& out) {
  if (!allowed) return;
  for (const auto& p : inet_protocols_allowed()) {
    json head = json::array({arg(0, p.family, "SCMP_CMP_EQ"), arg(1, kSocketTypeMask, "SCMP_CMP_MASKED_EQ", p.type)});
    auto with = [&](json third) { json a = head; a.push_back(std::move(third)); return a; };
    for (std::uint64_t protocol : p.protocols) out.push_back(allow("socket", with(arg(2, protocol, "SCMP_CMP_EQ"))));
    for (const auto& b : blocks_outside(p.protocols, kProtocolBlock))
      out.push_back(rule({"socket"}, row, notify, with(arg(2, b.mask, "SCMP_CMP_MASKED_EQ", b.value))));
    out.push_back(rule({"socket"}, row, notify, with(arg(2, kProtocolBlock, "SCMP_CMP_GE"))));
  }
}

// gVisor, in place of inet_protocol_rules: the allowed (family, type) pairs whole. The sentry's host
// network makes TCP and UDP sockets only and refuses every other protocol itself, never reaching
// the seat; and the refusal line the recorder reads names no protocol (seccomp/sentry_log.h), so a
// refused MPTCP probe (Go tries it first) would read as a recorded socket refusal.
void inet_pairs_whole(bool allowed, json& out) {
  if (!allowed) return;
  std::set<std::pair<int, int>> pairs;
  for (const auto& p : inet_protocols_allowed())
    if (pairs.insert({p.family, p.type}).second)
      out.push_back(allow("socket", json::array({arg(0, p.family, "SCMP_CMP_EQ"),
                                                 arg(1, kSocketTypeMask, "SCMP_CMP_MASKED_EQ", p.type)})));
}

void socketpair_rules(const SeccompRow& row, bool allowed, bool notify, json& out) {
  if (allowed) out.push_back(allow("socketpair", json::array({arg(0, kAfUnix, "SCMP_CMP_EQ")})));
  out.push_back(rule({"socketpair"}, row, notify, json::array({arg(0, kAfUnix, "SCMP_CMP_NE")})));
}

// One bit: `flags & MSG_OOB` is exact whatever the high bits hold; the allow and the refusal are disjoint.
void msg_oob_rules(const json& base, const SeccompRow& row, bool notify, json& out) {
  for (const auto& call : row.calls) {
    int i = msg_flags_index(call);
    if (default_allows(base, call)) out.push_back(allow(call, json::array({arg(i, kMsgOob, "SCMP_CMP_MASKED_EQ", 0)})));
    out.push_back(rule({call}, row, notify, json::array({arg(i, kMsgOob, "SCMP_CMP_MASKED_EQ", kMsgOob)})));
  }
}

// The refused (level, optname) pairs by 64-bit equality; everything else an int can carry allowed
// by aligned blocks, disjoint from them (a level with high bits set gets the default action).
void sockopt_rules(const json& base, const SeccompRow& row, bool notify, json& out) {
  bool allowed = default_allows(base, "setsockopt");
  std::vector<std::uint64_t> levels;
  for (const auto& r : sockopts_refused()) levels.push_back(r.level);
  if (allowed)
    for (const auto& b : blocks_outside(levels, kIntValues))
      out.push_back(allow("setsockopt", json::array({arg(1, b.mask, "SCMP_CMP_MASKED_EQ", b.value)})));
  for (const auto& r : sockopts_refused()) {
    json level = arg(1, r.level, "SCMP_CMP_EQ");
    out.push_back(rule({"setsockopt"}, row, notify, json::array({level, arg(2, r.optname, "SCMP_CMP_EQ")})));
    if (!allowed) continue;
    for (const auto& b : blocks_outside({r.optname}, kIntValues))
      out.push_back(allow("setsockopt", json::array({level, arg(2, b.mask, "SCMP_CMP_MASKED_EQ", b.value)})));
  }
}

// Native calls only: a sub-architecture (i386 and x32 on x86_64, arm on aarch64) is a second
// syscall table through the compat layer; a call from it gets the bad-architecture action (SIGSYS).
void native_only(json& profile) {
  profile.erase("architectures");  // else containers/common takes this list over archMap
  if (profile.contains("archMap") && profile["archMap"].is_array())
    for (auto& a : profile["archMap"]) a["subArchitectures"] = json::array();
}

void add_row(const json& base, const SeccompRow& row, bool notify, json& out) {
  switch (row.match) {
    case SeccompMatch::always: out.push_back(rule(row.calls, row, notify)); break;
    case SeccompMatch::clone_new_ns: clone_rules(row, default_allows(base, "clone"), notify, out); break;
    case SeccompMatch::socket_family: socket_rules(row, default_allows(base, "socket"), notify, out); break;
    case SeccompMatch::personality: personality_rules(default_allows(base, "personality"), out); break;
    case SeccompMatch::inet_type: inet_type_rules(row, default_allows(base, "socket"), notify, out); break;
    case SeccompMatch::inet_protocol: inet_protocol_rules(row, default_allows(base, "socket"), notify, out); break;
    case SeccompMatch::socketpair_family: socketpair_rules(row, default_allows(base, "socketpair"), notify, out); break;
    case SeccompMatch::msg_oob: msg_oob_rules(base, row, notify, out); break;
    case SeccompMatch::sockopt: sockopt_rules(base, row, notify, out); break;
  }
}

}  // namespace

json render_seccomp_profile(const json& base, const std::string& wall, const std::string& listener) {
  if (!base.is_object() || !base.contains("defaultAction") || !base.contains("syscalls") || !base["syscalls"].is_array())
    throw Error(ErrorKind::seccomp_unavailable, "it is not a seccomp profile (no defaultAction or syscalls)");
  if (base["defaultAction"] == "SCMP_ACT_ALLOW")
    throw Error(ErrorKind::seccomp_unavailable, "its defaultAction allows every call not listed (an allow-list is needed)");
  json out = base;
  native_only(out);
  out["syscalls"] = without_table_names(base["syscalls"], wall);
  for (const auto& row : seccomp_table()) {
    if (seccomp_row_applies(row, wall)) add_row(base, row, !listener.empty(), out["syscalls"]);
    else if (row.match == SeccompMatch::inet_protocol) inet_pairs_whole(default_allows(base, "socket"), out["syscalls"]);
  }
  if (!listener.empty()) out["listenerPath"] = listener;
  return out;
}

namespace {

// The rendered texts depend on the default's text, the wall and the listener only. A warm session
// on a range plans twice with the same three (launcher/lifecycle/local.cc): the second is this
// copy (about 4 ms of rendering; docs/BENCHMARKS.md, stop 55). Only a whole render is kept.
struct Rendered {
  std::string base_text, wall, listener, text, digest;
};

Rendered render_texts(const std::string& where, const std::string& base_text, const std::string& wall,
                      const std::string& listener) {
  static std::mutex lock;
  static Rendered last;
  {
    std::lock_guard<std::mutex> hold(lock);
    if (!last.digest.empty() && last.base_text == base_text && last.wall == wall && last.listener == listener) return last;
  }
  json base = json::parse(base_text, nullptr, false);
  Rendered r{base_text, wall, listener, "", ""};
  try {
    r.text = render_seccomp_profile(base, wall).dump(1) + "\n";
    r.digest = sha256_hex(r.text);  // the rules as a node without a recorder takes them (kube)
    if (!listener.empty()) r.text = render_seccomp_profile(base, wall, listener).dump(1) + "\n";
  } catch (const Error& e) {
    throw Error(ErrorKind::seccomp_unavailable, where + ": " + e.what() + "; nothing was created");
  }
  std::lock_guard<std::mutex> hold(lock);
  last = r;
  return r;
}

}  // namespace

SeccompPlan plan_seccomp(const std::string& base_path, const std::string& base_text, const std::string& runtime_dir,
                         const std::string& session_id, const std::string& wall, const std::string& listener) {
  std::string where = "the seat's podman default seccomp profile '" + base_path + "'";
  if (base_text.empty()) throw Error(ErrorKind::seccomp_unavailable, where + " is missing or empty; nothing was created");
  Rendered r = render_texts(where, base_text, wall, listener);
  SeccompPlan plan;
  plan.text = std::move(r.text);
  plan.digest = std::move(r.digest);
  plan.base_path = base_path;
  plan.base_digest = sha256_hex(base_text);
  plan.listener = listener;
  plan.path = runtime_dir + "/seccomp-" + session_id + "-" + plan.digest + ".json";
  return plan;
}

}  // namespace asbx
