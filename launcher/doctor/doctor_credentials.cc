#include "launcher/doctor/doctor_credentials.h"

#include <algorithm>
#include <cerrno>
#include <sys/stat.h>

#include "credtable/credential.h"
#include "credtable/credtable.h"
#include "credtable/lifetime.h"
#include "base/error.h"
#include "launcher/lifecycle/home.h"

namespace asbx {
namespace {

std::string describe(const CredentialLifetime& l, std::int64_t now) {
  std::string who = l.auth_kind + (l.account.empty() ? "" : " (account " + l.account + ")");
  if (!l.refresh_at_unix) return who + ", no expiry";
  if (!l.expires_unix) return who + ", expiry unreadable: due now";
  return who + ", refresh due in " + format_duration_s(*l.refresh_at_unix - now) + " (expires in " +
         format_duration_s(*l.expires_unix - now) + ")";
}

DoctorCheck check_row(const CredRow& row, const SeatConfig& seat, const UserFacts& user, std::int64_t now) {
  std::string name = "cred:" + row.name;
  std::string path = expand_template(row.source, user, "");
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return {name, true, "none at " + path, ""};
  std::string remedy = row.lifetime.refresh_command.empty() ? "log in with the " + row.name + " CLI on this seat"
                                                            : row.lifetime.refresh_command;
  try {
    StagedCredential cred{row.name, path, ""};
    std::string bytes = read_credential(cred);
    CredentialLifetime l = read_lifetime(row.lifetime, bytes);
    std::fill(bytes.begin(), bytes.end(), '\0');
    LifetimePolicy p{now, seat.credential_horizon_ms / 1000, "credential_horizon", seat.credential_margin_ms / 1000,
                     false};
    bool due = !check_lifetime(row.name, row.lifetime, l, p).empty();
    std::string detail = describe(l, now) + " at " + path;
    if (due && seat.credential_expiring_warn) return {name, true, detail + " (credential_expiring = warn)", ""};
    return {name, !due, detail, due ? remedy : ""};
  } catch (const Error& e) {
    return {name, false, e.what(), remedy};
  }
}

}  // namespace

void check_credentials(const SeatConfig& seat, const UserFacts& user, std::int64_t now, std::vector<DoctorCheck>& out) {
  std::string path = credtable_path(seat);
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
    out.push_back({"credtable", true, "none at " + path + ": --runtime cannot be used on this seat", ""});
    return;
  }
  try {
    CredTable table = load_credtable(path);
    for (const auto& row : table.rows) out.push_back(check_row(row, seat, user, now));
  } catch (const Error& e) {
    out.push_back({"credtable", false, e.what(), "fix the file at the line named"});
  }
}

}  // namespace asbx
