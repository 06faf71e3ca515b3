#include "launcher/podman/sentry_log_fifo.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"

namespace asbx {

constexpr int kSentryLogPipeBytes = 1 << 20;

UniqueFd open_sentry_log_fifo(const nlohmann::json& inspect) {
  std::string bundle = inspect.is_object() ? inspect.value("StaticDir", std::string()) : std::string();
  auto refuse = [](const std::string& what) {
    throw Error(ErrorKind::seccomp_unavailable, "gVisor: the sentry's log for the seccomp recorder: " + what + "; nothing was started");
  };
  if (bundle.empty() || bundle.front() != '/') refuse("podman's inspect names no bundle directory (StaticDir)");
  std::string path = bundle + "/" + kSentryLogName;
  if (::mkfifo(path.c_str(), 0600) != 0) refuse("mkfifo " + path + ": " + std::strerror(errno));
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISFIFO(st.st_mode) || st.st_uid != ::geteuid())
    refuse("open " + path + ": " + (fd ? std::string("not the FIFO just made") : std::string(std::strerror(errno))));
  (void)::fcntl(fd.get(), F_SETPIPE_SZ, kSentryLogPipeBytes);  // room while the reader gathers (root: no cap)
  return fd;
}

}  // namespace asbx
