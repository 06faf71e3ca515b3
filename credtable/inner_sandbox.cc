#include "credtable/inner_sandbox.h"

#include <algorithm>

#include "base/error.h"
#include "base/util.h"

namespace asbx {
namespace {

std::string basename_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// True when argv (up to a bare "--") holds `form`: one token, or "OPTION VALUE" as two
// tokens or as OPTION=VALUE.
bool argv_has(const std::vector<std::string>& argv, const std::string& form) {
  auto space = form.find(' ');
  std::string option = form.substr(0, space);
  std::string value = space == std::string::npos ? "" : form.substr(space + 1);
  for (std::size_t i = 1; i < argv.size() && argv[i] != "--"; ++i) {
    if (value.empty() && argv[i] == option) return true;
    if (!value.empty() && argv[i] == option + "=" + value) return true;
    if (!value.empty() && argv[i] == option && i + 1 < argv.size() && argv[i + 1] == value) return true;
  }
  return false;
}

bool informational(const std::vector<std::string>& argv) {
  for (const char* flag : {"--version", "-V", "--help", "-h"})
    if (argv_has(argv, flag)) return true;
  return false;
}

}  // namespace

std::string inner_sandbox_state(const CredRow& row, const std::vector<std::string>& argv) {
  if (row.inner_sandbox_off.empty()) return "n/a";
  if (argv.empty() || basename_of(argv[0]) != row.command)
    return "unchecked: argv[0] is not " + row.command;
  for (const auto& form : row.inner_sandbox_off)
    if (argv_has(argv, form)) return "off: " + form;
  if (informational(argv)) return "n/a: informational";
  throw Error(ErrorKind::usage, "--runtime " + row.name + ": " + row.inner_sandbox_why +
                                    "; the container is the sandbox: add '" + join(row.inner_sandbox_off, "' or '") +
                                    "' to the command");
}

}  // namespace asbx
