// One authenticated libssh connection to a seat: strict host-key check against the
// registry's key or known_hosts file (never auto-accept), public-key or ssh-agent auth
// only, connect timeout. libssh is used only in launcher/ssh_*.cc.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include "launcher/remote/registry.h"

struct ssh_session_struct;

namespace asbx {

struct SshOptions {
  long connect_timeout_s = 10;
  int keepalive_s = 15;  // an SSH_MSG_IGNORE this often keeps NATs open and surfaces a dead link
};

struct Captured {
  int exit_status = -1;
  std::string out;
};

class SshConnection {
 public:
  // Throws Error(host_key_rejected) for an unknown or changed key, Error(ssh_failed) otherwise.
  SshConnection(const SeatHost& host, const SshOptions& options);
  ~SshConnection();
  SshConnection(const SshConnection&) = delete;
  SshConnection& operator=(const SshConnection&) = delete;

  ssh_session_struct* raw() const { return session_; }
  const SeatHost& host() const { return host_; }
  const SshOptions& options() const { return options_; }
  // Runs a short command on its own channel; its stdout (at most 1 MiB), no stdin.
  Captured capture(const std::string& command);
  // Runs a command on its own channel and hands its stdout to `sink` as it arrives (no
  // buffering; the sink returns false to stop reading). The exit status, -1 when none.
  int stream(const std::string& command, const std::function<bool(const char*, std::size_t)>& sink);
  [[noreturn]] void fail(const std::string& what) const;

 private:
  void verify_host_key();
  void verify_against_key();
  void verify_against_known_hosts();
  void authenticate();

  SeatHost host_;
  SshOptions options_;
  ssh_session_struct* session_ = nullptr;
};

}  // namespace asbx
