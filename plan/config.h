// Reading the seat's configuration file (TOML) into a SeatConfig (base/seat_config.h). Every
// value has a known origin; unknown keys and wrong types are errors naming file:line.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/seat_config.h"
#include "state/rules.h"

namespace asbx {

// Embedded defaults for this user, overlaid by the file when it exists.
SeatConfig load_seat_config(const std::string& path, const UserFacts& user);
SeatConfig parse_seat_config(const std::string& text, const std::string& path, const UserFacts& user);

}  // namespace asbx
