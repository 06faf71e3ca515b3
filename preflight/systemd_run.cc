#include "preflight/systemd_run.h"

#include <algorithm>

#include "credtable/env_policy.h"
#include "base/error.h"

namespace asbx {
namespace {

bool valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    i += len;
  }
  return true;
}

bool systemd_bookkeeping(const std::string& name) {
  static const std::vector<std::string> names = {"PATH", "HOME", "INVOCATION_ID", "JOURNAL_STREAM", "NOTIFY_SOCKET",
                                                 "MANAGERPID", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES",
                                                 "WATCHDOG_PID", "WATCHDOG_USEC", "SYSTEMD_EXEC_PID", "_",
                                                 kReexecMarkerEnv, kReexecUnitEnv};
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::string escape_dollars(const std::string& arg) {
  std::string out;
  for (char c : arg) {
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

std::vector<std::string> reexec_env_names(const std::vector<std::string>& environ) {
  std::vector<std::string> names;
  for (const auto& entry : environ) {
    auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string name = entry.substr(0, eq);
    if (systemd_bookkeeping(name) || is_secret_looking(name) || !valid_utf8(entry)) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void check_reexec_args(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i)
    if (!valid_utf8(args[i]))
      throw Error(ErrorKind::usage, "argument " + std::to_string(i + 1) +
                                        " is not valid UTF-8; the NoNewPrivs re-exec carries arguments over D-Bus, "
                                        "which accepts only UTF-8");
}

std::vector<std::string> systemd_run_argv(const ReexecSpec& s) {
  std::vector<std::string> argv = {s.systemd_run, "--user", "--wait", "--pipe", "--collect", "--quiet",
                                   "--same-dir", "--unit=" + s.unit, "--setenv=PATH=" + s.path,
                                   "--setenv=HOME=" + s.home, std::string("--setenv=") + kReexecMarkerEnv + "=" + s.marker,
                                   std::string("--setenv=") + kReexecUnitEnv + "=" + s.unit};
  for (const auto& name : s.pass_env) argv.push_back("--setenv=" + name);
  argv.push_back("--");
  argv.push_back(escape_dollars(s.exe));
  for (const auto& a : s.args) argv.push_back(escape_dollars(a));
  return argv;
}

std::string reexec_unit_name(const std::string& session_id, long pid, const std::string& nonce) {
  if (!session_id.empty()) return "asbx-run-" + session_id;
  return "asbx-run-" + std::to_string(pid) + "-" + nonce;
}

}  // namespace asbx
