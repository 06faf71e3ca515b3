#include "plan/build_plan.h"
#include "launcher/kube/kube_cli.h"

#include <cstdio>
#include <iostream>

#include "base/error.h"
#include "launcher/kube/kube.h"
#include "launcher/lifecycle/local.h"
#include "base/util.h"

namespace asbx {
namespace {

// Options that act on a run the manifest does not make: refused, not ignored.
void refuse_run_options(const Request& req) {
  auto refuse = [](const char* flag) {
    throw Error(ErrorKind::usage, std::string("kube: ") + flag + " does not apply: kube prints a manifest and runs nothing");
  };
  if (req.dry_run) refuse("--dry-run");
  if (!req.status_file.empty()) refuse("--status-file");
  if (!req.ledger.empty()) refuse("--ledger");
  if (!req.capture_log.empty()) refuse("--capture-log");
  if (req.persist) refuse("--persist");  // a Pod outlives terminals by its scheduler's rules, not ours
}

}  // namespace

int kube_main(const std::string& program, const Request& req) {
  try {
    refuse_run_options(req);
    Request pod = req;
    pod.pod_manifest = true;  // no wall beside a Pod: credentials in copy mode (docs/KUBERNETES.md)
    LaunchPlan plan = build_plan(pod, current_seat_config(), current_user_facts(), current_session_facts());
    std::cout << kube_yaml(plan) << std::flush;
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), printable(e.what()).c_str());
    return e.exit_code();
  }
}

}  // namespace asbx
