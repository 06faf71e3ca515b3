// The container's exit code as conmon writes it, read without podman's container lock.
//
// conmon writes the exit status of the container's PID 1 to `<exit dir>/<container id>`
// (atomically: a temporary file renamed into place) once it has reaped that process — and a
// pid namespace's init is reaped only after every other process in it was killed and reaped,
// so at that moment nothing of the agent runs. podman's `wait` answers only after podman's
// cleanup process (started by conmon after that write) has released the container's lock,
// i.e. after the root is unmounted; the file is there 150–350 ms earlier, and the cleanup
// deletes it once read. The exit dir comes from conmon's own command line (`--exit-dir`),
// read between init and start, when only podman's processes exist.
#pragma once
#include <string>

namespace asbx {

class ExitFile {
 public:
  ExitFile() = default;
  ExitFile(const ExitFile&) = delete;
  ExitFile& operator=(const ExitFile&) = delete;
  ~ExitFile();

  // Finds conmon's exit dir for `container_id` and starts watching it (inotify). Returns ""
  // when armed, else why not (no conmon pid, another container's conmon, a dir this user
  // cannot read): the caller then asks podman's wait as before.
  std::string arm(long conmon_pid, const std::string& container_id);
  bool armed() const { return inotify_ >= 0; }

  // The exit code once the file is there (waiting at most `ms`), or -1: not armed, the file
  // went before it was read, its text is no number, or the time passed.
  int read(int ms);

 private:
  int try_read() const;
  int dir_ = -1;
  int inotify_ = -1;
  std::string id_;
};

// conmon's `--exit-dir` from its NUL-separated command line, when its `-c` names `container_id`
// (pure: unit-tested).
std::string conmon_exit_dir(const std::string& cmdline, const std::string& container_id);

}  // namespace asbx
