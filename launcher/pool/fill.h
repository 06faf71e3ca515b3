// Filling the warm pool (docs/DECISIONS.md "Issue 37: the warm pool"): `agent-sandbox pool fill`
// makes members until the seat's pool_size of them (and pool_tty_size made with a terminal) fit its current plan; members that no longer fit
// (the image, the profile or the seat config changed) go first. Each member is made by a forked
// process that stays as its keeper: its pid and start are the member's launcher labels and session
// dir owner (so gc judges a member like any session), and it holds the member's seccomp listener,
// to which runc handed the notify fd at init, until a claim takes it (launcher/pool/take.h).
#pragma once
#include <string>
#include <vector>

#include "base/seat_config.h"
#include "launcher/podman/podman_api.h"

namespace asbx {

// A kind of member the seat keeps: made with a terminal or without (fixed at create), how many, and
// the digest a member of it made now would carry (doctor compares the waiting ones with it).
struct PoolKind {
  bool tty = false;
  int want = 0;
  std::string digest;
  std::string image;  // the seat image's id the digest was made with; members are created from it
};

// The seat's kinds with a count above 0 (pool_size, then pool_tty_size); none when the pool is off.
std::vector<PoolKind> pool_kinds(const SeatConfig& seat, PodmanApi& api);

// Members made; lines for stderr. Throws Error (the first member that could not be made).
int pool_fill(const SeatConfig& seat, std::vector<std::string>& lines);

int pool_fill_main(const std::string& program);

}  // namespace asbx
