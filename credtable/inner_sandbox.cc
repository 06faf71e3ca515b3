#include "credtable/inner_sandbox.h"

#include <algorithm>

#include "launcher/error.h"

namespace asbx {
namespace {

const std::vector<InnerSandboxRule>& builtin_rules() {
  static const std::vector<InnerSandboxRule> rules = {
      {"codex", "codex",
       {"--dangerously-bypass-approvals-and-sandbox", "--sandbox danger-full-access", "-s danger-full-access"},
       "codex's own sandbox (bwrap) cannot map uids inside the container and codex then exits 0 having done "
       "nothing"},
      {"claude", "claude",
       {"--dangerously-skip-permissions", "--permission-mode bypassPermissions"},
       "claude would stop at a permission prompt for every tool call inside the container"},
  };
  return rules;
}

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

const InnerSandboxRule* builtin_inner_sandbox_rule(const std::string& runtime) {
  for (const auto& rule : builtin_rules())
    if (rule.runtime == runtime) return &rule;
  return nullptr;
}

std::string inner_sandbox_state(const InnerSandboxRule& rule, const std::vector<std::string>& argv) {
  if (argv.empty() || basename_of(argv[0]) != rule.command)
    return "unchecked: argv[0] is not " + rule.command;
  for (const auto& form : rule.off_forms)
    if (argv_has(argv, form)) return "off: " + form;
  if (informational(argv)) return "n/a: informational";
  std::string forms;
  for (const auto& form : rule.off_forms) forms += (forms.empty() ? "'" : " or '") + form + "'";
  throw Error(ErrorKind::usage, "--runtime " + rule.runtime + ": " + rule.why +
                                    "; the container is the sandbox: add " + forms + " to the command");
}

}  // namespace asbx
