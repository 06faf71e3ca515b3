// The tripwire part of a plan as values: whether the session's own network namespace gets the
// launcher's catch-all device, which decoy files go into its HOME, and what a trip does. Deciding
// them is tripwire/'s (tripwire/canaries.h); the seat owner's choice lives in SeatConfig.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace asbx {

enum class TripwireMode { off, record, kill };

// The seat owner's `tripwire` and `tripwire_canaries` keys (only the seat config sets them).
struct TripwireSeat {
  TripwireMode mode = TripwireMode::record;
  std::optional<std::vector<std::string>> canaries;  // absent: the built-in list; [] = no decoys
  bool operator==(const TripwireSeat&) const = default;
};

struct TripwirePlan {
  TripwireMode mode = TripwireMode::off;
  bool network = false;                 // the catch-all device in the session's own namespace
  std::vector<std::string> canaries;    // decoys, relative to HOME
  std::vector<std::string> listed_dirs; // directories holding only decoys: listing one is a trip
  std::string ping_group_range;         // "GID GID": the agent's ICMP echo reaches the device; "" = unchanged
  std::vector<std::pair<std::string, std::string>> env;  // what keeps tools off the decoys they would read
  std::string source;                   // the seat config file that decided it (for messages)
  bool armed() const { return network || !canaries.empty(); }
  bool operator==(const TripwirePlan&) const = default;
};

const char* tripwire_mode_name(TripwireMode mode);

}  // namespace asbx
