#include "seccomp/profile.h"
#include "launcher/cli.h"
#include "launcher/pool/fill.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "launcher/doctor/doctor.h"
#include "launcher/gitguard/safe_git.h"
#include "base/error.h"
#include "base/request.h"
#include "launcher/podman/deferred_removal.h"
#include "launcher/podman/gc.h"
#include "launcher/kube/kube_cli.h"
#include "launcher/lifecycle/diagnostics.h"
#include "launcher/lifecycle/local.h"
#include "launcher/lifecycle/reexec.h"
#include "launcher/persist/commands.h"
#include "launcher/remote/remote.h"
#include "launcher/remote/remote_persist.h"
#include "launcher/remote/seat_doctor.h"
#include "launcher/lifecycle/status.h"
#include "launcher/state/export.h"
#include "base/util.h"

namespace asbx {
namespace {

// Split at the first "--": what follows is the command, untouched by option parsing.
std::vector<std::string> split_command(int argc, char** argv, std::vector<std::string>& options) {
  std::vector<std::string> command;
  bool in_command = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (!in_command && a == "--") {
      in_command = true;
      continue;
    }
    (in_command ? command : options).push_back(a);
  }
  return command;
}

void add_session_options(CLI::App& app, Request& req) {
  app.add_option("--id", req.id, "session id (letters, digits, - _ .; not pool-...); default: generated");
  app.add_option("--image", req.image, "container image on the seat");
  app.add_option("--workspace", req.workspace, "workspace: a direct child of one of the seat's permitted roots; "
                 "'.' = the checkout you stand in");
  app.add_option("--git-mirror", req.git_mirror, "the common dir (mirror) of the workspace's linked worktree");
  app.add_option("--memory", req.memory, "memory limit, e.g. 12g (swap is forbidden)");
  app.add_option("--pids", req.pids, "pids limit")->check(CLI::PositiveNumber);
  app.add_option("--cpus", req.cpus, "CPU quota in cores");
  app.add_option("--cpu-shares", req.cpu_shares, "CPU shares")->check(CLI::PositiveNumber);
  app.add_option("--disk", req.disk, "what the session may add to the seat's disk (workspace, writable git dirs), "
                 "e.g. 2g; at most the seat's [limits] disk");
  app.add_option("--disk-inodes", req.disk_inodes, "files the session may add; at most the seat's")->check(CLI::PositiveNumber);
  app.add_option("--timeout", req.timeout, "kill the session after DURATION (e.g. 90s, 30m)");
  app.add_option("--network", req.network, "none (default), ns:/run/netns/NAME, container:NAME or slirp4netns (docs/AGENTS.md)");
  app.add_option("--egress", req.egress, "allow HOST[:PORT], http://HOST[:PORT] or default (the runtime's endpoints) "
                 "through the egress proxy; repeatable (docs/EGRESS.md)")->allow_extra_args(false);
  app.add_option("--isolation", req.isolation, "runc or gvisor: the wall (default: the seat's runtime; never weaker "
                 "than the seat requires; docs/ISOLATION.md)");
  app.add_option("--runtime", req.runtime, "credtable row: codex, claude or cursor-agent");
  app.add_option("--account", req.account, "credential identity within the runtime row");
  app.add_option("--credential", req.credential, "explicit credential file (instead of the row's template)");
  app.add_flag("--tty", req.tty, "allocate a terminal (raw mode; window size follows)");
  app.add_flag("--persist", req.persist, "with --tty and --timeout: the session outlives this terminal; ctrl-p ctrl-q "
               "detaches, 'attach ID' comes back (docs/LIFECYCLE.md)");
  app.add_flag("--dry-run", req.dry_run, "print the launch plan as JSON and create nothing");
  app.add_option("--status-file", req.status_file, "write the status record (JSON) here at the end");
  app.add_option("--ledger", req.ledger, "append the ledger line here instead of the default");
  app.add_option("--capture-log", req.capture_log,
                 "write the agent's combined stdout+stderr to this file; stdout then carries only its path");
  app.add_option("--capture-log-max", req.capture_log_max, "the most of the agent's output the capture log keeps "
                 "(default 4g); the rest is counted in the record");
  app.add_option("--state-dir", req.state_dir, "keep the runtime's state (transcripts, rollouts) in DIR/<id>/ (docs/STATE.md)");
}

// The session's profile as this seat renders it now (seccomp/profile.h): for a Kubernetes node's
// seccomp root and for reading. Its digest on stderr: the one --dry-run and kube name.
int print_seccomp_profile(const std::string& program) {
  try {
    SessionFacts f = current_session_facts();
    SeccompPlan s = plan_seccomp(f.seccomp_default_path, f.seccomp_default, "", "");
    std::cout << s.text << std::flush;
    std::fprintf(stderr, "sha256:%s\n", s.digest.c_str());
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), e.what());
    return e.exit_code();
  }
}

void print_exit_codes(bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& row : exit_code_table())
      out.push_back({{"code", row.code}, {"name", row.name}, {"meaning", row.meaning}});
    std::cout << out.dump(2) << std::endl;
    return;
  }
  for (const auto& row : exit_code_table()) std::printf("%3d  %-24s %s\n", row.code, row.name, row.meaning);
}

int usage_error(const std::string& program, const std::string& message, const Request& req) {
  Error e(ErrorKind::usage, message);
  std::fprintf(stderr, "%s: %s\n", program.c_str(), printable(e.what()).c_str());
  if (!req.status_file.empty()) write_status_file(req.status_file, early_failure_record(req.id, e));
  return e.exit_code();
}

int early_error(const std::string& program, const Error& e, const Request& req) {
  std::fprintf(stderr, "%s: %s\n", program.c_str(), printable(e.what()).c_str());
  if (!req.status_file.empty()) write_status_file(req.status_file, early_failure_record(req.id, e));
  return e.exit_code();
}

int print_doctor(bool json) {
  auto checks = run_doctor();
  if (json) std::cout << doctor_json(checks).dump(2) << std::endl;
  else std::cout << doctor_text(checks) << std::flush;
  return doctor_exit_code(checks);
}

// Caller-side dispatch options (agent-sandbox) and the seat-side slot claim (sandbox-run).
void add_dispatch_options(CLI::App& app, const std::string& program, Request& req, RemoteOptions& remote) {
  if (program == "sandbox-run") {
    app.add_option("--slots", req.slots, "claim one of N session slots on this seat first (seat_full if none)")
        ->check(CLI::Range(1, 256));
    app.add_flag("--state-export", req.state_export, "keep the runtime's state in the seat's export area for the caller");
    app.add_flag("--capture-stdout", req.capture_stdout,
                 "send the agent's stdout and stderr both to stdout, this program's own lines to stderr "
                 "(a dispatched --capture-log)");
    return;
  }
  app.add_option("--registry", remote.registry, "seat registry (default ~/.config/agent-sandbox/registry.toml)");
  app.add_option("--host", remote.host, "dispatch to this registry host only");
}

// The manifest is printed here, never dispatched: a Pod is placed by its scheduler.
int kube_command(const std::string& program, const std::vector<std::string>& rest, Request& req,
                 const RemoteOptions& remote) {
  if (!remote.registry.empty() || !remote.host.empty())
    return usage_error(program, "kube: --registry and --host do not apply: kube prints a manifest here", req);
  if (!rest.empty() && rest[0].size() > 1 && rest[0][0] == '-')
    return usage_error(program, "unknown option '" + rest[0] + "'; run '" + program + " kube --help'", req);
  if (!rest.empty() && !req.argv.empty())
    return usage_error(program, "unexpected '" + rest[0] + "' before '--': the command goes after '--'", req);
  req.argv.insert(req.argv.begin(), rest.begin(), rest.end());
  return kube_main(program, req);
}

int main_for(const std::string& program, int argc, char** argv) {
  // A session's detached remover, this program again (launcher/podman/deferred_removal.h).
  if (argc == 5 && std::string(argv[1]) == kRemoverVerb) {
    try {
      return run_deferred_remover(argv[2], argv[3], argv[4]);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s: %s\n", program.c_str(), e.what());
      return e.exit_code();
    }
  }
  Request req;
  RemoteOptions remote;
  std::vector<std::string> options;
  req.argv = split_command(argc, argv, options);
  CLI::App app{program + ": run an agent in an ephemeral, locked-down podman container", program};
  app.prefix_command();  // without "--", the first non-option word starts the command
  app.set_version_flag("--version", program + " " + ASBX_VERSION, "print the version and exit");
  add_session_options(app, req);
  add_dispatch_options(app, program, req, remote);
  bool codes_json = false;
  auto* codes = app.add_subcommand("exit-codes", "print the table of launcher exit codes");
  codes->add_flag("--json", codes_json, "as JSON");
  auto* profile = app.add_subcommand("seccomp-profile", "print the sessions' seccomp profile as this seat renders it (digest on stderr)");
  bool gc_json = false, ps_json = false;
  auto* gc = app.add_subcommand("gc", "remove session containers whose launcher is gone or whose timeout passed");
  gc->add_flag("--json", gc_json, "as JSON");
  auto* pool = app.add_subcommand("pool", "the seat's warm pool (docs/LIFECYCLE.md): 'pool fill' makes members up to pool_size");
  auto* pool_fill_cmd = pool->add_subcommand("fill", "remove members made for another plan, make members until pool_size are ready");
  pool->require_subcommand(1);
  auto* ps = app.add_subcommand("ps", "list live sessions on this seat");
  ps->add_flag("--json", ps_json, "as JSON");
  std::string attach_id, stop_id;
  auto* attach = app.add_subcommand("attach", "attach this terminal to a persistent session (ctrl-p ctrl-q detaches)");
  attach->add_option("id", attach_id, "session id")->required();
  auto* stop = app.add_subcommand("stop", "end a persistent session (its usual record and ledger line)");
  stop->add_option("id", stop_id, "session id")->required();
  if (program == "agent-sandbox")
    for (auto* sub : {attach, stop, ps}) {  // through the registry, like a session
      sub->add_option("--registry", remote.registry, "seat registry (default ~/.config/agent-sandbox/registry.toml)");
      sub->add_option("--host", remote.host, "that registry host only");
    }
  bool doctor_json = false;
  auto* doctor = app.add_subcommand("doctor", "check this seat: NoNewPrivs, linger, user bus, podman, image, limits");
  doctor->add_flag("--json", doctor_json, "as JSON");
  std::string export_id;
  int export_wait = 0;
  auto* state_export = app.add_subcommand("state-export", "stream a dispatched session's kept state, then remove it");
  state_export->add_option("id", export_id, "session id")->required();
  state_export->add_option("--wait", export_wait, "wait up to SECONDS for the session to end")->check(CLI::Range(0, 600));
  if (program == "agent-sandbox")  // the caller side checks a registry's seats instead of this host
    doctor->add_option("--registry", remote.registry, "check every seat of this registry over ssh");
  std::string git_workspace, git_mirror;
  auto* git = app.add_subcommand("git", "run the host's git for a workspace an agent wrote, so that nothing it wrote can "
                                        "run: git --workspace WS [--git-mirror M] -- ARGS (docs/CALLERS.md)");
  git->add_option("--workspace", git_workspace, "the workspace, as given to the session")->required();
  git->add_option("--git-mirror", git_mirror, "its mirror, for a linked worktree (as given to the session)");
  auto* kube = app.add_subcommand("kube", "print the session as a Kubernetes manifest (YAML); create nothing");
  kube->prefix_command();
  add_session_options(*kube, req);
  try {
    std::reverse(options.begin(), options.end());
    app.parse(options);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(program, e.what(), req);
  }
  if (codes->parsed()) {
    print_exit_codes(codes_json);
    return 0;
  }
  if (profile->parsed()) return print_seccomp_profile(program);
  if (gc->parsed()) return gc_main(program, gc_json);
  if (pool_fill_cmd->parsed()) return pool_fill_main(program);
  bool remote_seat = program == "agent-sandbox" && wants_remote(remote, current_user_facts());
  if (ps->parsed()) return remote_seat ? remote_ps_main(remote, ps_json) : ps_main(program, ps_json);
  if (attach->parsed()) return remote_seat ? remote_attach_main(remote, attach_id) : attach_main(program, attach_id);
  if (stop->parsed()) return remote_seat ? remote_stop_main(remote, stop_id) : stop_main(program, stop_id);
  if (doctor->parsed() && !remote.registry.empty()) return seat_doctor_main(program, remote.registry, doctor_json);
  if (doctor->parsed()) return print_doctor(doctor_json);
  if (state_export->parsed()) return state_export_main(program, export_id, export_wait);
  if (kube->parsed()) return kube_command(program, kube->remaining(), req, remote);
  if (git->parsed()) {
    if (!git->remaining().empty())
      return usage_error(program, "git: unexpected '" + git->remaining()[0] + "': git's arguments go after '--'", req);
    return safe_git_main(program, git_workspace, git_mirror, req.argv);
  }
  auto rest = app.remaining();
  if (!rest.empty() && rest[0].size() > 1 && rest[0][0] == '-')
    return usage_error(program, "unknown option '" + rest[0] + "'; run '" + program + " --help'", req);
  if (!rest.empty() && !req.argv.empty())
    return usage_error(program, "unexpected '" + rest[0] + "' before '--': the command goes after '--'", req);
  req.argv.insert(req.argv.begin(), rest.begin(), rest.end());
  if ((!req.capture_log.empty() || req.capture_stdout) && (req.tty || req.dry_run))
    return usage_error(program, std::string(req.capture_stdout ? "--capture-stdout" : "--capture-log") +
                                    " cannot be combined with " + (req.tty ? "--tty" : "--dry-run"), req);
  if (req.id.rfind(kMemberIdPrefix, 0) == 0)  // a cold session's dir would pass for a member's (base/request.h)
    return usage_error(program, "--id: '" + req.id + "' starts with '" + kMemberIdPrefix +
                                    "', which only the seat's warm pool members' ids have", req);
  if (remote_seat) {
    if (req.workspace && *req.workspace == ".")
      return usage_error(program, "--workspace . names a checkout on this machine; a seat host mounts its own paths "
                                  "(give the workspace's path on the seat)", req);
    if (req.persist && !req.state_dir.empty())
      return usage_error(program, "--state-dir is not supported with --persist through a registry: the session may end "
                                  "with no terminal attached to carry its state back", req);
    return run_remote(req, remote);
  }
  try {  // before anything is created; a dry run creates nothing and is not re-exec'd
    if (req.persist && !req.dry_run) refuse_persist_reexec();
    if (!req.dry_run)
      if (auto code = preflight_or_reexec(std::vector<std::string>(argv + 1, argv + argc), req.id)) return *code;
  } catch (const Error& e) {
    return early_error(program, e, req);
  }
  return run_local(req, LocalOptions{program});
}

}  // namespace

// Whatever ran, diagnostics still queued (a warning about gc's ledger line, a status file that
// could not be written) get their moment before the process ends; a session flushed its own.
int agent_sandbox_main(int argc, char** argv) {
  int code = main_for("agent-sandbox", argc, argv);
  flush_diagnostics();
  return code;
}

int sandbox_run_main(int argc, char** argv) {
  int code = main_for("sandbox-run", argc, argv);
  flush_diagnostics();
  return code;
}

}  // namespace asbx
