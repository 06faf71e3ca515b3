// The seccomp part of a plan: the profile this project renders from the seat's installed podman
// default (seccomp/profile.h), named by its digest. The launcher writes `text` to `path` before
// create; the create body names the path, the Pod manifest a Localhost profile of that digest.
// `digest` is the rules' without the listener, so it is the same for every session of a seat.
#pragma once
#include <string>

namespace asbx {

struct SeccompPlan {
  std::string base_path;    // the installed default it starts from, read at plan time
  std::string base_digest;  // sha256 of that file as read
  std::string text;         // the rendered profile (JSON)
  std::string digest;       // sha256 of `text`
  std::string path;         // <runtime_dir>/seccomp-<session>-<digest>.json (gone once podman has read it)
  std::string listener;     // <session_dir>/seccomp.sock: the recorder's socket ("" = the kernel answers, nothing recorded)
  bool sentry_log = false;  // gVisor: the sentry refuses, the recorder reads its log (seccomp/sentry_log.h)
  bool operator==(const SeccompPlan&) const = default;
};

}  // namespace asbx
