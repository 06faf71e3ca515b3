// What a session holds on the seat's disk without a name: files deleted while open, O_TMPFILE
// files, files kept only by a mapping, a directory removed while a task stands in it (its cwd or
// root) or an executable removed while it runs (st_nlink == 0). A walk of the binds cannot see them, yet
// they fill the filesystem for as long as the session holds them. Every task of the container's
// cgroup is read (/proc/<pid>/task/<tid>/fd, map_files, cwd and root: a thread may have its own fd table and cwd);
// each unnamed inode on a watched filesystem counts once (st_blocks * 512, one inode).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace asbx {

struct HiddenUsage {
  std::int64_t bytes = 0;
  std::int64_t inodes = 0;
  std::string error;  // "" or why a task's open files could not be read (the measurement is then incomplete)
  bool interrupted = false;  // `interrupt` answered true: nothing measured, measure again (frozen)
};

// At most this many links are looked at per measurement (a hostile session can hold ten million
// fds: 512 processes x 20000); past it the measurement is incomplete (`error`), which fails closed.
constexpr std::int64_t kMaxHiddenLinks = 2'000'000;

// `procs` is the cgroup's cgroup.procs file ("" = no cgroup known: nothing is read). A missing
// file or task means it ended (nothing held); any other failure is said in `error`. A thread that
// shares its process's fd table (or mappings) is not read again (kcmp). `interrupt`, asked every
// 1024 links, may end the measurement early (`interrupted`): the disk counters pressed meanwhile.
HiddenUsage hidden_usage(const std::string& procs, const std::vector<dev_t>& devs, const std::string& proc = "/proc",
                         const std::function<bool()>& interrupt = {});

}  // namespace asbx
