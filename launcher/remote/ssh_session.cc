#include "launcher/remote/ssh_session.h"

#include <libssh/libssh.h>
#include <memory>
#include <sstream>

#include "base/error.h"

namespace asbx {
namespace {

using KeyPtr = std::unique_ptr<ssh_key_struct, void (*)(ssh_key)>;
KeyPtr key_ptr(ssh_key k) { return KeyPtr(k, ssh_key_free); }

std::string fingerprint(ssh_key key) {
  unsigned char* hash = nullptr;
  size_t len = 0;
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &len) != 0) return "?";
  char* text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, len);
  std::string out = text ? text : "?";
  ssh_string_free_char(text);
  ssh_clean_pubkey_hash(&hash);
  return out;
}

std::string seat_label(const SeatHost& h) { return h.name + " (" + h.address + ":" + std::to_string(h.port) + ")"; }

}  // namespace

SshConnection::SshConnection(const SeatHost& host, const SshOptions& options) : host_(host), options_(options) {
  session_ = ssh_new();
  if (!session_) throw Error(ErrorKind::internal, "ssh_new failed");
  int port = host_.port;
  bool no = false;
  ssh_options_set(session_, SSH_OPTIONS_PROCESS_CONFIG, &no);  // ~/.ssh/config plays no part
  ssh_options_set(session_, SSH_OPTIONS_HOST, host_.address.c_str());
  ssh_options_set(session_, SSH_OPTIONS_PORT, &port);
  ssh_options_set(session_, SSH_OPTIONS_USER, host_.user.c_str());
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &options_.connect_timeout_s);
  ssh_options_set(session_, SSH_OPTIONS_KNOWNHOSTS, host_.known_hosts.empty() ? "/dev/null" : host_.known_hosts.c_str());
  ssh_options_set(session_, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
  if (!host_.host_key.empty())
    ssh_options_set(session_, SSH_OPTIONS_HOSTKEYS, host_.host_key.substr(0, host_.host_key.find(' ')).c_str());
  if (ssh_connect(session_) != SSH_OK) fail("cannot connect");
  verify_host_key();
  authenticate();
}

SshConnection::~SshConnection() {
  if (ssh_is_connected(session_)) ssh_disconnect(session_);
  ssh_free(session_);
}

void SshConnection::fail(const std::string& what) const {
  throw Error(ErrorKind::ssh_failed, seat_label(host_) + ": " + what + ": " + ssh_get_error(session_));
}

void SshConnection::verify_host_key() {
  if (!host_.host_key.empty())
    verify_against_key();
  else
    verify_against_known_hosts();
}

void SshConnection::verify_against_key() {
  std::istringstream words(host_.host_key);
  std::string type, b64;
  words >> type >> b64;
  ssh_key expected_raw = nullptr;
  if (ssh_pki_import_pubkey_base64(b64.c_str(), ssh_key_type_from_name(type.c_str()), &expected_raw) != SSH_OK)
    throw Error(ErrorKind::config, "registry: host_key of '" + host_.name + "' is not a valid public key");
  KeyPtr expected = key_ptr(expected_raw);
  ssh_key offered_raw = nullptr;
  if (ssh_get_server_publickey(session_, &offered_raw) != SSH_OK) fail("no host key offered");
  KeyPtr offered = key_ptr(offered_raw);
  if (ssh_key_cmp(offered.get(), expected.get(), SSH_KEY_CMP_PUBLIC) != 0)
    throw Error(ErrorKind::host_key_rejected, seat_label(host_) + ": host key " + fingerprint(offered.get()) +
                                                  " does not match the registry's " + fingerprint(expected.get()));
}

void SshConnection::verify_against_known_hosts() {
  switch (ssh_session_is_known_server(session_)) {
    case SSH_KNOWN_HOSTS_OK:
      return;
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
      throw Error(ErrorKind::host_key_rejected, seat_label(host_) + ": host key changed (not the one in " +
                                                    host_.known_hosts + ")");
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      throw Error(ErrorKind::host_key_rejected, seat_label(host_) + ": host key unknown (not in " +
                                                    host_.known_hosts + "); never accepted unseen");
    default:
      fail("cannot check the host key against " + host_.known_hosts);
  }
}

void SshConnection::authenticate() {
  int rc = SSH_AUTH_DENIED;
  if (!host_.identity_file.empty()) {
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(host_.identity_file.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK)
      throw Error(ErrorKind::ssh_failed, seat_label(host_) + ": cannot read identity file " + host_.identity_file);
    rc = ssh_userauth_publickey(session_, nullptr, key);
    ssh_key_free(key);
  } else {
    rc = ssh_userauth_agent(session_, nullptr);
  }
  if (rc != SSH_AUTH_SUCCESS) fail("public-key authentication as '" + host_.user + "' failed");
}

int SshConnection::stream(const std::string& command, const std::function<bool(const char*, std::size_t)>& sink) {
  ssh_channel ch = ssh_channel_new(session_);
  if (!ch || ssh_channel_open_session(ch) != SSH_OK || ssh_channel_request_exec(ch, command.c_str()) != SSH_OK) {
    if (ch) ssh_channel_free(ch);
    fail("cannot open a channel");
  }
  char buf[32768];
  int n;
  bool reading = true;
  while (reading && (n = ssh_channel_read(ch, buf, sizeof buf, 0)) > 0) reading = sink(buf, static_cast<std::size_t>(n));
  int status = reading && n == 0 ? ssh_channel_get_exit_status(ch) : -1;
  ssh_channel_close(ch);
  ssh_channel_free(ch);
  return status;
}

Captured SshConnection::capture(const std::string& command) {
  ssh_channel ch = ssh_channel_new(session_);
  Captured got;
  if (!ch || ssh_channel_open_session(ch) != SSH_OK || ssh_channel_request_exec(ch, command.c_str()) != SSH_OK) {
    if (ch) ssh_channel_free(ch);
    fail("cannot open a channel");
  }
  // ssh_channel_read also returns 0 when the session timeout (the connect timeout) passes with no
  // data, as at EOF: a command slower than that lost its output. Read until the channel's EOF,
  // giving up after a dozen silent timeouts; stderr is drained (not captured) so EOF can be seen.
  char buf[16384];
  int n = 0;
  for (int idle = 0; idle < 12 && !ssh_channel_is_eof(ch);) {
    n = ssh_channel_read(ch, buf, sizeof buf, 0);
    if (n < 0) break;
    char skip[4096];
    while (ssh_channel_read_nonblocking(ch, skip, sizeof skip, 1) > 0) {
    }
    idle = n == 0 ? idle + 1 : 0;
    if (n > 0 && got.out.size() < (1u << 20)) got.out.append(buf, static_cast<std::size_t>(n));
  }
  ssh_channel_send_eof(ch);
  got.exit_status = n < 0 ? -1 : ssh_channel_get_exit_status(ch);
  ssh_channel_close(ch);
  ssh_channel_free(ch);
  return got;
}

}  // namespace asbx
