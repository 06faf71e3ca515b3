#include "base/result.h"

namespace asbx {

void record_error(SessionResult& result, const Error& error) {
  result.outcome = "launcher_error";
  result.error_kind = error.kind();
  result.exit_code = error.exit_code();
  result.message = error.what();
}

}  // namespace asbx
