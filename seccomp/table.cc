#include "seccomp/table.h"

#include <cerrno>

namespace asbx {

bool seccomp_row_applies(const SeccompRow& row, const std::string& wall) { return wall != "gvisor" || row.under_gvisor; }

const std::vector<SeccompRow>& seccomp_table() {
  static const std::vector<SeccompRow> rows = {
      {"namespaces", {"unshare", "setns"}, SeccompMatch::always, EPERM, true,
       "a nested user namespace hands the agent every capability over new namespaces: nf_tables, overlayfs, "
       "packet sockets and the mount API are then reachable (CVE-2022-32250, CVE-2023-32233, CVE-2024-1086, Dirty Frag)",
       "Docker, Flatpak, Chrome"},
      {"namespaces", {"clone"}, SeccompMatch::clone_new_ns, EPERM, true,
       "clone with a CLONE_NEW* flag is unshare by another name; plain fork and threads stay allowed",
       "Docker, Flatpak, Chrome"},
      {"namespaces", {"clone3"}, SeccompMatch::always, ENOSYS, false,
       "its flags sit in memory seccomp cannot read; ENOSYS makes libc fall back to clone, which is checked "
       "(not recorded: libc tries it at every thread and process start)",
       "Docker, Chrome",
       // runsc 20221219 with this rule: claude's runtime (bun) aborts at start, with clone3 allowed it
       // runs (measured); a namespace made there is the sentry's, never the seat kernel's.
       false},
      {"mount API", {"mount", "umount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick", "open_tree",
                     "move_mount", "mount_setattr"},
       SeccompMatch::always, EPERM, true,
       "mounts need a namespace of the agent's own (refused above); refusing them too leaves no second step "
       "(overlayfs CVE-2023-0386, the new mount API's fsconfig CVE-2022-0185)",
       "Docker, Flatpak, Chrome"},
      {"keyrings", {"keyctl", "add_key", "request_key"}, SeccompMatch::always, EPERM, true,
       "the kernel keyring is not namespaced: the host user's keys (Kerberos tickets, fscrypt keys) are reachable",
       "Docker, Flatpak, Chrome"},
      // Before socket's rows: libseccomp turns socket's per-argument rules into socketcall rules on
      // i386, and a whole-socketcall rule after them conflicts (runc: "file exists").
      {"sockets", {"socketcall"}, SeccompMatch::always, EPERM, true,
       "the i386 multiplexer hides socket's family from the filter; 64-bit programs never call it", "Chrome"},
      {"sockets", {"socket"}, SeccompMatch::socket_family, EAFNOSUPPORT, true,
       "families no agent needs and exploits like: AF_PACKET (packet_socket), AF_ALG (Copy Fail CVE-2026-31431), "
       "AF_VSOCK (CVE-2021-26708), AF_TIPC, AF_RDS, AF_XDP, netlink other than route (NETLINK_NETFILTER: nf_tables)",
       "Docker (AF_ALG, AF_VSOCK), Flatpak, Chrome"},
      {"sockets", {"socket"}, SeccompMatch::inet_type, ESOCKTNOSUPPORT, true,
       "AF_INET/AF_INET6 of a type other than stream and datagram: SOCK_PACKET there makes an AF_PACKET socket "
       "(packet_socket), SOCK_RAW, SOCK_SEQPACKET (SCTP)",
       "Chrome"},
      {"sockets", {"socket"}, SeccompMatch::inet_protocol, EPROTONOSUPPORT, false,
       "AF_INET/AF_INET6 protocols other than TCP, UDP and the ICMP echo sockets: MPTCP, UDP-Lite, and on modular "
       "seat kernels SCTP, DCCP, L2TP and SMC, autoloaded by socket() (not recorded: Go 1.24 tries MPTCP first and "
       "falls back)",
       "Chrome",
       // gVisor: the (family, type) pairs are allowed whole instead (profile.cc, inet_pairs_whole).
       false},
      {"sockets", {"socketpair"}, SeccompMatch::socketpair_family, EAFNOSUPPORT, true,
       "socketpair of a family other than AF_UNIX runs that family's create (AF_TIPC gives a working pair)",
       "Chrome"},
      {"sockets", {"sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg"}, SeccompMatch::msg_oob,
       EOPNOTSUPP, true,
       "out-of-band data (MSG_OOB): AF_UNIX OOB is CVE-2025-38236; nothing in the workload sends urgent data",
       "Chrome"},
      {"sockets", {"setsockopt"}, SeccompMatch::sockopt, ENOPROTOOPT, true,
       "TCP_ULP (kTLS: CVE-2023-0461, reached wherever tls.ko is loaded) and UDP_ENCAP (ESP-in-UDP into the xfrm "
       "input path); ENOPROTOOPT is what a kernel without them answers",
       "",
       // runsc 20221219 (--oci-seccomp) fails to start a container with these rules (measured:
       // `runsc start` exits 128); under gVisor setsockopt is the sentry's, and its host network
       // passes only its own allowlist of options to the seat's kernel.
       false},
      {"ptrace", {"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd"}, SeccompMatch::always, EPERM,
       true,
       "no CLI or workload here traces (measured); a tracer reads and writes other processes of the session "
       "(CVE-2019-13272); pidfd_getfd takes a sibling's descriptor under the same check",
       "Flatpak, Chrome"},
      {"personality", {"personality"}, SeccompMatch::personality, ENOSYS, true,
       "only PER_LINUX and the query are used (measured); the others turn off ASLR or make data executable",
       "Flatpak, Chrome"},
      {"x86 descriptors and secret memory", {"modify_ldt", "memfd_secret"}, SeccompMatch::always, ENOSYS, true,
       "no workload calls them (measured); LDT bugs (CVE-2015-5157, CVE-2017-17053), and secret memory takes pages "
       "out of the kernel's direct map; ENOSYS is what a kernel built without them answers",
       "Chrome (modify_ldt)"},
      {"kernel log", {"syslog"}, SeccompMatch::always, EPERM, true,
       "kernel addresses for an exploit; nothing an agent reads", "Flatpak, Chrome"},
      {"refused by the default too", {"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
                                      "io_uring_register", "kexec_load", "kexec_file_load", "init_module",
                                      "finit_module", "delete_module", "open_by_handle_at"},
       SeccompMatch::always, EPERM, true,
       "already refused by podman's default; listed so they stay refused if it changes, and are on record "
       "(io_uring: 60% of kCTF 2023 submissions; bpf_privesc; Shocker)",
       "Docker, Flatpak, Chrome"},
  };
  return rows;
}

std::vector<std::uint64_t> clone_new_flags() {
  std::vector<std::uint64_t> out;
  for (int bit = 0; bit < 64; ++bit)
    if (kCloneNewMask & (std::uint64_t(1) << bit)) out.push_back(std::uint64_t(1) << bit);
  return out;
}

const std::vector<SocketFamily>& socket_families_allowed() {
  static const std::vector<SocketFamily> families = {{1, "AF_UNIX"}, {2, "AF_INET"}, {10, "AF_INET6"}};
  return families;
}

std::string socket_family_name(std::uint64_t family) {
  static const char* names[kAfMax] = {
      "AF_UNSPEC", "AF_UNIX",   "AF_INET",   "AF_AX25",     "AF_IPX",   "AF_APPLETALK", "AF_NETROM",  "AF_BRIDGE",
      "AF_ATMPVC", "AF_X25",    "AF_INET6",  "AF_ROSE",     "AF_DECnet", "AF_NETBEUI",  "AF_SECURITY", "AF_KEY",
      "AF_NETLINK", "AF_PACKET", "AF_ASH",   "AF_ECONET",   "AF_ATMSVC", "AF_RDS",      "AF_SNA",     "AF_IRDA",
      "AF_PPPOX",  "AF_WANPIPE", "AF_LLC",   "AF_IB",       "AF_MPLS",  "AF_CAN",       "AF_TIPC",    "AF_BLUETOOTH",
      "AF_IUCV",   "AF_RXRPC",  "AF_ISDN",   "AF_PHONET",   "AF_IEEE802154", "AF_CAIF", "AF_ALG",     "AF_NFC",
      "AF_VSOCK",  "AF_KCM",    "AF_QIPCRTR", "AF_SMC",     "AF_XDP",   "AF_MCTP"};
  return family < kAfMax ? names[family] : "AF_" + std::to_string(family);
}

}  // namespace asbx
