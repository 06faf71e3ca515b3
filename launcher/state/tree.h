// The directory a session's state is written into: DIR/<id>/ on the caller's machine, or
// the seat's export area for a dispatched session. Built as DIR/.<id>.partial (0700, so
// nobody else can plant anything in it meanwhile) and renamed to DIR/<id> at the end,
// never replacing anything. Every open is beneath the tree's own fd, links refused.
#pragma once
#include <string>

#include "launcher/podman/container_root.h"

namespace asbx {

class StateTree {
 public:
  // mkdir -p DIR, then DIR/.<id>.partial; refuses when DIR/<id> or the partial exists.
  // Returns "" or why it could not.
  std::string create(const std::string& dir, const std::string& id);
  // A directory at `relative` (its parent made before), kStateDirMode. "" or why.
  std::string make_dir(const std::string& relative);
  // A new file at `relative` (kStateFileMode once written); an invalid fd + `why` on failure.
  UniqueFd new_file(const std::string& relative, std::string& why);
  // Removes a file new_file made (a copy that failed half-way). "" or why.
  std::string remove_file(const std::string& relative);
  // Renames the partial tree to DIR/<id> (never replacing). "" or why.
  std::string finish();
  std::string final_path() const { return dir_ + "/" + id_; }
  bool open() const { return static_cast<bool>(root_); }

 private:
  UniqueFd parent_;
  UniqueFd root_;
  std::string dir_;
  std::string id_;
};


}  // namespace asbx
