// POSIX quoting (launcher/remote/quote.cc) as a round-trip property: the command line a seat's shell
// receives, "cmd " + shell_join(words), must read back as exactly cmd and the words, every
// one literal (fuzz/posix_words.h refuses anything the shell would expand). The input split
// at NUL bytes gives the words (an argv word cannot hold a NUL).
#include "fuzz/fuzz.h"
#include "fuzz/posix_words.h"
#include "launcher/remote/quote.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using asbx::fuzz::violated;
  std::vector<std::string> words = asbx::fuzz::parts(asbx::fuzz::text(data, size));
  if (size == 0) words.clear();
  auto back = asbx::fuzz::posix_words("sandbox-run " + asbx::shell_join(words));
  if (!back) violated("not a literal command line: " + asbx::shell_join(words));
  std::vector<std::string> expected = {"sandbox-run"};
  expected.insert(expected.end(), words.begin(), words.end());
  if (*back != expected) violated("round trip changed the words: " + asbx::shell_join(words));
  for (const auto& w : words) {
    auto one = asbx::fuzz::posix_words("x " + asbx::shell_quote(w));
    if (!one || one->size() != 2 || (*one)[1] != w) violated("shell_quote alone changed " + w);
  }
  return 0;
}
