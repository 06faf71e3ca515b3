// Small functions several files need, each defined once here.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace asbx {

struct UserFacts;

// The id character rule (session ids, --account names, container names): 1 to max_len
// ASCII letters, digits, '-', '_' or '.', starting with a letter or digit.
bool is_plain_name(const std::string& s, std::size_t max_len);

// mkdir -p, each missing component 0700, walked from `/` without following a symlink the
// agent could have made (base/dir_walk.h). On failure returns false with the reason, naming
// the component, in *why. An existing directory is accepted as is.
bool make_dirs(const std::string& dir, std::string* why = nullptr);

// The XDG config base: $XDG_CONFIG_HOME, or ~/.config when it is unset.
std::string config_base(const UserFacts& user);

// "NAME=VALUE" entries (a null-terminated array such as environ) as a map; an entry
// without '=' is skipped, a repeated name keeps its last value.
std::map<std::string, std::string> environ_map(char* const* entries);

// A name the agent chose, fit for a message, the record or a terminal: printable ASCII only
// (every other byte, a newline or an escape sequence among them, becomes '?'), cut after
// max_len bytes with "...". No line or colour of the launcher can be forged through it.
std::string printable(const std::string& s, std::size_t max_len = 4096);

// parts[0] + separator + parts[1] + ...; "" for no parts.
std::string join(const std::vector<std::string>& parts, const std::string& separator = ", ");

}  // namespace asbx

namespace asbx {
// n bytes from the kernel's CSPRNG (getrandom); throws std::runtime_error when it fails.
std::string random_bytes(std::size_t n);
}  // namespace asbx
