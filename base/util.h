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

// THE one escaping function for agent-controlled bytes on their way to a terminal or the record
// (names, paths, hostnames, messages): printable ASCII and well-formed UTF-8 of visible characters
// stay; every other byte — C0/C1 controls (a newline, ESC, an OSC or CSI sequence), DEL, invalid
// UTF-8, bidirectional overrides — becomes '?'; cut after max_len bytes with "...". No line,
// colour, title or clipboard write of the launcher can be forged through it. Every line said on
// the caller's stderr passes it (launcher/lifecycle/diagnostics.cc), and so do the record's names.
std::string printable(const std::string& s, std::size_t max_len = 4096);

// Is `s` well-formed UTF-8 (what JSON text, and so podman's API, can carry)?
bool valid_utf8(const std::string& s);

// `s` with its ASCII letters lowered (HTTP field names, host names); other bytes unchanged.
std::string ascii_lower(std::string s);

// Does `s` begin with `prefix`?
bool starts_with(const std::string& s, const std::string& prefix);

// parts[0] + separator + parts[1] + ...; "" for no parts.
std::string join(const std::vector<std::string>& parts, const std::string& separator = ", ");

}  // namespace asbx

namespace asbx {
// n bytes from the kernel's CSPRNG (getrandom); throws std::runtime_error when it fails.
std::string random_bytes(std::size_t n);
// 2n lowercase hex digits of random_bytes(n): names nobody can guess ahead.
std::string random_hex(std::size_t n);
}  // namespace asbx
