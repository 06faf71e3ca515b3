// A directory of a unit test's own under /tmp, removed with everything in it at scope end.
#pragma once
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace asbx::test {

struct TempDir {
  std::filesystem::path dir;
  TempDir() {
    char tmpl[] = "/tmp/asbx-unit-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(dir); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string s(const std::string& rel = "") const { return rel.empty() ? dir.string() : (dir / rel).string(); }
  void write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel) << text;
  }
  std::string read(const std::string& rel) const {
    std::ifstream in(dir / rel);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }
};

}  // namespace asbx::test
