#include "launcher/state/export.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "launcher/podman/container_root.h"
#include "base/error.h"
#include "launcher/lifecycle/local.h"
#include "base/request.h"
#include "base/beneath.h"
#include "base/dir_walk.h"
#include "launcher/state/frames.h"
#include "base/util.h"

namespace asbx {
namespace {

// The tree of `id`, opened without following anything, once it is complete.
UniqueFd open_tree(const std::string& area, const std::string& id, int wait_s) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
  for (;;) {
    std::string why;
    UniqueFd top = open_dir_path(area, false, why);  // never through a planted symlink
    UniqueFd tree(top ? open_beneath(top.get(), id, O_RDONLY | O_DIRECTORY | O_NONBLOCK) : -1);
    if (tree || std::chrono::steady_clock::now() >= until) return tree;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace

int state_export_main(const std::string& program, const std::string& id, int wait_s) {
  try {
    validate_session_id(id);
    SeatConfig seat = current_seat_config();
    std::string area = state_export_area(seat);
    UniqueFd tree = open_tree(area, id, wait_s);
    if (!tree)
      throw Error(ErrorKind::usage, "state-export: no collected state of session '" + id + "' in " + area);
    FrameSink sink(1);
    StateReport report;
    walk_state(WalkInput{tree.get(), {""}, seat.state_limits, {}}, sink, report);
    for (const auto& s : report.skipped)
      std::fprintf(stderr, "%s: state-export: skipped %s: %s\n", program.c_str(), printable(s.path).c_str(), printable(s.reason).c_str());
    if (!sink.finish()) throw Error(ErrorKind::internal, "state-export: the reader went away before the end");
    std::error_code ignored;
    std::filesystem::remove_all(area + "/" + id, ignored);  // never follows links
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), printable(e.what()).c_str());
    return e.exit_code();
  }
}

std::vector<std::string> remove_stale_exports(const std::string& area, std::int64_t now_unix, std::int64_t max_age_s) {
  std::vector<std::string> removed;
  std::string why;
  UniqueFd top = open_dir_path(area, false, why);  // never through a planted symlink
  int listing = top ? ::openat(top.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  DIR* d = listing >= 0 ? ::fdopendir(listing) : nullptr;
  if (!d) {
    if (listing >= 0) ::close(listing);
    return removed;
  }
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    struct stat st{};
    if (name == "." || name == ".." || !top || ::fstatat(top.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (now_unix - static_cast<std::int64_t>(st.st_mtime) <= max_age_s) continue;
    std::error_code ignored;
    std::filesystem::remove_all(area + "/" + name, ignored);
    removed.push_back("removed state " + area + "/" + name + " (not fetched for " +
                      std::to_string((now_unix - st.st_mtime) / 60) + " min)");
  }
  ::closedir(d);
  return removed;
}

}  // namespace asbx
