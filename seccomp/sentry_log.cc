#include "seccomp/sentry_log.h"

#include <cctype>

namespace asbx {
namespace {

bool digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Consumes `n` digits (n = 0: one or more) from the front of `s`.
bool take_digits(std::string_view& s, std::size_t n = 0) {
  std::size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && (n == 0 || i < n)) ++i;
  if (i == 0 || (n != 0 && i != n)) return false;
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

// "<L>mmdd hh:mm:ss.uuuuuu <spaces>pid " off the front; the pid returned, "" when not that shape.
std::string_view take_header(std::string_view& s) {
  if (s.empty() || std::string_view("DIWEF").find(s.front()) == std::string_view::npos) return {};
  s.remove_prefix(1);
  if (!take_digits(s, 4) || !take(s, " ") || !take_digits(s, 2) || !take(s, ":") || !take_digits(s, 2) ||
      !take(s, ":") || !take_digits(s, 2) || !take(s, ".") || !take_digits(s, 6) || !take(s, " "))
    return {};
  skip_spaces(s);
  std::string_view rest = s;
  if (!take_digits(s) || !take(s, " ")) return {};
  return rest.substr(0, rest.size() - s.size() - 1);
}

}  // namespace

std::string sentry_log_pid(std::string_view line) { return std::string(take_header(line)); }

long sentry_refused_call(std::string_view s) {
  if (s.empty() || s.front() != 'D' || take_header(s).empty()) return -1;
  if (!take(s, "task_syscall.go:") || !take_digits(s) || !take(s, "] [")) return -1;
  skip_spaces(s);
  if (!take_digits(s) || !take(s, ":")) return -1;
  skip_spaces(s);
  if (!take_digits(s) || !take(s, "] Syscall ")) return -1;
  std::string_view nr = s.substr(0, s.find(':'));
  s.remove_prefix(nr.size());
  if (!digits(nr) || nr.size() > 6 || s != ": denied by seccomp") return -1;
  return std::stol(std::string(nr));
}

void SentryLog::feed(std::string_view bytes, const std::function<void(long)>& on_refused) {
  while (!bytes.empty()) {
    std::size_t nl = bytes.find('\n');
    std::string_view piece = bytes.substr(0, nl);
    if (!overlong_) {
      if (partial_.size() + piece.size() > kMaxLine) {
        overlong_ = true;
        partial_.clear();
      } else if (nl != std::string_view::npos && partial_.empty()) {
        line(piece, on_refused);  // the common case: no copy
      } else {
        partial_.append(piece);
        if (nl != std::string_view::npos) line(partial_, on_refused);
      }
    }
    if (nl == std::string_view::npos) return;
    partial_.clear();
    overlong_ = false;
    bytes.remove_prefix(nl + 1);
  }
}

void SentryLog::line(std::string_view l, const std::function<void(long)>& on_refused) {
  if (pid_.empty()) {
    pid_ = sentry_log_pid(l);
    if (pid_.empty()) pid_ = "?";  // a first line of another shape: nothing from this log counts
    return;
  }
  std::string_view rest = l;
  if (take_header(rest) != pid_) return;
  long nr = sentry_refused_call(l);
  if (nr >= 0) on_refused(nr);
}

}  // namespace asbx
