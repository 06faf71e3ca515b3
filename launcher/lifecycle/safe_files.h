// Files the launcher writes at paths the caller named (status file, capture log, ledger),
// possibly in a directory the agent can write (its workspace). A root launcher must not
// be steered into writing elsewhere: the directory is reached one component at a time from
// `/` without following a symlink the agent could have made (base/dir_walk.h), nothing is
// opened through a symlink, a planted hardlink is never written into or truncated, and no
// existing file of someone else is touched. See docs/THREATS.md.
#pragma once
#include <string>
#include <sys/types.h>

#include "base/beneath.h"

namespace asbx {

// A file written whole and then put at `path`: a new, empty regular file beside it under an
// unpredictable name (O_EXCL, O_NOFOLLOW, in the directory fd the walk reached), renamed over
// `path` by put_in_place() (a planted symlink or hardlink there loses its name; what it
// pointed at is untouched). The temp file is removed unless it was put in place.
class ReplacingFile {
 public:
  ReplacingFile(const std::string& path, mode_t mode);
  ~ReplacingFile();
  ReplacingFile(const ReplacingFile&) = delete;
  ReplacingFile& operator=(const ReplacingFile&) = delete;
  int fd() const { return fd_.get(); }  // -1 when it could not be made (why() says why)
  bool put_in_place();                  // false + why() on failure
  int release();                        // the fd, now the caller's to close
  const std::string& why() const { return why_; }

 private:
  std::string path_;
  UniqueFd dir_;
  UniqueFd fd_;
  std::string name_, tmp_, why_;
  bool placed_ = false;
};

// `path` opened for appending (created 0600 when absent; its missing parents made 0700 when
// `make_parents`), only when it is a regular file with one link owned by the launcher's
// euid. -1 and `why` otherwise.
int open_append_owned(const std::string& path, bool make_parents, std::string& why);

}  // namespace asbx
