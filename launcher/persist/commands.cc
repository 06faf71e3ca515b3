#include "launcher/persist/commands.h"

#include <cerrno>
#include <cstdio>

#include "base/error.h"
#include "base/util.h"
#include "launcher/lifecycle/local.h"
#include "launcher/persist/channel.h"
#include "launcher/persist/client.h"
#include "launcher/podman/gc.h"
#include "launcher/podman/podman_api.h"
#include "launcher/pool/pool_gc.h"

namespace asbx {
namespace {

constexpr int kStopWaitMs = 60 * 1000;  // the grace (10 s), the removal, the records

void check_id(const std::string& command, const std::string& id) {
  if (!is_plain_name(id, 64))
    throw Error(ErrorKind::usage, command + ": '" + id + "' is not a session id (1-64 letters, digits, '-', '_' or '.')");
}

// No socket: a session of that id may still run, started without --persist; say so when podman knows it.
void explain_missing(const SeatConfig& seat, const std::string& id) {
  bool plain = false;
  try {
    PodmanApi api(seat.socket);
    for (auto s : list_sessions(api)) {
      apply_pool_claim(s);  // a warm session's container keeps its member's session label; the claim names it
      plain = plain || (s.session == id && !s.persist);
    }
  } catch (const std::exception&) {
  }
  if (plain)
    throw Error(ErrorKind::attach_refused, "session '" + id + "' is not persistent (started without --persist): only "
                                           "the terminal that started it shows it");
}

UniqueFd reach(const SeatConfig& seat, const std::string& id) {
  std::string path = attach_socket_path(seat.runtime_dir, id);
  if (connect_errno(path) == ENOENT) explain_missing(seat, id);
  return connect_attach(path, id);
}

int failed(const std::string& program, const char* command, const Error& e) {
  std::fprintf(stderr, "%s: %s: %s\n", program.c_str(), command, printable(e.what()).c_str());
  return e.exit_code();
}

}  // namespace

std::string attach_socket_path(const std::string& runtime_dir, const std::string& id) {
  return runtime_dir + "/" + id + "/attach.sock";
}

int attach_main(const std::string& program, const std::string& id) {
  try {
    check_id("attach", id);
    SeatConfig seat = current_seat_config();
    return attach_terminal(reach(seat, id), program, id);
  } catch (const Error& e) {
    return failed(program, "attach", e);
  }
}

int stop_main(const std::string& program, const std::string& id) {
  try {
    check_id("stop", id);
    SeatConfig seat = current_seat_config();
    int code = stop_session(reach(seat, id), id, kStopWaitMs);
    std::printf("stopped %s (exit %d)\n", id.c_str(), code);
    return 0;
  } catch (const Error& e) {
    return failed(program, "stop", e);
  }
}

std::string attach_state(const std::string& runtime_dir, const std::string& id) {
  if (!is_plain_name(id, 64)) return "?";
  try {
    std::string state = query_attached(connect_attach(attach_socket_path(runtime_dir, id), id));
    return state.empty() ? "?" : state;
  } catch (const Error&) {
    return "?";
  }
}

}  // namespace asbx
