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
  inet_type,       // socket(AF_INET/AF_INET6) of a type other than STREAM and DGRAM (low 4 bits of the type)
  inet_protocol,   // socket(AF_INET/AF_INET6, STREAM or DGRAM) of a protocol outside kInetProtocols
  socketpair_family,  // socketpair of a family other than AF_UNIX
  msg_oob,         // send/recv family calls with MSG_OOB in their flags (msg_flags_index)
  sockopt,         // setsockopt of a (level, optname) in sockopts_refused
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

// AF_INET and AF_INET6 are allowed by type and protocol (seccomp/table_socket.cc): the type's low
// 4 bits (SOCK_NONBLOCK and SOCK_CLOEXEC are high bits), then one of the protocols real work uses.
struct InetProtocols {
  int family;
  int type;                   // SOCK_STREAM or SOCK_DGRAM
  std::vector<std::uint64_t> protocols;  // 0 (the type's default) and the named ones, each below kProtocolBlock
};
const std::vector<InetProtocols>& inet_protocols_allowed();
bool inet_family(int family);  // AF_INET or AF_INET6
constexpr std::uint64_t kSocketTypeMask = 0xf;
constexpr int kProtocolBlock = 64;  // protocols at or above it are refused by one rule (MPTCP is 262)
// The values below `limit` not in `allowed`, as aligned blocks {value, mask}: `arg & mask == value`
// (a 64-bit mask: a value with high bits set matches none, so a refusal that needs it is explicit).
struct MaskedValue {
  std::uint64_t value;
  std::uint64_t mask;
};
std::vector<MaskedValue> blocks_outside(const std::vector<std::uint64_t>& allowed, std::uint64_t limit);

// setsockopt options refused (seccomp/table_socket.cc). The allow is their exact complement over
// the values an int can carry (level and optname below 2^32, aligned blocks): a value with high
// bits set, which the kernel would truncate, matches no allow and gets the default action.
struct SockoptRefused {
  std::uint64_t level;
  std::uint64_t optname;
  const char* name;
};
const std::vector<SockoptRefused>& sockopts_refused();
constexpr std::uint64_t kIntValues = std::uint64_t(1) << 32;

// The flags argument's index of a send/recv call (sendmsg/recvmsg: 2; sendto, recvfrom, sendmmsg,
// recvmmsg: 3). MSG_OOB is bit 0.
int msg_flags_index(const std::string& call);
constexpr std::uint64_t kMsgOob = 1;
constexpr int kAfUnix = 1;

}  // namespace asbx
