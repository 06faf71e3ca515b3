// The supervisor's side of the attach socket, on a thread of its own so that nothing a terminal
// does (or does not do) can hold the session: the pty's output is always read (kept in the
// screen tail, queued to the attached client up to kMaxClientQueue, beyond which that client is
// resynchronised from the tail instead of queued without bound); input is read from the client
// only while the pty takes it. One client is attached at a time: a new `attach` takes the session
// over and the old one is told. `stop` asks for the session's end (SIGTERM to this process: the
// session's usual signal path) and waits for the exit frame. docs/LIFECYCLE.md.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/beneath.h"
#include "persist/screen.h"
#include "persist/wire.h"

namespace asbx {

constexpr std::size_t kMaxClientQueue = 1 << 20;
constexpr int kFinishMs = 2000;  // how long the last frames may take to reach slow clients

class AttachServer {
 public:
  AttachServer(UniqueFd listener, int master, unsigned owner_uid);
  ~AttachServer();
  AttachServer(const AttachServer&) = delete;
  AttachServer& operator=(const AttachServer&) = delete;

  void start();
  // The session ended: every attached client and waiting `stop` gets the exit frame (the status
  // record is already written), then the thread ends. Connections still queued are served first.
  void finish(int exit_code, const std::vector<std::string>& lines);

 private:
  struct Peer {
    UniqueFd fd;
    WireReader in;
    std::deque<std::string> out;  // frames; the front one sent from `sent`
    std::size_t sent = 0;
    std::size_t queued = 0;
  };
  void loop();
  void step();
  void accept_all();
  void welcome(UniqueFd fd);
  void hello(Peer peer, const Frame& frame);
  void take_over(Peer peer, int rows, int cols);
  void read_master();
  void write_master();
  void read_client();
  void from_client(const Frame& f);
  bool flush(Peer& p);
  void queue(Peer& p, std::string frame);
  void output(const char* data, std::size_t size);
  void request_stop();
  void last_frames();

  UniqueFd listener_;
  int master_;
  unsigned owner_;
  UniqueFd wake_read_, wake_write_;
  std::thread thread_;
  std::mutex mutex_;
  std::string exit_frame_;  // set by finish()
  std::atomic<bool> finishing_{false};

  ScreenTail screen_;
  std::optional<Peer> client_;
  std::vector<Peer> waiters_;  // `stop` connections waiting for the exit frame
  std::string to_master_;
  bool master_open_ = true;
  std::int64_t stop_again_at_ = -1;
};

}  // namespace asbx
