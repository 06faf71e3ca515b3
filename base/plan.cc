#include "base/plan.h"

#include <algorithm>

namespace asbx {

bool Mount::read_only() const { return std::find(options.begin(), options.end(), "ro") != options.end(); }

}  // namespace asbx
