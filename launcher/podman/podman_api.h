// The libpod REST API over the seat's unix socket (cpp-httplib). Every call maps a
// failure to an Error kind; nothing here decides policy.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace httplib { class Client; }

namespace asbx {

struct Created {
  std::string id;
  std::vector<std::string> warnings;
};

class PodmanApi {
 public:
  explicit PodmanApi(std::string socket);
  ~PodmanApi();
  const std::string& socket() const { return socket_; }

  void ping();                                  // throws podman_unreachable (cheap: /_ping)
  // From another thread: the call in flight ends at once, failed (its connection shut down).
  void stop();
  nlohmann::json info();                        // slow (host and storage stats): doctor only
  bool image_exists(const std::string& image);
  nlohmann::json image_inspect(const std::string& image);  // throws image_missing (404), podman_unreachable
  Created create(const nlohmann::json& body);   // throws create_failed
  void init(const std::string& id);             // throws start_failed
  void start(const std::string& id);            // throws start_failed
  void rename(const std::string& id, const std::string& name);  // throws start_failed (a warm member at claim)
  int wait(const std::string& id);              // blocks until the container stops
  nlohmann::json inspect(const std::string& id);
  void kill(const std::string& id, int signal);  // best effort
  // The resources block of a create body applied to the container's cgroup (podman 4.3.1 runs
  // `runc update`; inspect keeps the figures of create). Throws Error(limits_unenforced).
  void update(const std::string& id, const nlohmann::json& resources);
  void resize(const std::string& id, int rows, int cols);
  bool remove(const std::string& id, bool* was_there = nullptr);  // force + volumes; false when it failed
  // remove(), tried up to 4 times 300 ms apart: a forced removal of a running container races podman's
  // own cleanup process (podman 4.3: 500 "unlinkat …/userdata/shm: device or resource busy"; gc).
  // `was_there`: a retry that finds no container counts as there (the failed try had removed it).
  bool remove_retrying(const std::string& id, bool* was_there = nullptr);
                                                                  // (*was_there: false on 404, gone already)
  // Containers carrying `label` (key or key=value), running or not.
  nlohmann::json list_by_label(const std::string& label);

 private:
  struct Reply { int status; std::string body; };
  Reply call(const std::string& method, const std::string& path, const std::string& body = "");
  std::string socket_;
  std::unique_ptr<httplib::Client> client_;
};

// The API's error message from a JSON error body, or the raw body.
std::string api_message(const std::string& body);
// Percent-encoding of one path segment (localhost/image:tag) or one query value.
std::string url_escape(const std::string& text);

}  // namespace asbx
