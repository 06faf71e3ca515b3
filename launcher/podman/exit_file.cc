#include "launcher/podman/exit_file.h"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <ctime>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <vector>

#include "launcher/lifecycle/late_close.h"

namespace asbx {
namespace {
std::int64_t now_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}
}  // namespace

std::string conmon_exit_dir(const std::string& cmdline, const std::string& container_id) {
  std::vector<std::string> args;
  std::size_t start = 0;
  while (start < cmdline.size()) {
    std::size_t end = cmdline.find('\0', start);
    if (end == std::string::npos) end = cmdline.size();
    args.push_back(cmdline.substr(start, end - start));
    start = end + 1;
  }
  std::string dir, cid;
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--exit-dir" && dir.empty()) dir = args[i + 1];
    if (args[i] == "-c" && cid.empty()) cid = args[i + 1];
    if (args[i] == "--exit-command") break;  // what follows are podman's arguments, not conmon's
  }
  if (cid.empty() || cid != container_id || dir.empty() || dir[0] != '/') return "";
  return dir;
}

ExitFile::~ExitFile() {
  if (dir_ >= 0) ::close(dir_);
  close_late(UniqueFd(inotify_));  // a watch's instance: its last close waits for the kernel (late_close.h)
}

std::string ExitFile::arm(long conmon_pid, const std::string& container_id) {
  if (conmon_pid <= 0) return "podman reported no conmon pid";
  std::ifstream in("/proc/" + std::to_string(conmon_pid) + "/cmdline", std::ios::binary);
  std::string cmdline((std::istreambuf_iterator<char>(in)), {});
  std::string dir = conmon_exit_dir(cmdline, container_id);
  if (dir.empty()) return "pid " + std::to_string(conmon_pid) + " is not this container's conmon";
  dir_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_ < 0) return "cannot open conmon's exit dir " + dir + ": " + std::strerror(errno);
  inotify_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify_ >= 0 && ::inotify_add_watch(inotify_, dir.c_str(), IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM) < 0) {
    ::close(inotify_);
    inotify_ = -1;
  }
  if (inotify_ < 0) return "cannot watch conmon's exit dir " + dir + ": " + std::strerror(errno);
  id_ = container_id;
  return "";
}

int ExitFile::try_read() const {
  int fd = ::openat(dir_, id_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  char buf[16];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0 || n >= static_cast<ssize_t>(sizeof buf)) return -1;
  int code = 0;
  for (ssize_t i = 0; i < n; ++i) {
    if (buf[i] < '0' || buf[i] > '9') return -1;
    code = code * 10 + (buf[i] - '0');
  }
  return code <= 255 ? code : -1;  // conmon: the status, or 128 + the signal
}

int ExitFile::read(int ms) {
  if (!armed()) return -1;
  std::int64_t until = now_ms() + ms;
  bool gone = false;
  for (;;) {
    int code = try_read();
    if (code >= 0 || gone) return code;
    std::int64_t left = until - now_ms();
    if (left <= 0) return -1;
    pollfd p{inotify_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    alignas(inotify_event) char events[4096];
    ssize_t n;
    while ((n = ::read(inotify_, events, sizeof events)) > 0)
      for (char* e = events; e < events + n;) {
        auto* ev = reinterpret_cast<inotify_event*>(e);
        if ((ev->mask & (IN_DELETE | IN_MOVED_FROM)) && ev->len && id_ == ev->name) gone = true;
        e += sizeof(inotify_event) + ev->len;
      }
  }
}

}  // namespace asbx
