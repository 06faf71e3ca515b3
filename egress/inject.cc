#include "egress/inject.h"
#include "base/util.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "credtable/lifetime.h"
#include "egress/decision.h"
#include "egress/policy.h"

namespace asbx {
namespace {

// "/exact" matches itself only; "/prefix/" anything below it.
bool path_matches(const std::string& rule, const std::string& path) {
  return rule.back() == '/' ? starts_with(path, rule) : path == rule;
}

bool has_doubtful_segment(const std::string& path) {
  std::string l = ascii_lower(path);
  for (const char* bad : {"/./", "/../", "%2e", "%2f", "%5c", "%00", "\\", "//"})
    if (l.find(bad) != std::string::npos) return true;
  return l.size() >= 2 && (l.compare(l.size() - 2, 2, "/.") == 0 || (l.size() >= 3 && l.compare(l.size() - 3, 3, "/..") == 0));
}

}  // namespace

const InjectHost* inject_rule(const EgressPlan& plan, const std::string& host) {
  std::string name = normal_host_name(host);
  if (name.empty()) return nullptr;
  for (const auto& r : plan.inject)
    if (r.host == name) return &r;
  return nullptr;
}

std::optional<std::string> check_inject_path(const InjectHost& rule, const std::string& method, const std::string& target) {
  if (target.empty() || target[0] != '/') return "the target is not a path (origin-form)";
  std::string path = target.substr(0, target.find('?'));
  if (path.find('#') != std::string::npos) return "a fragment in the target";
  if (has_doubtful_segment(path)) return "dot segments, encoded separators or doubled slashes in the path";
  if (rule.refresh) {
    if (method == "POST" && path == rule.token_path) return std::nullopt;
    return "only POST " + rule.token_path + " is served on this token host";
  }
  std::string l = ascii_lower(path);
  for (const auto& d : rule.deny)
    if (starts_with(l, ascii_lower(d))) return "the path is on the deny list (" + d + ")";
  for (const auto& a : rule.allow)
    if (path_matches(a, path)) return std::nullopt;
  return "the path is not on this host's allowlist";
}

void SecretBook::add(const std::string& placeholder, const std::string& real, bool wire) {
  std::lock_guard lock(mutex_);
  real_[placeholder] = real;
  if (wire) wire_.insert(placeholder);
  longest_ = std::max(longest_, placeholder.size());
}

std::optional<std::string> SecretBook::real_of(const std::string& placeholder) const {
  std::lock_guard lock(mutex_);
  auto it = real_.find(placeholder);
  if (it == real_.end() || !wire_.count(placeholder)) return std::nullopt;
  return it->second;
}

int SecretBook::count_in(std::string_view text) const {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const auto& [p, real] : real_)
    for (auto at = text.find(p); !p.empty() && at != std::string_view::npos; at = text.find(p, at + p.size())) ++n;
  return n;
}

std::vector<std::string> SecretBook::real_values() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [p, real] : real_)
    if (std::find(out.begin(), out.end(), real) == out.end()) out.push_back(real);
  return out;
}

std::size_t SecretBook::longest() const {
  std::lock_guard lock(mutex_);
  return longest_;
}

std::size_t SecretBook::size() const {
  std::lock_guard lock(mutex_);
  return real_.size();
}

void SecretBook::injected(const std::string& host) {
  std::lock_guard lock(mutex_);
  counts_.injected[host]++;
}

bool SecretBook::take_refresh(std::int64_t limit) {
  std::lock_guard lock(mutex_);
  if (counts_.refreshes_answered >= limit) return false;
  counts_.refreshes_answered++;
  return true;
}

void SecretBook::elsewhere(int n) {
  std::lock_guard lock(mutex_);
  counts_.placeholder_elsewhere += n;
}

SecretBook::Counts SecretBook::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

bool SecretBook::empty() const {
  std::lock_guard lock(mutex_);
  return real_.empty();
}

std::int64_t answered_expires_in(std::int64_t real_left_s, std::int64_t refresh_skew_s) {
  return std::max(real_left_s, std::max<std::int64_t>(refresh_skew_s, 0) + 3600);
}

TokenAnswer answer_token(const std::string& shape, const std::vector<SecretSwap>& originals, SecretBook& book,
                         const RandomBytes& random, std::int64_t now_unix, std::int64_t expires_in) {
  if (!book.take_refresh(kMaxRefreshAnswers))
    return {429, nlohmann::json{{"error", "too_many_refreshes"},
                                {"error_description", "agent-sandbox answers at most " + std::to_string(kMaxRefreshAnswers) +
                                                          " token refreshes a session"}}
                     .dump()};
  auto fresh = [&](const std::string& suffix) -> nlohmann::json {
    for (const auto& s : originals) {
      std::string f = ascii_lower(s.field);
      std::string key = f.substr(f.rfind('.') == std::string::npos ? 0 : f.rfind('.') + 1);
      std::string plain;
      for (char c : key) if (c != '_') plain += c;
      if (plain != suffix) continue;
      std::string p = restamp_exp(make_placeholder(s.real, random), now_unix + expires_in);
      book.add(p, s.real, on_the_wire(s.field));
      return p;
    }
    return nullptr;
  };
  nlohmann::json body;
  if (shape == "openai") {
    body = {{"access_token", fresh("accesstoken")}, {"id_token", fresh("idtoken")}, {"refresh_token", fresh("refreshtoken")}};
  } else {
    body = {{"access_token", fresh("accesstoken")}, {"refresh_token", fresh("refreshtoken")},
            {"expires_in", expires_in}, {"token_type", "Bearer"},
            {"scope", "user:inference user:profile user:sessions:claude_code"}};
  }
  return {200, body.dump()};
}

RequestRewriter::RequestRewriter(const InjectHost& rule, std::string authority, const SecretBook& book)
    : rule_(rule), authority_(std::move(authority)), book_(book) {}

RequestRewriter::Status RequestRewriter::refuse(int status, const char* reason, std::string detail) {
  state_ = State::stopped;
  status_code_ = status;
  reason_ = reason;
  detail_ = std::move(detail);
  return Status::refused;
}

void RequestRewriter::token_answered() {
  token_body_.clear();
  state_ = State::head;
}

void RequestRewriter::scan_body(std::string_view bytes) {
  std::size_t keep = book_.longest() > 0 ? book_.longest() - 1 : 0;
  std::string window = carry_ + std::string(bytes);
  int before = book_.count_in(carry_);
  elsewhere_ += book_.count_in(window) - before;
  carry_ = window.size() > keep ? window.substr(window.size() - keep) : window;
}

RequestRewriter::Status RequestRewriter::start_request(std::string& up) {
  RequestHead head = parse_request_head(pending_);
  if (head.status == RequestHead::Status::bad) return refuse(400, refusal::bad_request, head.why);
  if (head.method == "CONNECT") return refuse(400, refusal::bad_request, "CONNECT inside a tunnel");
  if (auto no = check_inject_head(head)) return refuse(no->status, no->reason, no->why);
  if (auto why = check_inject_path(rule_, head.method, head.target)) return refuse(403, refusal::inject_path_denied, *why);
  BodyFraming framing;
  if (auto no = request_framing(head, framing)) return refuse(no->status, no->refusal->c_str(), no->why);
  std::string rest = pending_.substr(head.length);
  pending_.clear();
  blank_lines_ = 0;
  carry_.clear();
  body_.emplace(framing);
  if (rule_.refresh) {
    state_ = State::token_body;
    pending_ = rest;
    return Status::more;
  }
  HeadRewrite rw = rewrite_head(head, authority_, book_);
  swapped_ += rw.swapped > 0 ? 1 : 0;  // requests whose placeholder was swapped
  elsewhere_ += rw.elsewhere;
  up += rw.head;
  state_ = State::body;
  pending_ = rest;
  return Status::more;
}

RequestRewriter::Status RequestRewriter::feed(std::string_view in, std::string& up, std::size_t& consumed) {
  consumed = 0;
  // pending_ holds bytes already consumed (a partial head, or what followed a head).
  while (true) {
    if (state_ == State::stopped) return Status::refused;
    if (state_ == State::head) {
      if (pending_.empty() && consumed == in.size()) return Status::more;
      std::size_t take = std::min(in.size() - consumed, kMaxRequestHead + 4 - std::min(pending_.size(), kMaxRequestHead + 4));
      pending_.append(in.substr(consumed, take));
      consumed += take;
      // RFC 9112 §2.2: empty lines before a request line are ignored (a few, not forever).
      while (pending_.size() >= 2 && pending_.compare(0, 2, "\r\n") == 0 && blank_lines_ < kMaxBlankLines)
        pending_.erase(0, 2), ++blank_lines_;
      if (pending_.empty() || pending_ == "\r") {
        if (consumed == in.size()) return Status::more;
        continue;
      }
      RequestHead probe = parse_request_head(pending_);
      if (probe.status == RequestHead::Status::incomplete) {
        if (consumed == in.size()) return Status::more;
        continue;
      }
      // Give back what lies after the head, so the body is taken from `in` in order.
      if (Status s = start_request(up); s != Status::more) return s;
      continue;
    }
    // body or token body: first what was pending, then `in`
    if (body_->status() == BodyFramer::Status::done) {
      body_.reset();
      if (state_ == State::token_body) return Status::token;  // the caller answers, then token_answered()
      state_ = State::head;
      continue;
    }
    std::string_view src;
    bool from_pending = !pending_.empty();
    if (from_pending) src = pending_;
    else if (consumed < in.size()) src = in.substr(consumed);
    else return Status::more;
    std::string out;
    std::size_t used = body_->feed(src, out);
    if (state_ == State::body) {
      scan_body(src.substr(0, used));
      up += out;
    } else {
      token_body_ += out;
      if (token_body_.size() > kMaxTokenBody) return refuse(413, refusal::bad_request, "a token request body over 64 KiB");
    }
    if (from_pending) pending_.erase(0, used);
    else consumed += used;
    if (body_->status() == BodyFramer::Status::bad) return refuse(400, refusal::bad_framing, body_->why());
    if (body_->status() == BodyFramer::Status::more && used == src.size() && !from_pending) return Status::more;
    if (used == 0 && body_->status() == BodyFramer::Status::more) return Status::more;
  }
}

}  // namespace asbx
