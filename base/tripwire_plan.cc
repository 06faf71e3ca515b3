#include "base/tripwire_plan.h"

namespace asbx {

const char* tripwire_mode_name(TripwireMode mode) {
  switch (mode) {
    case TripwireMode::off: return "off";
    case TripwireMode::record: return "record";
    case TripwireMode::kill: return "kill";
  }
  return "off";
}

}  // namespace asbx
