#include "base/request.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <unistd.h>

#include "base/error.h"
#include "base/util.h"

extern char** environ;

namespace asbx {

SessionFacts current_session_facts() {
  SessionFacts f;
  f.now_unix = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch()).count();
  f.pid = ::getpid();
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::getline(boot, f.boot_id);
  f.environ = environ_map(environ);
  char here[4096];
  if (::getcwd(here, sizeof here)) f.cwd = here;  // the kernel's path: canonical, no symlinks
  f.seccomp_default_path = kPodmanDefaultSeccomp;
  std::ifstream profile(kPodmanDefaultSeccomp, std::ios::binary);
  f.seccomp_default.assign(std::istreambuf_iterator<char>(profile), std::istreambuf_iterator<char>());
  return f;
}

std::string new_session_id(std::int64_t now_unix) {
  std::random_device rd;
  char suffix[9];
  std::snprintf(suffix, sizeof suffix, "%08x", rd());
  return "s" + std::to_string(now_unix) + "-" + suffix;
}

void validate_session_id(const std::string& id) {
  if (!is_plain_name(id, 64))
    throw Error(ErrorKind::usage, "--id: '" + id + "' must be 1-64 letters, digits, '-', '_' or '.', starting with a letter or digit");
}

}  // namespace asbx
