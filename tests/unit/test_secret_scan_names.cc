// Inject mode's end-of-session scan (launcher/lifecycle/secret_scan.h) over names and link
// targets, and its depth bound: a token kept as a file name, a symlink's target, a git ref name,
// or below the depth bound is found or said, never a silent pass.
#include <doctest/doctest.h>

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "credtable/placeholder.h"
#include "launcher/lifecycle/secret_scan.h"
#include "tests/unit/temp_dir.h"

using namespace asbx;
namespace fs = std::filesystem;

namespace {
const std::string kReal = "REALTOKEN-0123456789";

std::vector<std::string> scan(const fs::path& dir, ScanBudget& budget) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  auto found = scan_tree(fd, "/top", exposure_values({kReal}), budget);
  ::close(fd);
  return found;
}
}  // namespace

TEST_CASE("secret scan: a value in a file name, a directory name, a ref name or a link target is found") {
  asbx::test::TempDir t;
  t.write("n-" + kReal, "");
  t.write("refs/heads/k" + kReal, std::string(40, 'a') + "\n");
  t.write("d" + kReal + "/held", kReal);  // found once by its name; the file below it too, named by the stand-in
  fs::create_symlink("x" + kReal, t.dir / "l");
  std::string reversed(kReal.rbegin(), kReal.rend());
  fs::create_symlink(reversed, t.dir / "r");
  t.write("clean", "nothing");
  ScanBudget budget;
  auto found = scan(t.dir, budget);
  std::sort(found.begin(), found.end());
  const std::string w = "(a name holding the value)";
  CHECK(found == std::vector<std::string>{"/top/" + w, "/top/" + w, "/top/" + w + "/held", "/top/l (its link target)",
                                          "/top/r (its link target)", "/top/refs/heads/" + w});
  CHECK_FALSE(budget.exhausted);
  CHECK(budget.too_deep.empty());
}

TEST_CASE("secret scan: below its depth bound a directory is named as not searched, the rest still searched") {
  asbx::test::TempDir t;
  fs::path p = t.dir;
  for (int i = 0; i < 66; ++i) p /= "a";
  fs::create_directories(p);
  t.write("shallow.txt", kReal);
  ScanBudget budget;
  auto found = scan(t.dir, budget);
  CHECK(found == std::vector<std::string>{"/top/shallow.txt"});
  REQUIRE(budget.too_deep.size() == 1);
  std::string expect = "/top";
  for (int i = 0; i <= ScanBudget::kMaxDepth; ++i) expect += "/a";
  CHECK(budget.too_deep[0] == expect);
  CHECK_FALSE(budget.exhausted);  // a depth is not the file/byte bound: the warning names which
}
