// POSIX shell quoting for the command line ssh hands to the seat's shell.
#pragma once
#include <string>
#include <vector>

namespace asbx {

// One word, safe for any POSIX sh: plain words stay as they are, anything else is
// single-quoted with each ' written as '\''.
std::string shell_quote(const std::string& word);
std::string shell_join(const std::vector<std::string>& words);

}  // namespace asbx
