// handover.hpp: the park/grant handshake between a queued waiter and the
// lock holder that hands the lock over to it.
//
// A queue lock (MCS, CLH, HMCS, CNA, NUMA-MCS) gives each waiter a flag of its
// own. The waiter spins and yields on it (waiter.hpp) and, past the policy's
// suspension threshold, parks; the holder grants the flag at hand-over and
// resumes the waiter only if it parked.
//
//            waiter: CAS (fails if granted)
//   waiting ------------------------------> parked
//      |                                      |
//      | holder: exchange(granted)            | holder: exchange(granted),
//      v                                      v         then R::resume(parker)
//   granted <--------------------------------+
//
// INV1: a waiter that reached `parked` calls R::suspend() until it sees
//       `granted`; so the holder that swapped `parked` out owes exactly one
//       R::resume(), and no other resume is ever sent (permits balance).
// INV2: the holder reads `parker_` only when it swapped out `parked`; then the
//       waiter is committed to suspending and cannot free the flag's memory
//       before that resume, so the read and the resume never touch freed
//       memory. (The LT's permit outlives the wait because the LT does.)
// Both paths are cheap when not needed: a waiter granted while spinning never
// touches the runtime, and a holder pays for resume() only after a park.
#pragma once

#include <atomic>
#include <cstdint>

#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/waiter.hpp"

namespace fibersync {

template <runtime R>
class handover_flag {
 public:
  enum state : std::uint32_t {
    waiting = 0,  // the owner waits, spinning or yielding; nobody to resume
    parked = 1,   // the owner parked (or is about to): holder must resume it
    granted = 2,  // the lock (or the turn) belongs to the owner now
  };

  // Owner only, before the flag is published to the holder.
  void reset(state s = waiting) noexcept {
    // relaxed: the publication of the node (an exchange or a release store of
    // the queue link) orders this store before any access by the holder.
    state_.store(s, std::memory_order_relaxed);
  }

  bool is_granted() const noexcept {
    // acquire: pairs with the acq_rel exchange in grant(), so the critical
    // section of the previous holder happens-before the new holder's.
    return state_.load(std::memory_order_acquire) == granted;
  }

  // Owner: wait with spin -> yield -> suspend until the flag is granted.
  void await(const wait_policy& policy) noexcept {
    waiter<R> w(policy);
    if (w.wait_until([this] { return is_granted(); }, /*may_suspend=*/true) == wait_result::acquired) {
      return;
    }
    park();
  }

  // Owner: announce the park and suspend until granted (INV1).
  void park() noexcept {
    parker_ = R::current();
    std::uint32_t expected = waiting;
    // release: publishes parker_ to the holder's acq_rel exchange in grant().
    // acquire on failure: the flag is granted; see is_granted().
    if (!state_.compare_exchange_strong(expected, parked, std::memory_order_release,
                                        std::memory_order_acquire)) {
      return;  // granted while we were deciding to park: no resume is coming
    }
    do {
      R::suspend();
    } while (!is_granted());
  }

  // Holder: grant the flag; resume its owner if it parked (INV2).
  void grant() noexcept {
    // acq_rel: release hands our critical section to the owner; acquire pairs
    // with the owner's release CAS so that parker_ is visible below.
    if (state_.exchange(granted, std::memory_order_acq_rel) == parked) {
      R::resume(parker_);
    }
  }

 private:
  std::atomic<std::uint32_t> state_{waiting};  // written by owner (CAS) and holder (exchange)
  typename R::handle parker_{};                // written by owner before CAS, read by holder after
};

}  // namespace fibersync
