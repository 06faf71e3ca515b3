// The table's calls by number for i386 processes on an x86_64 seat (seccomp/syscall_numbers.h).
#include "seccomp/syscall_numbers.h"

#if defined(__x86_64__)
#include <asm/unistd_32.h>
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

namespace asbx {
#include "seccomp/table_calls.inc"
std::vector<SyscallNumber> table_calls_i386() { return {std::begin(kTableCalls), std::end(kTableCalls)}; }
}  // namespace asbx
#else
namespace asbx {
std::vector<SyscallNumber> table_calls_i386() { return {}; }
}  // namespace asbx
#endif
