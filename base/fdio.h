// Blocking whole-buffer writes that survive EINTR and short writes.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

namespace asbx {

// Returns false when the peer is gone (EPIPE and friends); throws on nothing.
bool write_all(int fd, const char* data, std::size_t size);
inline bool write_all(int fd, const std::string& s) { return write_all(fd, s.data(), s.size()); }
// A whole file's text; nullopt when it cannot be opened.
std::optional<std::string> read_text_file(const std::string& path);

}  // namespace asbx
