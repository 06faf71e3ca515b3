// gitscan/index.cc, gitscan/objects.cc, gitscan/refs.cc: the index, loose objects, HEAD and
// packed-refs read as data, from bytes built here the way git writes them.
#include <doctest/doctest.h>

#include <zlib.h>

#include "gitscan/index.h"
#include "gitscan/objects.h"
#include "gitscan/refs.h"

using namespace asbx;

namespace {

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

// One entry as git writes it: 40 bytes of stat data (mode at 24), the id, the flags, the path.
std::string entry(const std::string& path, std::uint32_t mode, int version, std::size_t strip = 0,
                  const std::string& suffix = "") {
  std::string e(24, '\0');
  e += be32(mode) + std::string(12, '\0') + std::string(20, '\x11');
  std::uint16_t len = static_cast<std::uint16_t>(std::min<std::size_t>(path.size(), 0xfff));
  e += static_cast<char>(len >> 8);
  e += static_cast<char>(len);
  if (version == 4) {
    e += static_cast<char>(strip);
    return e + suffix + '\0';
  }
  e += path;
  do e += '\0';
  while (e.size() % 8);
  return e;
}

std::string index_of(int version, const std::vector<std::string>& entries, const std::string& extensions = "") {
  std::string d = "DIRC" + be32(version) + be32(static_cast<std::uint32_t>(entries.size()));
  for (const auto& e : entries) d += e;
  return d + extensions + std::string(20, '\x22');
}

std::string deflate(const std::string& raw) {
  uLongf size = compressBound(raw.size());
  std::string out(size, '\0');
  compress(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(raw.data()), raw.size());
  out.resize(size);
  return out;
}

const std::string kId(40, 'a');

}  // namespace

TEST_CASE("git index: versions 2 and 4, gitlinks listed, damage named") {
  auto v2 = parse_git_index(index_of(2, {entry("README", 0100644, 2), entry("sub", 0160000, 2),
                                         entry("src/a.c", 0100755, 2)}));
  CHECK(v2.error == "");
  CHECK(v2.entries == 3);
  CHECK(v2.gitlinks == std::vector<std::string>{"sub"});
  // Version 4: each path strips N bytes of the previous one and adds a suffix.
  auto v4 = parse_git_index(index_of(4, {entry("lib/one", 0100644, 4, 0, "lib/one"), entry("lib/sub", 0160000, 4, 3, "sub"),
                                         entry("lib/subx", 0160000, 4, 0, "x")}));
  CHECK(v4.error == "");
  CHECK(v4.gitlinks == std::vector<std::string>{"lib/sub", "lib/subx"});
  CHECK(parse_git_index(index_of(2, {}, "link" + be32(4) + "abcd")).split_index);
  CHECK(parse_git_index(index_of(2, {}, "TREE" + be32(2) + "ab")).error == "");
  std::string good = index_of(2, {entry("a", 0100644, 2)});
  CHECK(parse_git_index(good.substr(0, good.size() - 25)).error == "entry 0 of 1 is cut or malformed");
  CHECK(parse_git_index(good.substr(0, good.size() - 1)).error == "the extensions or the checksum are cut or malformed");
  CHECK(parse_git_index("DIRX" + good.substr(4)).error == "not an index (no DIRC signature)");
  CHECK(parse_git_index("DIRC" + be32(9) + good.substr(8)).error == "index version 9 (git writes 2 to 4)");
  CHECK(parse_git_index(index_of(4, {entry("a", 0100644, 4, 5, "b")})).error == "entry 0 of 1 is cut or malformed");
  CHECK(parse_git_index(index_of(2, {entry("a", 0160000, 2), entry("b", 0160000, 2)}), 20, 1).gitlinks.size() == 1);
}

TEST_CASE("git objects: a loose commit, tree and tag, and what is refused") {
  std::string tree = std::string("100644 a\0", 9) + std::string(20, '\x01') + std::string("160000 sub\0", 11) +
                     std::string(20, '\xab');
  auto obj = read_loose_object(deflate("tree " + std::to_string(tree.size()) + std::string(1, '\0') + tree), 1 << 20);
  REQUIRE(obj);
  CHECK(obj->type == "tree");
  auto entries = parse_tree(obj->body, 20);
  REQUIRE(entries);
  CHECK(entries->size() == 2);
  CHECK((*entries)[1].mode == "160000");
  CHECK((*entries)[1].name == "sub");
  CHECK((*entries)[1].id == "abababababababababababababababababababab");
  auto commit = parse_commit("tree " + kId + "\nparent " + std::string(40, 'b') + "\nauthor x\n\nmsg\ntree zz\n", 20);
  REQUIRE(commit);
  CHECK(commit->tree == kId);
  CHECK(commit->parents == std::vector<std::string>{std::string(40, 'b')});
  CHECK_FALSE(parse_commit("tree nothex\n\n", 20));
  CHECK(parse_tag_target("object " + kId + "\ntype commit\n\n", 20) == kId);
  // A header that lies about the size, an unknown type, a bomb past the bound, a cut stream.
  CHECK_FALSE(read_loose_object(deflate(std::string("blob 9\0abc", 10)), 1 << 20));
  CHECK_FALSE(read_loose_object(deflate(std::string("evil 3\0abc", 10)), 1 << 20));
  CHECK_FALSE(read_loose_object(deflate("blob 100000\0" + std::string(100000, 'x')), 1000));
  std::string z = deflate(std::string("blob 3\0abc", 10));
  CHECK_FALSE(read_loose_object(z.substr(0, z.size() - 3), 1 << 20));
  CHECK_FALSE(read_loose_object(deflate(std::string("blob 99999999999999999999\0", 26)), 1 << 20));
  CHECK_FALSE(parse_tree(std::string("100644 a\0", 9) + "short", 20));
}

TEST_CASE("refs: git's ref name rules, HEAD, loose refs and packed-refs") {
  for (const char* ok : {"refs/heads/main", "refs/heads/feature/x-1", "refs/tags/v1.0"}) CHECK(is_safe_refname(ok));
  for (const char* bad : {"refs/heads/../x", "refs//x", "refs/heads/x.lock", "refs/heads/.x", "refs/heads/x.",
                          "refs/heads/a b", "refs/heads/a~1", "refs/heads/a:b", "refs/heads/a@{1}", "@", "refs/heads/",
                          "refs/heads/a\\b", "refs/heads/a\x01"})
    CHECK_MESSAGE(!is_safe_refname(bad), bad);
  CHECK(check_head("ref: refs/heads/main\n", 20) == "");
  CHECK(check_head(kId + "\n", 20) == "");
  CHECK(check_head("ref: refs/heads/main", 20) == "it does not end with a newline");
  CHECK(check_head("ref: refs/remotes/x\n", 20) == "it is neither 'ref: refs/heads/NAME' nor an object id");
  CHECK(check_head("ref: refs/heads/../../config\n", 20) == "it names a branch git would refuse");
  CHECK(check_head("ref: refs/heads/a\nx\n", 20) == "it has more than one line");
  CHECK(loose_ref_id(kId + "\n", 20) == kId);
  CHECK_FALSE(loose_ref_id("ref: refs/heads/x\n", 20));
  std::string why;
  auto refs = parse_packed_refs("# pack-refs with: peeled fully-peeled sorted \n" + kId + " refs/heads/main\n^" +
                                    std::string(40, 'c') + "\n",
                                20, why);
  REQUIRE(refs);
  CHECK(refs->at("refs/heads/main") == kId);
  CHECK_FALSE(parse_packed_refs(kId + " refs/heads/../x\n", 20, why));
  CHECK(why == "line 1: neither 'ID refs/NAME' nor '^ID'");
  CHECK_FALSE(parse_packed_refs(kId + " refs/heads/main", 20, why));
  CHECK(why == "line 1: no newline at the end");
}

TEST_CASE("git index: a path git refuses is named (it would reach outside the work tree)") {
  CHECK(git_path_problem("src/main.cc") == "");
  CHECK(git_path_problem(".gitignore") == "");
  CHECK(git_path_problem("a/.github/x") == "");
  CHECK(git_path_problem("../../tmp/secret") == "a '..' component");
  CHECK(git_path_problem("a/../../b") == "a '..' component");
  CHECK(git_path_problem("/etc/shadow") == "a leading '/'");
  CHECK(git_path_problem("a/./b") == "a '.' component");
  CHECK(git_path_problem("a//b") == "an empty component");
  CHECK(git_path_problem("a/") == "an empty component");
  CHECK(git_path_problem("") == "an empty path");
  CHECK(git_path_problem(".git/config") == "a '.git' component");
  CHECK(git_path_problem("sub/.GiT/hooks/x") == "a '.git' component");
  CHECK(git_path_problem("sub/.git. ./hooks") == "a '.git' component");
  CHECK(git_path_problem("a\\b") == "a backslash");
  auto v2 = parse_git_index(index_of(2, {entry("ok", 0100644, 2), entry("../../../tmp/root-secret", 0100644, 2)}));
  CHECK(v2.error == "");
  CHECK(v2.bad_path == "entry 1 '../../../tmp/root-secret': a '..' component");
  auto v4 = parse_git_index(index_of(4, {entry("/etc/shadow", 0100644, 4, 0, "/etc/shadow")}));
  CHECK(v4.bad_path == "entry 0 '/etc/shadow': a leading '/'");
  CHECK(parse_git_index(index_of(2, {entry("a", 0100644, 2)})).bad_path == "");
}
