#include "launcher/lifecycle/credential_record.h"

#include "launcher/lifecycle/home.h"

namespace asbx {
namespace {

using nlohmann::json;

json seconds_until(const std::optional<std::int64_t>& at, std::int64_t now) {
  return at ? json(*at - now) : json(nullptr);
}

bool refreshed(const SessionResult& r, std::size_t i) {
  return i < r.credentials_refreshed.size() && r.credentials_refreshed[i];
}

}  // namespace

json credentials_json(const LaunchPlan& plan, const SessionResult& r) {
  json list = json::array();
  for (std::size_t i = 0; i < plan.credentials.size(); ++i) {
    const StagedCredential& c = plan.credentials[i];
    const CredentialLifetime& l = c.lifetime;
    list.push_back({{"runtime", c.runtime},
                    {"file", c.source},
                    {"copy", relative_to_home(c.copy_to)},
                    {"auth_kind", l.auth_kind},
                    {"account", l.account.empty() ? json(nullptr) : json(l.account)},
                    {"expires_unix", l.expires_unix ? json(*l.expires_unix) : json(nullptr)},
                    {"seconds_to_expiry", seconds_until(l.expires_unix, r.started_unix)},
                    {"seconds_to_refresh", seconds_until(l.refresh_at_unix, r.started_unix)},
                    {"refresh_due", l.refresh_due},
                    {"refreshed_in_container", refreshed(r, i)},
                    {"refresh_expected", refreshed(r, i) ? json(l.refresh_due) : json(nullptr)},
                    {"mode", c.mode},
                    {"injected", c.mode == "inject" ? json(r.injected) : json::object()},
                    {"refreshes_answered", c.mode == "inject" ? r.refreshes_answered : 0},
                    {"placeholder_elsewhere", c.mode == "inject" ? r.placeholder_elsewhere : 0}});
  }
  return list;
}

json exposed_json(const SessionResult& r) {
  if (!r.exposure_scanned) return nullptr;
  json out = json::array();
  for (const auto& where : r.credential_exposed) out.push_back({{"where", where}});
  return out;
}

json refresh_expected_json(const LaunchPlan& plan, const SessionResult& r) {
  json out = nullptr;
  for (std::size_t i = 0; i < plan.credentials.size(); ++i)
    if (refreshed(r, i)) out = (out.is_null() || out.get<bool>()) && plan.credentials[i].lifetime.refresh_due;
  return out;
}

}  // namespace asbx
