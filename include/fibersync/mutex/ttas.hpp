// ttas.hpp: ttas_mutex<R>, test-and-test-and-set with backoff.
//
// Algorithm: one lock word; lock() reads it until it looks free, then tries
//   to take it with one exchange; unlock() stores "free".
// Paper: L. Rudolph, Z. Segall, "Dynamic Decentralized Cache Schemes for MIMD
//   Parallel Processors", ISCA 1984 (test-and-test-and-set); backoff from
//   T. E. Anderson, "The Performance of Spin Lock Alternatives for
//   Shared-Memory Multiprocessors", IEEE TPDS 1(1), 1990.
// Fairness: none. Any LT may barge in, including the one that just unlocked;
//   try_lock barges too. On a cooperative runtime this keeps the lock on the
//   carrier that has it hot, which is why it hands over fast.
// Waits: lock() on the shared word: spin -> yield; never suspends (nobody
//   knows whom to resume).
// Space: one cache line per mutex, nothing per waiter.
// Not reentrant. Meets Lockable.
#pragma once

#include <atomic>

#include "fibersync/detail/cache_line.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/wait_policy.hpp"
#include "fibersync/wait/waiter.hpp"

namespace fibersync {

template <runtime R>
class alignas(detail::cache_line_size) ttas_mutex {
 public:
  ttas_mutex() noexcept : ttas_mutex(default_wait_policy<R>()) {}
  explicit ttas_mutex(const wait_policy& policy) noexcept : policy_(policy) {}
  ttas_mutex(const ttas_mutex&) = delete;
  ttas_mutex& operator=(const ttas_mutex&) = delete;

  void lock() {
    if (!try_lock()) lock_slow();
  }

  bool try_lock() noexcept {
    // The plain load first keeps the line shared while the lock is held, so
    // waiters do not bounce it between cores with failed exchanges.
    // acquire on the exchange: pairs with the release store in unlock().
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }

  void unlock() noexcept {
    // release: pairs with the acquire exchange in try_lock().
    locked_.store(false, std::memory_order_release);
  }

 private:
  // Out of line so that lock()'s fast path stays small enough to inline.
  [[gnu::noinline]] void lock_slow() {
    waiter<R> w(policy_);
    do {
      w.on_failure(/*may_suspend=*/false);
    } while (!try_lock());
  }

  std::atomic<bool> locked_{false};  // true while held. Written by lock/unlock, read by waiters
  wait_policy policy_;               // read-only after construction
};

}  // namespace fibersync
