// gitscan/config.cc and gitscan/safe_git.cc: git config text as git 2.39 reads it, the keys that
// run programs, and the configuration agent-sandbox git gives the host's git.
#include <doctest/doctest.h>

#include <algorithm>

#include "gitscan/config.h"
#include "gitscan/safe_git.h"

using namespace asbx;

namespace {

std::vector<std::pair<std::string, std::string>> pairs(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : parse_git_config(text).entries) out.emplace_back(e.key, e.value);
  return out;
}

std::string error_of(const std::string& text) { return parse_git_config(text).error; }

std::string value_of(const std::vector<GitOverride>& rows, const std::string& key) {
  for (const auto& r : rows)
    if (r.key == key) return r.value;
  return "<none>";
}

}  // namespace

TEST_CASE("git config: sections, subsections and values read as git reads them") {
  CHECK(pairs("[core]\n\tbare = false\n\tFsMonitor = \"touch /tmp/x\" ; said\n") ==
        decltype(pairs("")){{"core.bare", "false"}, {"core.fsmonitor", "touch /tmp/x"}});
  // The subsection keeps its case and its escapes; the old dotted form is lowercased whole.
  CHECK(pairs("[Filter \"Ev\\\"il\"]\nClean = a\n[Diff.Sub]\nx = 1\n") ==
        decltype(pairs("")){{"filter.Ev\"il.clean", "a"}, {"diff.sub.x", "1"}});
  // A key on the header's line, a line continued, a key without a value, CRLF and a BOM.
  CHECK(pairs("\xEF\xBB\xBF[core]fsmonitor = a\\\nb\r\n[x]\r\nflag\r\n") ==
        decltype(pairs("")){{"core.fsmonitor", "ab"}, {"x.flag", ""}});
  auto flag = parse_git_config("[x]\nflag\n").entries.at(0);
  CHECK_FALSE(flag.has_value);
  // Quotes keep spaces and '#'; unquoted runs of blanks become spaces inside, vanish at the ends.
  CHECK(pairs("[a]\nb =  x  \"# y\"\tz  # c\n") == decltype(pairs("")){{"a.b", "x  # y z"}});
  CHECK(pairs("[a]\nb = \"\\n\\t\\\\\"\n") == decltype(pairs("")){{"a.b", "\n\t\\"}});
  CHECK(parse_git_config("[a]\nb = 1\n\n# c\n[d]\ne = 2\n").entries.at(1).line == 6);
}

TEST_CASE("git config: what git refuses stops the parse with its line") {
  CHECK(error_of("x = 1\n") == "line 1: a key before any section");
  CHECK(error_of("[a]\n1x = 1\n") == "line 2: a key must start with a letter");
  CHECK(error_of("[a\n") == "line 1: bad section header");
  CHECK(error_of("[a \"b\n\"]\n") == "line 1: bad section header");
  CHECK(error_of("[a]\nb = \"open\n") == "line 2: bad value for a key of [a]");
  CHECK(error_of("[a]\nb = \\q\n") == "line 2: bad value for a key of [a]");
  auto cut = parse_git_config("[a]\nb = 1\nc = 2\n", 1);
  CHECK(cut.entries.size() == 1);
  CHECK(cut.error == "line 3: more than 1 entries");
  CHECK(parse_git_config("").error.empty());
}

TEST_CASE("git config: the keys that run a program or redirect git are named") {
  auto entries = parse_git_config(
                     "[core]\nfsmonitor = false\nhooksPath = /x\nsshCommand = s\neditor = e\npager = p\n"
                     "[core]\nfsmonitor = touch m\n[filter \"lfs\"]\nclean = c\nrequired = true\n"
                     "[diff \"d\"]\ntextconv = t\n[merge \"m\"]\ndriver = d\n[credential]\nhelper = h\n"
                     "[credential \"https://x\"]\nhelper = h\n[include]\npath = p\n[includeIf \"gitdir:/x/\"]\npath = q\n"
                     "[alias]\nst = status\nx = !sh\n[pager]\nlog = less\ndiff = false\n"
                     "[remote \"o\"]\nurl = ext::sh -c x\nuploadpack = u\n[submodule \"s\"]\nupdate = !cmd\n"
                     "[protocol \"ext\"]\nallow = always\n[user]\nname = n\n")
                     .entries;
  CHECK(dangerous_keys(entries) ==
        std::vector<std::string>{"core.hookspath", "core.sshcommand", "core.editor", "core.pager", "core.fsmonitor",
                                 "filter.lfs.clean", "diff.d.textconv", "merge.m.driver", "credential.helper",
                                 "credential.https://x.helper", "include.path", "includeif.gitdir:/x/.path", "alias.x",
                                 "pager.log", "remote.o.url", "remote.o.uploadpack", "submodule.s.update",
                                 "protocol.ext.allow"});
  CHECK(include_paths(entries) == std::vector<std::string>{"p", "q"});
  CHECK(object_id_bytes(entries) == 20);
  CHECK(object_id_bytes(parse_git_config("[extensions]\nobjectFormat = SHA256\n").entries) == 32);
}

TEST_CASE("agent-sandbox git: fixed rows, and every driver and remote of the repository emptied") {
  auto rows = safe_git_overrides(parse_git_config("[filter \"Evil\"]\nclean = x\n[diff \"d\"]\ncommand = y\n"
                                                  "[remote \"origin\"]\nurl = u\n[diff]\nexternal = z\n")
                                     .entries);
  CHECK(value_of(rows, "core.fsmonitor") == "false");
  CHECK(value_of(rows, "core.hooksPath") == "/dev/null");
  CHECK(value_of(rows, "credential.helper") == "");
  CHECK(value_of(rows, "protocol.ext.allow") == "never");
  CHECK(value_of(rows, "protocol.file.allow") == "never");
  CHECK(value_of(rows, "diff.ignoreSubmodules") == "dirty");
  CHECK(value_of(rows, "filter.Evil.clean") == "");
  CHECK(value_of(rows, "filter.Evil.process") == "");
  CHECK(value_of(rows, "filter.Evil.required") == "false");
  CHECK(value_of(rows, "diff.d.command") == "");
  CHECK(value_of(rows, "diff.d.textconv") == "");
  CHECK(value_of(rows, "remote.origin.uploadpack") == "git-upload-pack");
  CHECK(value_of(rows, "diff.external") == "");
  CHECK(value_of(rows, "merge.d.driver") == "<none>");  // only drivers of their own section
  CHECK(value_of(safe_git_overrides({}), "diff.external") == "<none>");  // only when the repository sets it
}

TEST_CASE("agent-sandbox git: git's directories pinned, overrides in the environment after the caller's") {
  auto run = safe_git_run("/usr/bin/git", "/ws/a", "/ws/a/.git", "", {}, {{"GIT_CONFIG_COUNT", "2"}}, {"status", "-s"});
  CHECK(run.argv == std::vector<std::string>{"/usr/bin/git", "--no-pager", "status", "-s"});
  auto env = [&](const std::string& name) -> std::optional<std::string> {
    for (const auto& [n, v] : run.env)
      if (n == name) return v ? *v : "";
    return std::nullopt;
  };
  CHECK(env("GIT_DIR") == "/ws/a/.git");
  CHECK(env("GIT_WORK_TREE") == "/ws/a");
  CHECK(env("GIT_PAGER") == "cat");
  CHECK(env("GIT_EDITOR") == "true");
  CHECK(env("GIT_CONFIG_KEY_2") == "core.fsmonitor");  // the caller's own 0 and 1 come first
  CHECK(env("GIT_CONFIG_VALUE_2") == "false");
  std::size_t rows = safe_git_overrides({}).size();
  CHECK(env("GIT_CONFIG_COUNT") == std::to_string(2 + rows));
  CHECK(env("GIT_PROXY_COMMAND") == "");
  auto linked = safe_git_run("/usr/bin/git", "/ws/b", "/g/m/worktrees/b", "/g/m", {}, {}, {"log"});
  bool common = std::any_of(linked.env.begin(), linked.env.end(),
                            [](const auto& kv) { return kv.first == "GIT_COMMON_DIR" && kv.second == "/g/m"; });
  CHECK(common);
}
