#include "launcher/wall/notices.h"

#include <cerrno>
#include <chrono>
#include <cstdio>

namespace asbx {

void emit_notice(const std::string& line) {
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, line.c_str());
  std::fflush(stderr);
}

NoticeQueue::NoticeQueue() : writer_(write_loop, shared_) {}

NoticeQueue::~NoticeQueue() {
  std::unique_lock<std::mutex> lock(shared_->mutex);
  shared_->closing = true;
  shared_->ready.notify_all();
  bool done = shared_->drained.wait_for(lock, std::chrono::seconds(1),
                                        [&] { return shared_->lines.empty() && !shared_->writing; });
  lock.unlock();
  // The writer owns its share of the state: stuck in a write, it may outlive this object.
  if (done) writer_.join();
  else writer_.detach();
}

void NoticeQueue::push(std::string line) {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  if (shared_->lines.size() >= kMaxQueued) return;
  shared_->lines.push_back(std::move(line));
  shared_->ready.notify_one();
}

void NoticeQueue::write_loop(std::shared_ptr<Shared> s) {
  std::unique_lock<std::mutex> lock(s->mutex);
  for (;;) {
    s->ready.wait(lock, [&] { return !s->lines.empty() || s->closing; });
    if (s->lines.empty()) break;
    std::string line = std::move(s->lines.front());
    s->lines.pop_front();
    s->writing = true;
    lock.unlock();
    emit_notice(line);
    lock.lock();
    s->writing = false;
    s->drained.notify_all();
  }
  s->drained.notify_all();
}

}  // namespace asbx
