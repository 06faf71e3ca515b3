// The house's floors (docs/ARCHITECTURE.md): every include points down or sideways, never up.
//   0 ground floor  base/                          the session's values and the shared basics
//   1 policy        plan/ seccomp/ credtable/ mounts/ preflight/ egress/ state/ tripwire/ gitscan/ persist/   decide; never HTTP or ssh
//   2 mechanism     launcher/<room>/               execute the plan (podman, lifecycle, remote, ...)
//   3 top           launcher/*.cc, unsafe/         the CLI and the executables
// A file may include its own floor and the floors below. The whole source tree is read.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The floor of a source path relative to the tree ("launcher/podman/spec.h" → 2), -1 when it is
// none of ours (a system or library header, tests, fuzz).
int floor_of(const std::string& path) {
  static const std::map<std::string, int> rooms = {
      {"base", 0},      {"plan", 1},  {"credtable", 1}, {"mounts", 1},
      {"preflight", 1}, {"seccomp", 1}, {"egress", 1}, {"state", 1},     {"tripwire", 1}, {"gitscan", 1}, {"persist", 1}, {"unsafe", 3}};
  auto slash = path.find('/');
  if (slash == std::string::npos) return -1;
  std::string top = path.substr(0, slash);
  if (top == "launcher") return path.find('/', slash + 1) == std::string::npos ? 3 : 2;
  auto it = rooms.find(top);
  return it == rooms.end() ? -1 : it->second;
}

// "FILE -> INCLUDE" for every include of `text` (the file at `path`) that climbs, or that brings
// HTTP or ssh into a policy file.
std::vector<std::string> climbing(const std::string& path, const std::string& text) {
  std::vector<std::string> out;
  int here = floor_of(path);
  if (here < 0) return out;
  static const std::regex include(R"(#include\s*[<"]([^">]+)[">])");
  for (std::sregex_iterator it(text.begin(), text.end(), include), end; it != end; ++it) {
    std::string inc = (*it)[1];
    int there = floor_of(inc);
    bool mechanism_header = inc.find("httplib") != std::string::npos || inc.find("libssh") != std::string::npos ||
                            inc.rfind("openssl/", 0) == 0;
    if (there > here || (here <= 1 && mechanism_header)) out.push_back(path + " -> " + inc);
  }
  return out;
}

// Top-level folders that hold C++ but are no room of the house: the tests and fuzz targets sit
// beside it (they may include any floor); packaging/ holds what runs inside a session (the gVisor
// compat shim, libc only), never linked into the launcher.
bool beside_the_house(const std::string& top) { return top == "tests" || top == "fuzz" || top == "packaging"; }

bool holds_cxx(const fs::path& dir) {
  if (fs::exists(dir / "CMakeCache.txt")) return false;  // a build tree
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".h" || ext == ".cc")) return true;
  }
  return false;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("layering: the rule itself reports an include that climbs") {
  CHECK(floor_of("base/error.h") == 0);
  CHECK(floor_of("mounts/git.cc") == 1);
  CHECK(floor_of("launcher/podman/spec.h") == 2);
  CHECK(floor_of("launcher/cli.cc") == 3);
  CHECK(floor_of("nlohmann/json.hpp") == -1);
  CHECK(climbing("mounts/git.cc", "#include \"launcher/podman/spec.h\"\n") ==
        std::vector<std::string>{"mounts/git.cc -> launcher/podman/spec.h"});
  CHECK(climbing("base/plan.h", "#include \"egress/policy.h\"\n") ==
        std::vector<std::string>{"base/plan.h -> egress/policy.h"});
  CHECK(climbing("egress/sni.cc", "#include <httplib.h>\n") == std::vector<std::string>{"egress/sni.cc -> httplib.h"});
  CHECK(climbing("egress/inject.cc", "#include <openssl/ssl.h>\n") ==
        std::vector<std::string>{"egress/inject.cc -> openssl/ssl.h"});
  CHECK(climbing("launcher/wall/proxy.cc", "#include \"egress/decision.h\"\n#include \"base/error.h\"\n").empty());
  CHECK(climbing("launcher/cli.cc", "#include \"launcher/remote/remote.h\"\n").empty());
}

TEST_CASE("layering: no include in the source tree climbs a floor") {
  const fs::path root = ASBX_SOURCE_DIR;
  std::vector<std::string> found;
  std::size_t files = 0;
  for (const char* top : {"base", "plan", "credtable", "mounts", "preflight", "egress", "state", "tripwire", "gitscan", "persist",
                          "launcher", "unsafe"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
      ++files;
      auto bad = climbing(fs::relative(entry.path(), root).string(), read(entry.path()));
      found.insert(found.end(), bad.begin(), bad.end());
    }
  }
  CHECK(files > 100);
  std::string all;
  for (const auto& f : found) all += f + "\n";
  CHECK_MESSAGE(found.empty(), "includes that climb:\n" << all);
}

TEST_CASE("layering: every folder of C++ in the tree is a room with a floor") {
  const fs::path root = ASBX_SOURCE_DIR;
  std::vector<std::string> homeless;
  for (const auto& entry : fs::directory_iterator(root)) {
    std::string top = entry.path().filename().string();
    if (!entry.is_directory() || top.front() == '.' || beside_the_house(top)) continue;
    if (floor_of(top + "/x.h") < 0 && holds_cxx(entry.path())) homeless.push_back(top);
  }
  std::string all;
  for (const auto& f : homeless) all += f + "/ ";
  CHECK_MESSAGE(homeless.empty(), "folders of C++ with no floor (add them to floor_of() here and to docs/ARCHITECTURE.md): "
                                      << all);
}
