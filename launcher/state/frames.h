// The export stream of a seat's collected state, read by the caller over the same ssh
// connection (`sandbox-run state-export ID` on a second channel):
//
//   asbx-state 1\n
//   d LEN\nPATH              a directory (its parent came before)
//   f LEN SIZE\nPATH DATA    a regular file: PATH is LEN bytes, DATA is SIZE bytes
//   e\n                      the end; a stream without it was cut short
//
// LEN and SIZE are decimal. The reader applies the caller's own rules again (names,
// caps): a seat, or a sandbox-run on it, is not trusted to have applied them.
#pragma once
#include <cstdint>
#include <string>

#include "launcher/podman/container_root.h"
#include "base/state_report.h"
#include "launcher/state/tree.h"
#include "launcher/state/walk.h"

namespace asbx {

inline constexpr const char* kStateStreamMagic = "asbx-state 1\n";

// Writes frames to `out_fd` (the magic first, at construction).
class FrameSink : public StateSink {
 public:
  explicit FrameSink(int out_fd);
  std::string dir(const std::string& relative) override;
  std::string file(const std::string& relative, int fd, std::int64_t size) override;
  // The end frame; false when the reader has gone (some write failed).
  bool finish();

 private:
  int out_;
  bool ok_ = true;
};

class FrameReader {
 public:
  FrameReader(StateTree& tree, const StateLimits& limits, StateReport& report);
  // Feeds the next bytes; false once the stream is malformed (report.error says how).
  bool feed(const char* data, std::size_t size);
  // True when the end frame arrived and nothing followed it.
  bool complete() const { return state_ == State::done && !failed_; }

 private:
  enum class State { magic, header, path, data, done };
  bool line_byte(char c);
  bool header_done();
  void path_done();
  void data_bytes(const char* data, std::size_t size);
  void data_done();
  bool malformed(const std::string& why);

  StateTree& tree_;
  StateLimits limits_;
  StateReport& report_;
  State state_ = State::magic;
  bool failed_ = false;
  std::int64_t offset_ = 0;     // bytes consumed, for messages
  std::string line_;
  char kind_ = 0;
  std::size_t path_len_ = 0;
  std::int64_t size_ = 0;
  std::int64_t left_ = 0;
  std::string path_;
  UniqueFd file_;               // the file being written, when it is kept
  std::string file_error_;
};

}  // namespace asbx
