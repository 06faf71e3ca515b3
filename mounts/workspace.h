// The workspace: resolved with realpath (every component, symlinks followed) and
// required to be a direct child of one of the seat's permitted roots. Only this one
// directory is mounted.
#pragma once
#include <string>
#include <vector>

#include "base/plan.h"

namespace asbx {

struct WorkspaceMount {
  std::string host_path;       // resolved
  std::string container_path;  // /sandbox/workspaces/<name>
  Mount mount;
};

// Throws Error(workspace_rejected) naming the path and the reason; Error(config) when two
// permitted roots overlap.
WorkspaceMount plan_workspace(const std::string& requested, const std::vector<std::string>& permitted_roots);
WorkspaceMount plan_workspace(const std::string& requested, const std::string& permitted_root);
// `--workspace .`: the checkout `cwd` stands in: the nearest directory from `cwd` up that holds a
// `.git` (a clone's directory or a linked worktree's file), never up to the permitted root `cwd`
// lies under (or `/`); `cwd` itself when there is none. A candidate only: plan_workspace judges it like
// any other path, and the git mounts are checked as for any workspace.
std::string current_checkout(const std::string& cwd, const std::vector<std::string>& roots);
// realpath() of path; "" when it does not resolve (the caller names the error).
std::string resolve_path(const std::string& path);
bool path_is_under(const std::string& resolved, const std::string& resolved_root);

}  // namespace asbx
