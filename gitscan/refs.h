// HEAD, loose refs and packed-refs read as data. The launcher copies a plain clone's HEAD and
// packed-refs back to the host only when they pass these checks (gitscan/refs.cc: git's
// check-ref-format rules), and compares refs before and after a session to find its commits.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace asbx {

// git check-ref-format: no "..", "//", "@{", control characters, space ~ ^ : ? * [ \, no
// component starting with '.' or ending in ".lock", not ending in '/' or '.'.
bool is_safe_refname(std::string_view name);
// "" when `content` is a HEAD the host may get back: "ref: refs/heads/NAME\n" or an object id
// and a newline; else why not.
std::string check_head(std::string_view content, std::size_t hash_len);
// A loose ref file: its object id (hex), or nullopt (a symbolic ref, or malformed).
std::optional<std::string> loose_ref_id(std::string_view content, std::size_t hash_len);
// packed-refs: refname → object id; nullopt + `why` ("line N: ...") when any line is malformed.
std::optional<std::map<std::string, std::string>> parse_packed_refs(std::string_view text, std::size_t hash_len,
                                                                    std::string& why);

}  // namespace asbx
