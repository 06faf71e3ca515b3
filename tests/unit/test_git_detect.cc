// What the workspace scan takes for a repository (launcher/gitguard/scan.h looks_like_git_directory):
// what git's is_git_directory() (setup.c) accepts, including a HEAD symlink and a `commondir` file.
// The real sessions are tests/integration/test_git_detect.py.
#include <doctest/doctest.h>

#include <string>

#include "launcher/gitguard/scan.h"

using namespace asbx;

TEST_CASE("valid_head: a ref or an object id, as git's validate_headref reads HEAD") {
  CHECK(valid_head("ref: refs/heads/main\n"));
  CHECK(valid_head("ref:refs/heads/main"));
  CHECK(valid_head("ref: \trefs/x"));
  CHECK(valid_head(std::string(40, 'a') + "\n"));
  CHECK(valid_head(std::string(64, '0')));
  CHECK_FALSE(valid_head(""));
  CHECK_FALSE(valid_head("ref: heads/main"));
  CHECK_FALSE(valid_head(std::string(39, 'a')));
  CHECK_FALSE(valid_head("hello, a project's own HEAD file"));
}

TEST_CASE("looks_like_git_directory: a HEAD symlink, commondir, objects/refs links all count") {
  GitDirProbe classic{"ref: refs/heads/main\n", false, true, true, false, ""};
  CHECK(looks_like_git_directory(classic));
  GitDirProbe link = classic;  // s1: rm HEAD; ln -s refs/heads/main HEAD
  link.head = "";
  link.head_link = true;
  CHECK(looks_like_git_directory(link));
  GitDirProbe common{"ref: refs/heads/main\n", false, false, false, true, ""};  // s2: HEAD + commondir only
  CHECK(looks_like_git_directory(common));
  GitDirProbe no_refs = classic;
  no_refs.refs = false;
  CHECK_FALSE(looks_like_git_directory(no_refs));
  GitDirProbe bad_head = classic;
  bad_head.head = "not a head";
  CHECK_FALSE(looks_like_git_directory(bad_head));
  CHECK_FALSE(looks_like_git_directory(GitDirProbe{}));
}
