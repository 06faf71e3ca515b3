#include <doctest/doctest.h>

#include "launcher/podman/podman_api.h"

using namespace asbx;

TEST_CASE("an image name is one path segment; a filter is one query value") {
  CHECK(url_escape("localhost/agent-sandbox:latest") == "localhost%2Fagent-sandbox%3Alatest");
  CHECK(url_escape("quay.io/x/y@sha256:ab") == "quay.io%2Fx%2Fy%40sha256%3Aab");
  CHECK(url_escape(R"({"label":["agent-sandbox.session=s1 x"]})") ==
        "%7B%22label%22%3A%5B%22agent-sandbox.session%3Ds1%20x%22%5D%7D");
  CHECK(url_escape("a&b?c#d%e+f") == "a%26b%3Fc%23d%25e%2Bf");
}
