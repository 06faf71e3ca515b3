#include "launcher/session_dir.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <ftw.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "credtable/credential.h"
#include "launcher/error.h"
#include "launcher/fdio.h"
#include "launcher/util.h"

namespace asbx {
namespace {

void make_dir(const std::string& dir, bool exclusive) {
  if (::mkdir(dir.c_str(), 0700) == 0 || (!exclusive && errno == EEXIST)) return;
  // A live session with this id (or a killed launcher's leftover): the same answer podman
  // gives for a second container of one name.
  if (exclusive && errno == EEXIST)
    throw Error(ErrorKind::create_failed, "session dir '" + dir + "' already exists: another session uses this id");
  throw Error(ErrorKind::internal, "cannot create session dir '" + dir + "': " + std::strerror(errno));
}

void make_parents(const std::string& path) {
  std::string part;
  if (!make_dirs(path.substr(0, path.rfind('/') + 1), &part))
    throw Error(ErrorKind::internal, "cannot create session dir '" + part + "': " + std::strerror(errno));
}

// The host original is only read: O_NOATIME where permitted, so even its atime stays.
std::string read_credential(const StagedCredential& cred) {
  int fd = ::open(cred.source.c_str(), O_RDONLY | O_CLOEXEC | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = ::open(cred.source.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(ErrorKind::credential_unresolved, "credential for runtime '" + cred.runtime + "' cannot be read (" +
                                                      std::strerror(errno) + "): '" + cred.source + "'");
  std::string data;
  char buf[8192];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) data.append(buf, n);
  ::close(fd);
  return data;
}

int remove_entry(const char* path, const struct stat*, int, FTW*) { return ::remove(path); }

std::string read_file(const std::string& path) { return read_text_file(path).value_or(""); }

}  // namespace

SessionDir::SessionDir(const LaunchPlan& plan) : plan_(plan) {
  if (plan.credentials.empty()) return;
  uid_ = ::getuid();
  gid_ = ::getgid();
  if (!plan.rootless) std::sscanf(plan.user.c_str(), "%u:%u", &uid_, &gid_);
  make_parents(plan.session_dir);
  make_dir(plan.session_dir, true);
  created_ = true;
  make_dir(plan.session_dir + "/secrets", false);
  make_dir(plan.session_dir + "/report", false);
  if (::chown((plan.session_dir + "/report").c_str(), uid_, gid_) != 0 && !plan.rootless)
    throw Error(ErrorKind::internal, "cannot hand the report dir to the container user: " + std::string(std::strerror(errno)));
  try {
    for (const auto& cred : plan.credentials) stage(cred);
  } catch (...) {
    this->~SessionDir();  // a throwing constructor runs no destructor: remove what was made
    throw;
  }
}

// A read-only copy owned by the container user: a 0600 root-owned original would be
// unreadable by uid 1000 inside, and the original itself is never handed out.
void SessionDir::stage(const StagedCredential& cred) const {
  make_dir(plan_.session_dir + "/secrets/" + cred.runtime, false);
  std::string copy = staged_host_path(plan_.session_dir, cred);
  std::string data = read_credential(cred);
  int fd = ::open(copy.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
  bool ok = fd >= 0 && write_all(fd, data) && (plan_.rootless || ::fchown(fd, uid_, gid_) == 0);
  int err = errno;
  if (fd >= 0) ::close(fd);
  std::fill(data.begin(), data.end(), '\0');
  if (!ok)
    throw Error(ErrorKind::credential_unresolved, "credential for runtime '" + cred.runtime +
                                                      "' cannot be staged (" + std::strerror(err) + "): '" + copy + "'");
}

SessionDir::~SessionDir() {
  if (created_) ::nftw(plan_.session_dir.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

std::vector<std::string> refreshed_runtimes(const std::string& report) {
  std::vector<std::string> out;
  std::stringstream lines(report);
  for (std::string runtime, staged, copy; lines >> runtime >> staged >> copy;)
    if (copy != "missing" && copy != staged) out.push_back(runtime);
  return out;
}

void SessionDir::apply_report(SessionResult& result) const {
  if (!created_) return;
  std::string dir = plan_.session_dir + "/report/";
  for (const auto& runtime : refreshed_runtimes(read_file(dir + "refresh"))) {
    result.credential_refreshed_in_container = true;
    result.warnings.push_back("the " + runtime + " credential was refreshed inside the container; the host file is "
                              "unchanged, but a single-use refresh token rotated inside can invalidate the host's "
                              "login (log in again on the seat if it stops working)");
  }
  if (result.outcome != "exited") return;
  std::string exec_failure = read_file(dir + "exec-failure");
  int code = result.agent_exit_code.value_or(-1);
  if (!read_file(dir + "stage-failed").empty() && code == 1) {
    record_error(result, Error(ErrorKind::credential_unresolved, "credential for runtime '" + plan_.runtime +
                                                                     "' could not be copied into the container's HOME"));
    result.agent_exit_code.reset();
  } else if ((exec_failure == "command_not_found\n" && code == 127) ||
             (exec_failure == "command_not_executable\n" && code == 126)) {
    bool nf = code == 127;
    record_error(result, Error(nf ? ErrorKind::command_not_found : ErrorKind::command_not_executable,
                               std::string(nf ? "command not found" : "command not executable") +
                                   " inside the container: '" + plan_.argv[0] + "'"));
    result.agent_exit_code.reset();
  }
}

}  // namespace asbx
