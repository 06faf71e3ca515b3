// The session's refresh answers are one budget shared by every intercepted connection
// (egress/inject.h, SecretBook::take_refresh): taken under one lock, never checked then counted.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "base/util.h"
#include "egress/inject.h"

using namespace asbx;

TEST_CASE("token answers: connections refreshing at once never get more than the limit between them") {
  for (int round = 0; round < 20; ++round) {
    SecretBook book;
    std::vector<SecretSwap> originals = {{"claudeAiOauth.accessToken", "sk-ant-oat01-AAAAAAAAAAAA", "sk-ant-oat01-REALACCESS00"},
                                         {"claudeAiOauth.refreshToken", "sk-ant-ort01-BBBBBBBBBBBB", "sk-ant-ort01-REALREFRESH0"}};
    std::atomic<int> ok{0}, limited{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < 20; ++i)
          (answer_token("anthropic", originals, book, asbx::random_bytes, 1000, 3600).status == 200 ? ok : limited)++;
      });
    for (auto& t : threads) t.join();
    REQUIRE(ok == kMaxRefreshAnswers);
    REQUIRE(limited == 8 * 20 - kMaxRefreshAnswers);
    REQUIRE(book.counts().refreshes_answered == kMaxRefreshAnswers);
    REQUIRE(book.size() == 2 * static_cast<std::size_t>(kMaxRefreshAnswers));
  }
}
