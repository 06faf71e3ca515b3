#include "launcher/podman/gofer.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/error.h"

namespace asbx {
namespace {

long parent_of(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');  // the command name may hold anything: the fields follow its last ')'
  if (close == std::string::npos) return -1;
  std::istringstream rest(text.substr(close + 1));
  std::string state;
  long ppid = -1;
  rest >> state >> ppid;
  return ppid;
}

std::vector<std::string> argv_of(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> out;
  for (std::string arg; std::getline(in, arg, '\0');) out.push_back(arg);
  return out;
}

bool serves(const std::vector<std::string>& argv, const std::string& container_id) {
  if (argv.empty() || argv[0] != "runsc-gofer") return false;
  std::string bundle_tail = "/" + container_id + "/userdata";
  for (std::size_t i = 1; i < argv.size(); ++i) {
    std::string v = argv[i];
    if (v.rfind("--bundle=", 0) == 0) v = v.substr(9);
    else if (v == "--bundle" && i + 1 < argv.size()) v = argv[++i];
    else continue;
    return v.size() > bundle_tail.size() && v.compare(v.size() - bundle_tail.size(), bundle_tail.size(), bundle_tail) == 0;
  }
  return false;
}

}  // namespace

long runsc_gofer_pid(long sandbox_pid, const std::string& container_id) {
  long conmon = parent_of(sandbox_pid);
  std::vector<long> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    long pid = std::stol(name);
    if (pid != sandbox_pid && parent_of(pid) == conmon && serves(argv_of(pid), container_id)) found.push_back(pid);
  }
  if (conmon > 1 && found.size() == 1) return found.front();
  throw Error(ErrorKind::isolation_unavailable,
              "gVisor (runsc): " + std::string(found.empty() ? "no" : "more than one") + " gofer of container " +
                  container_id.substr(0, 12) + " beside its sandbox (pid " + std::to_string(sandbox_pid) +
                  "): the checks before start cannot see the container's root; nothing was started");
}

}  // namespace asbx
