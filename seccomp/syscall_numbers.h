// The calls of seccomp/table.h by number, per architecture a filter on this machine sees: what the
// recorder (seccomp/notify_match.h) reads a notification's (arch, nr) against. On x86_64: the
// native calls, x32's (the same audit arch, numbers with bit 30 set) and i386's. Taken from the
// kernel's own headers (<asm/unistd_*.h>), one translation unit each (their macros collide).
#pragma once
#include <cstdint>
#include <vector>

namespace asbx {

struct SyscallNumber {
  const char* name;
  long nr;  // -1: the architecture has no such call
};

struct ArchCalls {
  std::uint32_t audit_arch;  // AUDIT_ARCH_*, as seccomp_data.arch says it
  std::vector<SyscallNumber> calls;
};

const std::vector<ArchCalls>& table_call_numbers();

std::vector<SyscallNumber> table_calls_native();
std::vector<SyscallNumber> table_calls_i386();  // empty off x86_64
std::vector<SyscallNumber> table_calls_x32();   // empty off x86_64

}  // namespace asbx
