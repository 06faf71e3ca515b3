// The workspace: resolved with realpath (every component, symlinks followed) and
// required to lie under the seat's permitted root. Only this one directory is mounted.
#pragma once
#include <string>

#include "base/plan.h"

namespace asbx {

struct WorkspaceMount {
  std::string host_path;       // resolved
  std::string container_path;  // /sandbox/workspaces/<name>
  Mount mount;
};

// Throws Error(workspace_rejected) naming the path and the reason.
WorkspaceMount plan_workspace(const std::string& requested, const std::string& permitted_root);
// realpath() of path; "" when it does not resolve (the caller names the error).
std::string resolve_path(const std::string& path);
bool path_is_under(const std::string& resolved, const std::string& resolved_root);

}  // namespace asbx
