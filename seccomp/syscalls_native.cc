// The table's calls by number on the machine's own architecture (seccomp/syscall_numbers.h).
#include <asm/unistd.h>
#include <linux/audit.h>

#include "seccomp/syscall_numbers.h"

namespace asbx {

#include "seccomp/table_calls.inc"

std::vector<SyscallNumber> table_calls_native() { return {std::begin(kTableCalls), std::end(kTableCalls)}; }

const std::vector<ArchCalls>& table_call_numbers() {
#if defined(__x86_64__)
  static const std::vector<ArchCalls> all = {
      {AUDIT_ARCH_X86_64, table_calls_native()}, {AUDIT_ARCH_X86_64, table_calls_x32()}, {AUDIT_ARCH_I386, table_calls_i386()}};
#elif defined(__aarch64__)
  static const std::vector<ArchCalls> all = {{AUDIT_ARCH_AARCH64, table_calls_native()}};
#else
#error "the seccomp recorder knows the audit arch of x86_64 and aarch64 only"
#endif
  return all;
}

}  // namespace asbx
