// gVisor's refusals, read from the sentry's own log (docs/DECISIONS.md, issue 36, "Refused calls
// under gVisor"). runsc applies the profile itself (--oci-seccomp) and has no seccomp agent, but
// with --debug its sentry logs one entry per refused call; the seat's wrapper asks for the JSON
// format, one object per entry:
//   {"msg":"[   2:   2] Syscall 272: denied by seccomp","level":"debug","time":"…"}
// (the call's number as the task passed it; its arguments are not logged). Pure: bytes in,
// the numbers of the refused calls out. The log also carries text the agent chose (names the gofer
// walks, with any bytes in them): in JSON every such byte is inside a string, escaped (a raw
// newline or quote never is), so the agent can neither make an entry nor end one. Objects are
// found by their braces outside strings, whatever lies between them (the sentry writes an entry's
// newline separately: two entries may share a line); an object over kMaxObject is skipped without
// losing the next; a raw newline inside an object (never in JSON) drops that object.
#pragma once
#include <functional>
#include <string>
#include <string_view>

namespace asbx {

// What the boot says of itself as it starts, before the agent runs (runsc logs its configuration
// first: "\t\tPlatform: ptrace", "\t\tNetwork: host, logging: false"). The first of each only; an
// entry is the agent's text never whole, so none of these can be forged later.
struct SentryBoot {
  std::string platform;
  std::string network;
  bool complete() const { return !platform.empty() && !network.empty(); }
};

class SentryLog {
 public:
  static constexpr std::size_t kMaxObject = 1024;  // a refusal entry is about 110 bytes

  // Every complete object of `bytes` (with what an earlier call left): `on_refused(nr)` for each
  // refusal entry.
  void feed(std::string_view bytes, const std::function<void(long)>& on_refused);
  // A first entry was read: a JSON object with a "msg" string (the boot opened its log, in the
  // format the wrapper asked for). A log of another format is never heard.
  bool heard() const { return heard_; }
  const SentryBoot& boot() const { return boot_; }

 private:
  void reset();
  void entry(const std::function<void(long)>& on_refused);
  void describe_boot(std::string_view msg);

  std::string object_;     // the current object's bytes, up to kMaxObject
  bool too_long_ = false;  // the current object passed kMaxObject: skipped at its end
  int depth_ = 0;          // 0: between objects
  bool in_string_ = false, escaped_ = false;
  bool heard_ = false;
  SentryBoot boot_;
};

// The call number of a refusal entry's message "[<tid>:<tid>] Syscall <nr>: denied by seccomp" (or
// "killed by seccomp": a KILL verdict, the agent's own filter's, on a call the profile refuses too;
// spaces may pad the tids): <nr>'s low 32 bits, which is what the sentry's filter saw (a hostile
// pass set bits 32-63: refused as their low half, logged whole); -1 for any other message.
long sentry_refused_call(std::string_view msg);

}  // namespace asbx
