#include "seccomp/sentry_log.h"

#include <cctype>
#include <charconv>
#include <cstdint>

#include <nlohmann/json.hpp>

namespace asbx {
namespace {

// Consumes one or more digits (at most `max`) from the front of `s`.
bool take_digits(std::string_view& s, std::size_t max) {
  std::size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0 || i > max) return false;
  s.remove_prefix(i);
  return true;
}

bool take(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

void skip_spaces(std::string_view& s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
}

}  // namespace

long sentry_refused_call(std::string_view s) {
  if (!take(s, "[")) return -1;
  skip_spaces(s);
  if (!take_digits(s, 10) || !take(s, ":")) return -1;
  skip_spaces(s);
  if (!take_digits(s, 10) || !take(s, "] Syscall ")) return -1;
  std::string_view nr = s.substr(0, s.find(':'));
  s.remove_prefix(nr.size());
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(nr.data(), nr.data() + nr.size(), value);
  if (nr.empty() || ec != std::errc() || end != nr.data() + nr.size()) return -1;
  if (s != ": denied by seccomp" && s != ": killed by seccomp") return -1;
  // The sentry filters the number's low 32 bits (int32) and logs all 64: what the filter saw.
  std::uint32_t low = static_cast<std::uint32_t>(value);
  return low <= 0x7fffffff ? long(low) : -1;
}

void SentryLog::reset() {
  object_.clear();
  too_long_ = false;
  depth_ = 0;
  in_string_ = escaped_ = false;
}

void SentryLog::feed(std::string_view bytes, const std::function<void(long)>& on_refused) {
  for (char c : bytes) {
    if (depth_ == 0) {
      if (c == '{') {
        depth_ = 1;
        object_.assign(1, c);
      }
      continue;  // between objects: the entries' newlines, or bytes of no entry (skipped)
    }
    if (c == '\n') {  // never inside a JSON object: what was read is no entry
      reset();
      continue;
    }
    if (object_.size() < kMaxObject) object_.push_back(c);
    else too_long_ = true;
    if (in_string_) {
      if (escaped_) escaped_ = false;
      else if (c == '\\') escaped_ = true;
      else if (c == '"') in_string_ = false;
    } else if (c == '"') {
      in_string_ = true;
    } else if (c == '{') {
      ++depth_;
    } else if (c == '}' && --depth_ == 0) {
      if (!too_long_) entry(on_refused);
      reset();
    }
  }
}

// One whole object: parsed only when it can matter (the boot's own entries until it has described
// itself, or one naming a refusal).
void SentryLog::entry(const std::function<void(long)>& on_refused) {
  if (heard_ && boot_.complete() && object_.find(" by seccomp") == std::string::npos) return;
  nlohmann::json j = nlohmann::json::parse(object_, nullptr, false);
  if (!j.is_object() || !j.contains("msg") || !j["msg"].is_string()) return;
  heard_ = true;
  const std::string& msg = j["msg"].get_ref<const std::string&>();
  const nlohmann::json& level = j.contains("level") ? j["level"] : nlohmann::json();
  if (level == "info") return describe_boot(msg);
  if (level != "debug") return;
  long nr = sentry_refused_call(msg);
  if (nr >= 0) on_refused(nr);
}

void SentryLog::describe_boot(std::string_view msg) {
  if (boot_.platform.empty() && take(msg, "\t\tPlatform: ")) boot_.platform = std::string(msg);
  else if (boot_.network.empty() && take(msg, "\t\tNetwork: ")) boot_.network = std::string(msg.substr(0, msg.find(',')));
}

}  // namespace asbx
