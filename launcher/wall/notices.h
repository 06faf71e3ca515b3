// The launcher's own lines on stderr from threads that must never block on it (the tripwire's
// packet thread): pushed without blocking, written by a thread of their own. emit_notice is the
// one function such lines go through, so the route to stderr can change in one place.
#pragma once
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace asbx {

// "PROGRAM: line\n" on stderr (may block: only the notice thread calls it).
void emit_notice(const std::string& line);

class NoticeQueue {
 public:
  NoticeQueue();
  // Waits up to 1 s for queued lines to go out; a stderr nobody reads keeps the rest.
  ~NoticeQueue();
  NoticeQueue(const NoticeQueue&) = delete;
  NoticeQueue& operator=(const NoticeQueue&) = delete;
  void push(std::string line);  // never blocks; past kMaxQueued waiting lines, a line is dropped

  static constexpr std::size_t kMaxQueued = 16;

 private:
  struct Shared {
    std::mutex mutex;
    std::condition_variable ready, drained;
    std::deque<std::string> lines;
    bool writing = false, closing = false;
  };
  static void write_loop(std::shared_ptr<Shared> s);
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::thread writer_;
};

}  // namespace asbx
