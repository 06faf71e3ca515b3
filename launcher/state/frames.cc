#include "launcher/state/frames.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fdio.h"
#include "state/rules.h"

namespace asbx {
namespace {

constexpr std::size_t kMaxLine = 64;
constexpr std::int64_t kMaxSize = 1LL << 50;

// Strict decimal: digits only, no sign, no leading zero (except "0"), at most 16 digits.
bool parse_decimal(const std::string& s, std::int64_t& out) {
  if (s.empty() || s.size() > 16 || (s.size() > 1 && s[0] == '0')) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

}  // namespace

FrameSink::FrameSink(int out_fd) : out_(out_fd) { ok_ = write_all(out_, kStateStreamMagic); }

std::string FrameSink::dir(const std::string& relative) {
  ok_ = ok_ && write_all(out_, "d " + std::to_string(relative.size()) + "\n" + relative);
  return ok_ ? "" : "the reader has gone";
}

std::string FrameSink::file(const std::string& relative, int fd, std::int64_t size) {
  ok_ = ok_ && write_all(out_, "f " + std::to_string(relative.size()) + " " + std::to_string(size) + "\n" + relative);
  if (!ok_) return "the reader has gone";
  std::string why = copy_exactly(fd, out_, size);
  if (!why.empty()) ok_ = false;  // the stream cannot be resynchronised after a short file
  return why;
}

bool FrameSink::finish() { return ok_ = ok_ && write_all(out_, "e\n"); }

FrameReader::FrameReader(StateTree& tree, const StateLimits& limits, StateReport& report)
    : tree_(tree), limits_(limits), report_(report) {}

bool FrameReader::malformed(const std::string& why) {
  failed_ = true;
  file_ = UniqueFd();
  report_.error = "the seat's state stream is malformed at byte " + std::to_string(offset_) + ": " + why;
  return false;
}

bool FrameReader::feed(const char* data, std::size_t size) {
  std::size_t at = 0;
  while (at < size && !failed_) {
    if (state_ == State::path) {
      std::size_t take = std::min(size - at, path_len_ - path_.size());
      path_.append(data + at, take);
      at += take, offset_ += static_cast<std::int64_t>(take);
      if (path_.size() == path_len_) path_done();
    } else if (state_ == State::data) {
      std::size_t take = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(size - at), left_));
      data_bytes(data + at, take);
      at += take, offset_ += static_cast<std::int64_t>(take);
      if (left_ == 0) data_done();
    } else if (state_ == State::done) {
      return malformed("bytes after the end frame");
    } else {
      ++offset_;
      if (!line_byte(data[at++])) return false;
    }
  }
  return !failed_;
}

bool FrameReader::line_byte(char c) {
  if (c != '\n') {
    if (line_.size() >= kMaxLine) return malformed("a header line longer than " + std::to_string(kMaxLine) + " bytes");
    line_.push_back(c);
    return true;
  }
  if (state_ == State::magic) {
    if (line_ + "\n" != kStateStreamMagic) return malformed("not an asbx-state 1 stream");
    line_.clear();
    state_ = State::header;
    return true;
  }
  bool ok = header_done();
  line_.clear();
  return ok;
}

bool FrameReader::header_done() {
  if (line_ == "e") {
    state_ = State::done;
    return true;
  }
  std::int64_t len = 0;
  size_ = 0;
  kind_ = line_.empty() ? 0 : line_[0];
  auto space2 = line_.find(' ', 2);
  bool ok = line_.size() > 2 && line_[1] == ' ';
  if (ok && kind_ == 'd') ok = parse_decimal(line_.substr(2), len);
  else if (ok && kind_ == 'f')
    ok = space2 != std::string::npos && parse_decimal(line_.substr(2, space2 - 2), len) &&
         parse_decimal(line_.substr(space2 + 1), size_) && size_ <= kMaxSize;
  else ok = false;
  if (!ok) return malformed("an unknown frame header");
  if (len < 1 || len > static_cast<std::int64_t>(kMaxStatePath)) return malformed("a path length out of range");
  path_len_ = static_cast<std::size_t>(len);
  path_.clear();
  state_ = State::path;
  return true;
}

void FrameReader::path_done() {
  state_ = State::header;
  bool safe = is_safe_relative(path_);
  if (kind_ == 'd') {
    std::string why = safe ? tree_.make_dir(path_) : "a name that could leave the state directory";
    if (!why.empty()) report_.skip(path_, why);
    return;
  }
  left_ = size_;
  state_ = State::data;
  file_error_ = safe ? cap_refusal(size_, report_.files, report_.bytes, limits_)
                     : "a name that could leave the state directory";
  if (file_error_.empty()) file_ = tree_.new_file(path_, file_error_);
  if (left_ == 0) data_done();
}

void FrameReader::data_bytes(const char* data, std::size_t size) {
  left_ -= static_cast<std::int64_t>(size);
  if (!file_ || write_all(file_.get(), data, size)) return;
  file_error_ = std::string("cannot write it: ") + std::strerror(errno);
  file_ = UniqueFd();
  tree_.remove_file(path_);
}

void FrameReader::data_done() {
  state_ = State::header;
  if (file_ && ::fchmod(file_.get(), kStateFileMode) != 0) file_error_ = std::string("cannot set its mode: ") + std::strerror(errno);
  bool kept = static_cast<bool>(file_) && file_error_.empty();
  if (file_ && !kept) tree_.remove_file(path_);
  file_ = UniqueFd();
  if (!kept) return report_.skip(path_, file_error_);
  report_.files += 1;
  report_.bytes += size_;
}

}  // namespace asbx
