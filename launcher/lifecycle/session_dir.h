// A session dir (RUNTIME_DIR/<id>) changes hands under an exclusive flock on the dir itself. A launcher
// takes it (makes it, or finds it and checks its owner) and writes its owner file under the lock; gc and
// a launcher leaving it read its owner again under the lock before removing it. So a new launcher of an
// id never loses the dir it is setting up to a sweep or a remover that read the dir's previous owner
// (docs/LIFECYCLE.md "The session dir").
#pragma once
#include <functional>
#include <string>

#include "base/beneath.h"

namespace asbx {

class SessionDirLock {
 public:
  // Makes DIR (0700) or opens the one there, and waits for its lock (at most 10 s); a dir removed
  // while this waited is made again. False, errno set (EWOULDBLOCK: the wait's limit), when DIR
  // cannot be made, opened or locked.
  bool take(const std::string& dir);
  bool made() const { return made_; }  // this call made DIR

 private:
  UniqueFd fd_;
  bool made_ = false;
};

// Runs FN with DIR locked, when DIR is there (a dir, not a link) and is still there once locked.
// False when it is gone, or its lock was not had within WAIT_MS (someone is taking or leaving it:
// gc sees it again next time).
bool with_session_dir_locked(const std::string& dir, int wait_ms, const std::function<void()>& fn);

}  // namespace asbx
