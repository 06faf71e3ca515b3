#include "launcher/podman/podman_api.h"

#include <unistd.h>

#include <httplib.h>
#include <sys/socket.h>

#include "base/error.h"

namespace asbx {

namespace {
const std::string kPrefix = "/v4.0.0/libpod";
}

std::string api_message(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"];
  std::string trimmed = body;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == '\r')) trimmed.pop_back();
  return trimmed;
}

// cpp-httplib's query-value encoder also fits a path segment: everything but letters,
// digits and -_.!~*'() is percent-encoded, so an image name's '/' and ':' stay in their segment.
std::string url_escape(const std::string& text) { return httplib::detail::encode_query_param(text); }

PodmanApi::PodmanApi(std::string socket) : socket_(std::move(socket)) {
  client_ = std::make_unique<httplib::Client>(socket_);
  client_->set_address_family(AF_UNIX);
  client_->set_default_headers({{"Host", "d"}});  // podman rejects the socket path as a Host
  client_->set_connection_timeout(5, 0);
  client_->set_read_timeout(24 * 3600, 0);  // /wait blocks for the whole session
  client_->set_write_timeout(30, 0);
  client_->set_keep_alive(true);  // one connection for every call of a session: no reconnect per call
}

PodmanApi::~PodmanApi() = default;

void PodmanApi::stop() { client_->stop(); }

PodmanApi::Reply PodmanApi::call(const std::string& method, const std::string& path, const std::string& body) {
  httplib::Result r = method == "GET"      ? client_->Get((kPrefix + path).c_str())
                      : method == "DELETE" ? client_->Delete((kPrefix + path).c_str())
                                           : client_->Post((kPrefix + path).c_str(), body, "application/json");
  if (!r) {
    std::string why = r.error() == httplib::Error::Connection ? "cannot connect (is the service running?)"
                                                              : httplib::to_string(r.error());
    throw Error(ErrorKind::podman_unreachable, "podman API at " + socket_ + " did not answer: " + why);
  }
  return {r->status, r->body};
}

void PodmanApi::ping() {
  Reply r = call("GET", "/_ping");
  if (r.status != 200)
    throw Error(ErrorKind::podman_unreachable, "podman API at " + socket_ + " answered " + std::to_string(r.status) +
                                                   " to /_ping: " + api_message(r.body));
}

nlohmann::json PodmanApi::info() {
  Reply r = call("GET", "/info");
  if (r.status != 200)
    throw Error(ErrorKind::podman_unreachable, "podman API at " + socket_ + " answered " + std::to_string(r.status) +
                                                   " to /info: " + api_message(r.body));
  return nlohmann::json::parse(r.body, nullptr, false);
}

bool PodmanApi::image_exists(const std::string& image) {
  Reply r = call("GET", "/images/" + url_escape(image) + "/exists");
  if (r.status == 204) return true;
  if (r.status == 404) return false;
  throw Error(ErrorKind::podman_unreachable, "podman API: image lookup answered " + std::to_string(r.status) + ": " +
                                                 api_message(r.body));
}

nlohmann::json PodmanApi::image_inspect(const std::string& image) {
  Reply r = call("GET", "/images/" + url_escape(image) + "/json");
  if (r.status == 404) throw Error(ErrorKind::image_missing, "image '" + image + "' is not present on the seat");
  if (r.status != 200)
    throw Error(ErrorKind::podman_unreachable, "podman API: image inspect answered " + std::to_string(r.status) + ": " +
                                                   api_message(r.body));
  return nlohmann::json::parse(r.body, nullptr, false);
}

Created PodmanApi::create(const nlohmann::json& body) {
  Reply r = call("POST", "/containers/create", body.dump());
  if (r.status != 201)
    throw Error(ErrorKind::create_failed, "podman refused to create the container (" + std::to_string(r.status) +
                                              "): " + api_message(r.body));
  auto j = nlohmann::json::parse(r.body);
  Created c{j.at("Id").get<std::string>(), {}};
  if (j.contains("Warnings") && j["Warnings"].is_array())
    for (const auto& w : j["Warnings"]) c.warnings.push_back(w.get<std::string>());
  return c;
}

void PodmanApi::init(const std::string& id) {
  Reply r = call("POST", "/containers/" + id + "/init");
  if (r.status != 204 && r.status != 304)
    throw Error(ErrorKind::start_failed, "podman could not initialise the container (" + std::to_string(r.status) +
                                             "): " + api_message(r.body));
}

void PodmanApi::rename(const std::string& id, const std::string& name) {
  Reply r = call("POST", "/containers/" + id + "/rename?name=" + url_escape(name));
  if (r.status != 204 && r.status != 200)
    throw Error(ErrorKind::start_failed, "podman could not rename the container to " + name + " (" +
                                             std::to_string(r.status) + "): " + api_message(r.body));
}

void PodmanApi::start(const std::string& id) {
  Reply r = call("POST", "/containers/" + id + "/start");
  if (r.status != 204 && r.status != 304)
    throw Error(ErrorKind::start_failed, "podman could not start the container (" + std::to_string(r.status) +
                                             "): " + api_message(r.body));
}

int PodmanApi::wait(const std::string& id) {
  // Called once the attach stream has ended, i.e. the container has stopped: podman's
  // default poll interval (250 ms) would be most of a short session's overhead.
  Reply r = call("POST", "/containers/" + id + "/wait?condition=stopped&condition=exited&interval=10ms");
  if (r.status != 200)
    throw Error(ErrorKind::internal, "podman wait answered " + std::to_string(r.status) + ": " + api_message(r.body));
  return std::stoi(r.body);
}

nlohmann::json PodmanApi::inspect(const std::string& id) {
  Reply r = call("GET", "/containers/" + id + "/json");
  if (r.status != 200) return nullptr;
  return nlohmann::json::parse(r.body, nullptr, false);
}

void PodmanApi::kill(const std::string& id, int signal) {
  call("POST", "/containers/" + id + "/kill?signal=" + std::to_string(signal));
}

void PodmanApi::update(const std::string& id, const nlohmann::json& resources) {
  Reply r = call("POST", "/containers/" + id + "/update", resources.dump());
  if (r.status != 201 && r.status != 200 && r.status != 204)
    throw Error(ErrorKind::limits_unenforced, "podman could not apply the session's limits to the warm member (" +
                                                  std::to_string(r.status) + "): " + api_message(r.body) + "; nothing was started");
}

void PodmanApi::resize(const std::string& id, int rows, int cols) {
  call("POST", "/containers/" + id + "/resize?h=" + std::to_string(rows) + "&w=" + std::to_string(cols) +
                   "&running=true");
}

bool PodmanApi::remove(const std::string& id, bool* was_there) {
  try {
    Reply r = call("DELETE", "/containers/" + id + "?force=true&volumes=true");
    if (was_there) *was_there = r.status != 404;
    return r.status == 200 || r.status == 204 || r.status == 404;
  } catch (const Error&) {
    return false;
  }
}

bool PodmanApi::remove_retrying(const std::string& id, bool* was_there) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    if (attempt) ::usleep(300 * 1000);
    bool there = true;
    if (!remove(id, &there)) continue;
    // A 500 can come after the container went: "no such container" on a retry is this removal's own.
    if (was_there) *was_there = attempt > 0 || there;
    return true;
  }
  return false;
}

nlohmann::json PodmanApi::list_by_label(const std::string& label) {
  nlohmann::json filters = {{"label", {label}}};
  Reply r = call("GET", "/containers/json?all=true&filters=" + url_escape(filters.dump()));
  if (r.status != 200)
    throw Error(ErrorKind::podman_unreachable, "podman list answered " + std::to_string(r.status) + ": " +
                                                   api_message(r.body));
  return nlohmann::json::parse(r.body, nullptr, false);
}

}  // namespace asbx
