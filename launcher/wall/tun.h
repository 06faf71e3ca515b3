// The tripwire's device: a TUN device in the container's network namespace, made the default
// route there (IPv4 and IPv6), created from the seat side before the agent starts. A short
// child enters the container's user namespace (rootless) and network namespace, creates and
// configures the device with rtnetlink (no external tool), passes its fd back over a socketpair
// (SCM_RIGHTS) and exits. Only the launcher holds the fd; the agent, without CAP_NET_ADMIN,
// cannot change the device or the routes.
#pragma once

namespace asbx {

inline constexpr const char* kTripwireDevice = "tripwire0";
// The namespace's own addresses on the device: the IPv4 dummy address (RFC 7600, for hosts
// with no IPv4 address of their own) and a ULA of this project's (fd61:7362:7877::/48, "asbx").
inline constexpr const char* kTripwireAddress4 = "192.0.0.8";
inline constexpr const char* kTripwireAddress6 = "fd61:7362:7877::1";

// The device's fd (non-blocking, close-on-exec). Throws Error(tripwire) naming the failed step.
int open_tripwire_device(long container_pid);

}  // namespace asbx
