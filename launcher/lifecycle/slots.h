// A seat's capacity, claimed per session: `sandbox-run --slots N` takes a non-blocking
// flock on one of DIR/0.lock .. DIR/(N-1).lock and holds it until the process exits, so
// two concurrent dispatches cannot overbook a seat and a dead session frees its slot.
#pragma once
#include <string>

namespace asbx {

// The first line sandbox-run writes to stderr once it holds a slot; the caller starts
// sending stdin only after it (and strips it), so input never reaches a seat that refused.
inline constexpr const char* kSlotClaimedLine = "asbx:slot-claimed";

class SlotClaim {
 public:
  // Throws Error(seat_full) when every slot is taken, Error(internal) on an OS error.
  SlotClaim(const std::string& dir, int slots);
  ~SlotClaim();
  SlotClaim(const SlotClaim&) = delete;
  SlotClaim& operator=(const SlotClaim&) = delete;
  int slot() const { return slot_; }

 private:
  int fd_ = -1;
  int slot_ = -1;
};

}  // namespace asbx
