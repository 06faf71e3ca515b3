#include "launcher/podman/liveness.h"

#include <csignal>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <unistd.h>

namespace asbx {

namespace {

// Fields 3.. of /proc/PID/stat (after the command name, which may hold anything), or "".
std::string stat_fields(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  auto close = text.rfind(')');
  return close == std::string::npos || close + 2 > text.size() ? "" : text.substr(close + 2);
}

}  // namespace

std::int64_t process_start_unix(long pid) {
  std::string fields = stat_fields(pid);
  if (fields.empty()) return -1;
  std::istringstream rest(fields);
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
  }  // field 22 is starttime, in clock ticks after boot
  std::ifstream proc_stat("/proc/stat");
  for (std::string key; proc_stat >> key;)
    if (key == "btime") {
      std::int64_t btime = 0;
      proc_stat >> btime;
      try {
        return btime + std::stoll(field) / ::sysconf(_SC_CLK_TCK);
      } catch (const std::exception&) {
        return -1;
      }
    }
  return -1;
}

bool launcher_alive(long pid, std::int64_t started_unix) {
  if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) return false;
  // A launcher killed and not yet reaped by its caller is a zombie: kill(0) reaches it, it runs nothing.
  std::string fields = stat_fields(pid);
  if (!fields.empty() && (fields[0] == 'Z' || fields[0] == 'X')) return false;
  std::int64_t since = process_start_unix(pid);
  return since < 0 || since <= started_unix + 1;  // a later start means the pid was reused
}

}  // namespace asbx
