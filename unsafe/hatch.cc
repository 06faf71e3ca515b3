#include "unsafe/hatch.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/util.h"

extern char** environ;

namespace asbx::unsafe {
namespace {

constexpr const char* kProgram = "agent-sandbox-unsafe";

bool exists(const std::string& path) {
  struct stat st{};
  return ::lstat(path.c_str(), &st) == 0;
}

std::map<std::string, std::string> parse_environ_block(const std::string& block) {
  std::map<std::string, std::string> env;
  std::istringstream in(block);
  for (std::string kv; std::getline(in, kv, '\0');)
    if (auto eq = kv.find('='); eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  return env;
}

std::string join_root(const std::string& root, const std::string& path) {
  return root == "/" ? path : root + path;
}

// systemd's own check (sd_booted): the directory exists only while systemd is PID 1.
void require_systemd(bool user_manager, const HatchOptions& opts) {
  if (!exists(join_root(opts.root, "/run/systemd/system")))
    throw Error(ErrorKind::systemd_run_failed,
                "systemd is not running on this host (no /run/systemd/system): cannot start a scope in unsafe.slice");
  if (!user_manager) return;
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  std::string bus = std::string(runtime ? runtime : "") + "/bus";
  if (!runtime || !exists(bus))
    throw Error(ErrorKind::systemd_run_failed,
                "no user manager bus at '" + bus + "' (XDG_RUNTIME_DIR): start it from a login session");
}

std::string find_systemd_run() {
  for (const char* path : {"/usr/bin/systemd-run", "/bin/systemd-run"})
    if (::access(path, X_OK) == 0) return path;
  throw Error(ErrorKind::systemd_run_failed, "systemd-run not found in /usr/bin or /bin");
}

[[noreturn]] void exec_argv(const std::vector<std::string>& argv) {
  std::vector<char*> raw;
  for (const auto& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
  raw.push_back(nullptr);
  ::execv(raw[0], raw.data());
  throw Error(ErrorKind::systemd_run_failed, "cannot execute " + argv[0] + ": " + std::strerror(errno));
}

void start(const std::vector<std::string>& command, const HatchOptions& opts) {
  if (command.empty()) throw Error(ErrorKind::usage, "no command given: use agent-sandbox-unsafe [--] COMMAND [ARG...]");
  if (auto why = refusal_reason(current_facts(opts))) throw Error(ErrorKind::unsafe_refused, "refused: " + *why);
  bool user_manager = ::getuid() != 0;
  require_systemd(user_manager, opts);
  auto argv = systemd_run_argv(find_systemd_run(), user_manager, ::getpid(), command);
  ::setenv(kUnsafeSessionMarker, "1", 1);
  std::fprintf(stderr, "%s: running '%s' ON THIS HOST, not sandboxed, in scope agent-sandbox-unsafe-%ld (unsafe.slice)\n",
               kProgram, command[0].c_str(), static_cast<long>(::getpid()));
  exec_argv(argv);
}

}  // namespace

HatchFacts current_facts(const HatchOptions& opts) {
  HatchFacts f;
  f.stdin_tty = ::isatty(0);
  f.stdout_tty = ::isatty(1);
  f.environ = environ_map(environ);
  // Readable by root only; an ordinary user's hatch relies on the files and its own environment.
  std::ifstream pid1(join_root(opts.root, "/proc/1/environ"), std::ios::binary);
  if (pid1) f.pid1_environ = parse_environ_block(std::string(std::istreambuf_iterator<char>(pid1), {}));
  for (const auto& file : kContainerFiles)
    if (exists(join_root(opts.root, file))) f.container_files_present.push_back(file);
  return f;
}

std::vector<std::string> systemd_run_argv(const std::string& systemd_run, bool user_manager, long pid,
                                          const std::vector<std::string>& command) {
  std::vector<std::string> argv = {systemd_run};
  if (user_manager) argv.push_back("--user");
  std::string unit = "agent-sandbox-unsafe-" + std::to_string(pid);
  argv.insert(argv.end(), {"--scope", "--slice=unsafe.slice", "--unit=" + unit, "--quiet",
                           "--description=agent-sandbox-unsafe: " + command[0], "--"});
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::vector<std::string> parse_command(const std::vector<std::string>& args, bool& help) {
  help = !args.empty() && (args[0] == "-h" || args[0] == "--help");
  if (help) {
    std::printf("usage: %s [--] COMMAND [ARG...]\n"
                "Runs COMMAND on this host, NOT sandboxed, in a transient scope under unsafe.slice.\n"
                "For a human at a terminal only: refuses when stdin or stdout is not a terminal, when an\n"
                "agent marker is in the environment, or inside a container. See docs/CALLERS.md.\n",
                kProgram);
    return {};
  }
  if (!args.empty() && args[0] == "--") return {args.begin() + 1, args.end()};
  if (!args.empty() && args[0].size() > 1 && args[0][0] == '-')
    throw Error(ErrorKind::usage, "unknown option '" + args[0] + "'; run 'agent-sandbox-unsafe --help'");
  return args;
}

int run_hatch(const std::vector<std::string>& command, const HatchOptions& opts) {
  try {
    start(command, opts);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return e.exit_code();
  }
  return exit_code_of(ErrorKind::internal);  // unreachable: start() execs or throws
}

}  // namespace asbx::unsafe
