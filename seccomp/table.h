// The seccomp profile this project owns (docs/THREATS.md, "The kernel"): one row per refused call
// or family, with why, what it answers, and which anchor refuses it too. seccomp/profile.h renders
// the rows onto the seat's installed podman default; nothing that default refuses becomes allowed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace asbx {

// How a row's calls are matched.
enum class SeccompMatch {
  always,          // every call of these names
  clone_new_ns,    // clone with any CLONE_NEW* flag in its first argument (the rest is allowed)
  socket_family,   // socket outside the allowed families (kSocketFamiliesAllowed; netlink: route only)
  personality,     // personality other than PER_LINUX and the query (0xffffffff)
};

struct SeccompRow {
  std::string family;               // "namespaces", "mount API", ...
  std::vector<std::string> calls;   // syscall names as libseccomp spells them
  SeccompMatch match = SeccompMatch::always;
  int errno_value = 1;              // what the caller gets (EPERM unless said)
  bool recorded = true;             // a refusal is signal (false: libc probes it on every thread start)
  std::string reason;
  std::string anchors;              // "Docker, Flatpak, Chrome": who refuses it too ("" = none of them)
  // Rendered for a gVisor session too? (false: the sentry's seccomp answers it unlike the kernel,
  // and what the call reaches is the sentry's kernel, not the seat's: docs/ISOLATION.md)
  bool under_gvisor = true;
};

// Does `row` go into the profile of a session behind `wall` ("runc" or "gvisor")?
bool seccomp_row_applies(const SeccompRow& row, const std::string& wall);

const std::vector<SeccompRow>& seccomp_table();

// CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
constexpr std::uint64_t kCloneNewMask = 0x7E020000;
// The flags of kCloneNewMask one by one (a refusal rule per flag: seccomp compares masked values).
std::vector<std::uint64_t> clone_new_flags();

struct SocketFamily {
  int number;
  const char* name;
};
// What real work opens (measured, docs/DECISIONS.md): AF_UNIX, AF_INET, AF_INET6, and AF_NETLINK
// with NETLINK_ROUTE only (getaddrinfo's AI_ADDRCONFIG, getifaddrs).
const std::vector<SocketFamily>& socket_families_allowed();
constexpr int kAfNetlink = 16;
constexpr int kNetlinkRoute = 0;
constexpr int kAfMax = 46;  // families at or above it do not exist (yet): refused too
std::string socket_family_name(std::uint64_t family);  // "AF_ALG", or "AF_<n>"

}  // namespace asbx
