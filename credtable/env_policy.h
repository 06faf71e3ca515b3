// The container's environment: an allowlist of names taken from the launcher's
// environment, with a veto on secret-looking names that always wins.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace asbx {

bool is_secret_looking(const std::string& name);
// PATH and HOME are fixed; TERM, LANG, LC_*, TZ and `extra` names pass from `environ`.
std::vector<std::pair<std::string, std::string>> container_env(const std::map<std::string, std::string>& environ,
                                                               const std::vector<std::string>& extra_names);

}  // namespace asbx
