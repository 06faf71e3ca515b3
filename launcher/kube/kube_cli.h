// `agent-sandbox kube [session options] -- CMD`: the session's plan, printed as a Kubernetes
// manifest on stdout. Creates nothing: no container, no session dir, no status record.
#pragma once
#include <string>

#include "base/request.h"

namespace asbx {

int kube_main(const std::string& program, const Request& req);

}  // namespace asbx
