// The rules state collection applies to what the agent left under its HOME: pure
// functions, no I/O. Everything collected was written by the agent (hostile input);
// docs/STATE.md states the contract and the defaults.
#pragma once
#include <cstdint>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "base/state_plan.h"

namespace asbx {

inline constexpr int kMaxStateDepth = 32;        // directory levels below a state path
inline constexpr std::size_t kMaxStatePath = 4096;  // bytes of one relative path

// A state path or a credential destination: relative to HOME, no empty, '.' or '..' part.
bool is_home_relative_path(const std::string& path);
// Why `state_path` may not be a state path of a row whose credential copy goes to
// `credential` (both HOME-relative): it equals it, contains it, or lies inside it.
// "" when they are apart.
std::string state_credential_conflict(const std::string& state_path, const std::string& credential);

// One name inside a directory: not empty, not '.' or '..', no '/', NUL or control byte.
bool is_safe_name(const std::string& name);
// A relative path of safe names separated by single '/', at most kMaxStatePath bytes
// and kMaxStateDepth + a few levels deep. What a framed export may name.
bool is_safe_relative(const std::string& path);

// "" for a regular file or a directory; otherwise what it is ("symlink", "fifo", ...).
std::string kind_refusal(mode_t mode);
// Why a file of `size` bytes is over a cap when `files_so_far` files of `bytes_so_far`
// bytes came back already; "" when it fits.
std::string cap_refusal(std::int64_t size, std::int64_t files_so_far, std::int64_t bytes_so_far,
                        const StateLimits& limits);
// Why a regular file is not brought back, "" when it may be: hardlinks, size and count caps.
std::string file_refusal(const struct stat& st, std::int64_t files_so_far, std::int64_t bytes_so_far,
                         const StateLimits& limits);

// What the copies get, whatever the agent set: nothing executable, nothing writable by others.
inline constexpr mode_t kStateFileMode = 0644;
inline constexpr mode_t kStateDirMode = 0755;

// The name a state tree is built under beside DIR/<id> before it is renamed into place.
std::string state_partial_name(const std::string& id);

}  // namespace asbx
