// Inject mode (docs/CREDENTIALS.md): the file the agent gets has the shape of the real one, its
// secrets replaced by placeholders; the pairs placeholder → real value stay in the launcher's
// memory (the wall puts the real one on the wire). Pure: the randomness comes in as a function.
//   JWT (three base64url parts, a JSON header): header and claims kept, the signature replaced
//        by random base64url of the same length: the CLI still reads its account and expiry.
//   opaque (sk-ant-oat01-…, sk-…, rt_…): the prefix up to its last '-' or '_' (within the first
//        16 characters) kept, the rest random letters and digits of the same length.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace asbx {

// n random bytes (getrandom on the seat; a fixed sequence in tests).
using RandomBytes = std::function<std::string(std::size_t n)>;

struct SecretSwap {
  std::string field;        // the JSON path it was found at ("tokens.access_token")
  std::string placeholder;  // what the agent holds
  std::string real;         // what the wall puts on the wire (launcher memory only)
};

struct PlaceholderFile {
  bool recognised = false;  // JSON object, every present secret a non-empty string, at least one
  std::string why;          // when not recognised: what did not match (never a value)
  std::string text;         // the file the agent gets (recognised only)
  std::vector<SecretSwap> swaps;
};

// A placeholder for one secret value: a JWT keeps header.claims, anything else its prefix;
// always the same length as the real value, never equal to it.
std::string make_placeholder(const std::string& real, const RandomBytes& random);
// The row's secret paths ("a.b", JSON member names) in the file's bytes, each replaced.
PlaceholderFile make_placeholder_file(const std::vector<std::string>& secret_paths, const std::string& bytes,
                                      const RandomBytes& random);
// True when the text has three '.'-separated base64url parts whose first decodes to a JSON object.
bool looks_like_jwt(const std::string& text);
// A JWT placeholder whose `exp` claim says `exp_unix` instead (header, the other claims and the
// signature kept byte for byte; only the number changes). Anything else is returned as it is.
// The wall's answer to a refresh (egress/inject.h answer_token) tells the CLI when to come again.
std::string restamp_exp(const std::string& jwt, std::int64_t exp_unix);
// bytes → base64url without padding.
std::string base64url_encode(const std::string& bytes);
// What the end-of-session scan looks for besides a real value itself (docs/CREDENTIALS.md "What
// the scan finds"): the value reversed; in hex, lower and upper case; in base64 and base64url at
// each of the three offsets it can start at inside a longer encoded text (the characters that
// depend on the value's bytes only). Not: gzip or any compression, encryption, base32, a value
// split in pieces or interleaved, line-wrapped base64 (MIME), any encoding of its transformation.
std::vector<std::string> exposure_forms(const std::string& real);

}  // namespace asbx
