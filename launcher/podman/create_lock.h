// Rootless podman 4.3 (Debian, linked against libsubid) computes the keep-id mapping
// through libsubid, which is not thread-safe: two container creates the one service runs at
// once sometimes find no subordinate ids and fail with "keep-id requires additional UIDs or
// GIDs" (measured on a seat: 5 of 320 creates, 16 at a time; 0 of 320 serialised). So
// sessions of one user take turns for the create call only: an exclusive flock on
// DIR/.create.lock (DIR is the user's own runtime dir of sessions), waited for in 10 ms
// steps and at most `wait_ms` (a create the holder cannot finish is bounded by its own HTTP
// timeout). Rootful creates do not need it and do not take it.
#pragma once
#include <string>

namespace asbx {

class CreateLock {
 public:
  // Throws Error(create_failed) naming the file when it cannot be opened or is not free in time.
  CreateLock(const std::string& dir, long wait_ms);
  ~CreateLock();
  CreateLock(const CreateLock&) = delete;
  CreateLock& operator=(const CreateLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace asbx
