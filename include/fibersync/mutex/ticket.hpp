// ticket.hpp: ticket_mutex<R>, the ticket lock.
//
// Algorithm: lock() draws a ticket with one fetch_add on `next_` and waits
//   until `serving_` shows it; unlock() advances `serving_`.
// Paper: J. M. Mellor-Crummey, M. L. Scott, "Algorithms for Scalable
//   Synchronization on Shared-Memory Multiprocessors", ACM TOCS 9(1), 1991
//   (section 2.2; the ticket lock goes back to Reed and Kanodia, 1979).
// Fairness: FIFO by ticket order. try_lock succeeds only when nobody holds or
//   waits (it never jumps the queue).
// Waits: lock() on the shared `serving_` word: spin -> yield; never suspends
//   (every waiter watches the same word, so the holder cannot tell whom to
//   resume). On a cooperative runtime the next ticket may sit deep in a
//   carrier's ready queue: FIFO costs throughput there.
// Space: two cache lines per mutex, nothing per waiter.
// Not reentrant. Meets Lockable.
#pragma once

#include <atomic>
#include <cstdint>

#include "fibersync/detail/cache_line.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/wait_policy.hpp"
#include "fibersync/wait/waiter.hpp"

namespace fibersync {

template <runtime R>
class ticket_mutex {
 public:
  ticket_mutex() noexcept : ticket_mutex(default_wait_policy<R>()) {}
  explicit ticket_mutex(const wait_policy& policy) noexcept : policy_(policy) {}
  ticket_mutex(const ticket_mutex&) = delete;
  ticket_mutex& operator=(const ticket_mutex&) = delete;

  void lock() {
    // relaxed: drawing a ticket orders nothing; the acquire load of serving_
    // is what synchronizes with the previous holder.
    const std::uint32_t ticket = next_.fetch_add(1, std::memory_order_relaxed);
    if (serving_.load(std::memory_order_acquire) != ticket) lock_slow(ticket);
  }

  bool try_lock() noexcept {
    // acquire: pairs with the release store in unlock() of the last holder.
    std::uint32_t serving = serving_.load(std::memory_order_acquire);
    // Take ticket `serving` only if nobody drew it: then it is ours and served.
    return next_.compare_exchange_strong(serving, serving + 1, std::memory_order_relaxed,
                                         std::memory_order_relaxed);
  }

  void unlock() noexcept {
    // relaxed load: only the holder writes serving_. release: pairs with the
    // acquire loads of the waiters.
    serving_.store(serving_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

 private:
  [[gnu::noinline]] void lock_slow(std::uint32_t ticket) {
    spin_yield_until<R>(policy_, [&] { return serving_.load(std::memory_order_acquire) == ticket; });
  }

  // Separate lines: arrivals hammer next_ while waiters read serving_.
  alignas(detail::cache_line_size) std::atomic<std::uint32_t> next_{0};     // next ticket to draw. RMW by lock/try_lock
  alignas(detail::cache_line_size) std::atomic<std::uint32_t> serving_{0};  // ticket that may enter. Written by the holder
  wait_policy policy_;  // read-only after construction
};

}  // namespace fibersync
