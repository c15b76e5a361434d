// adaptive_access.hpp: the tests' way into adaptive_mutex's counted hold,
// and read-only views of its waiter state.
//
// A hold begun on an idle adaptive_mutex is a fast one: its unlock() is a
// store, and a waiter that arrives during it competes uncounted and never
// parks (docs/ADAPTIVE.md, finding 27). Tests of what waiters do while
// counted (park, be woken, be handed the lock) open their scenario with a
// counted hold instead, the kind every hold begun past waiters is.
#pragma once

#include <fibersync/mutex/adaptive.hpp>

#include <atomic>
#include <cstdint>
#include <vector>

namespace fibersync::detail {
struct adaptive_mutex_access {
  template <class M>
  static void lock_not_fast(M& m) {
    m.lock_not_fast();
  }
  // Uncontended acquisitions after which a mutex forgets its sampled holds.
  template <class M>
  static constexpr auto forget_holds_after = M::forget_holds_after;
  // The bound on a competition of slow checks (where idle carriers do not
  // steal): competed_long(failures, since).
  template <class M>
  static bool competed_long(std::uint32_t failures, std::int64_t& since) {
    return M::competed_long(failures, since);
  }
  // Carrier slots of the awake counts (where idle carriers do not steal).
  template <class M>
  static constexpr unsigned awake_carrier_slots = M::awake_counts::carrier_slots;

  // The queue's guard, taken and released by a test that scripts a schedule
  // on one real carrier: a waiter that reaches park() meanwhile yields in
  // guard_lock() until the test releases it (the guard is held only for a
  // few pointer writes otherwise, never across a yield, so without this no
  // such LT could be caught there).
  template <class M>
  static void hold_queue_guard(M& m) {
    m.guard_lock();
  }
  template <class M>
  static void release_queue_guard(M& m) {
    m.guard_unlock();
  }
  // Sets the sampled averages of holds and wake-ups, which the waiters'
  // rules weigh (the samples taken later move them by at most 3/8 each).
  template <class M>
  static void set_sampled_averages(M& m, std::int64_t hold_ns, std::int64_t wake_up_ns) {
    m.hold_ns_.store(hold_ns, std::memory_order_relaxed);
    m.wake_up_ns_.store(wake_up_ns, std::memory_order_relaxed);
  }
  // Sets the count of recent failed checks beside the holder (while it is
  // beside_checks_to_gather or more, no waiter competes uncounted).
  template <class M>
  static void set_checks_beside_holder(M& m, std::int32_t checks) {
    m.beside_checks_.store(checks, std::memory_order_relaxed);
  }
  // The count itself (failed checks beside the holder, less sampled holds).
  template <class M>
  static std::int32_t checks_beside_holder(const M& m) {
    return m.beside_checks_.load(std::memory_order_relaxed);
  }
  // The moving average of the sampled holds (0: none timed yet).
  template <class M>
  static std::int64_t sampled_hold_ns(const M& m) {
    return m.hold_ns_.load(std::memory_order_relaxed);
  }
  // The waiters the word counts competing and parked, and whether one is
  // WOKEN.
  struct waiter_counts {
    std::uint64_t competing = 0;
    std::uint64_t parked = 0;
    bool woken = false;
    bool operator==(const waiter_counts&) const = default;
  };
  template <class M>
  static waiter_counts counted_waiters(const M& m) {
    const auto w = m.word_.load(std::memory_order_relaxed);
    return {(w & M::competing_mask) / M::competing_one, (w & M::parked_mask) / M::parked_one, (w & M::woken) != 0};
  }
  // Waiters counted only in uncounted_waiters_: behind a fast hold, or
  // competing uncounted first (competes_uncounted).
  template <class M>
  static std::uint32_t uncounted_waiters(const M& m) {
    return m.uncounted_waiters_.load(std::memory_order_relaxed) & ~M::no_fast_holds;
  }
  // Whether the lock is held by a fast hold (freed by a store; nobody can
  // count itself in the word behind it).
  template <class M>
  static bool holds_fast(const M& m) {
    return (m.word_.load(std::memory_order_relaxed) & M::fast_hold) != 0;
  }
  // Whether unlock() keeps the word locked for the woken waiter (RESERVED).
  template <class M>
  static bool reserved_for_woken(const M& m) {
    return (m.word_.load(std::memory_order_relaxed) & M::reserved) != 0;
  }

  // Read-only views of the waiter protocol's state, for tests that script a
  // schedule on one real carrier: read them from the LT that runs, while the
  // others sit in a yield or suspended (nothing changes meanwhile).
  // Acquisitions past waiters since the last turn (the hand-off rule's count).
  template <class M>
  static std::uint32_t barges(const M& m) {
    return m.barges_;
  }
  // Awake (competing or woken) waiters counted in `carrier`'s slot, where
  // idle carriers do not steal.
  template <class M>
  static std::uint32_t awake_on_carrier(M& m, unsigned carrier) {
    return m.awake_.count(carrier % M::awake_counts::carrier_slots).load(std::memory_order_relaxed);
  }
  // The carrier each parked waiter noted when it parked (its place, less 1:
  // the carrier modulo 255), from the oldest, following the links from the
  // head (at most as many as the word counts parked, plus one).
  template <class M>
  static std::vector<unsigned> queue_carriers(const M& m) {
    std::vector<unsigned> carriers;
    const auto parked = (m.word_.load(std::memory_order_relaxed) & M::parked_mask) / M::parked_one;
    for (auto* n = m.head_; n != nullptr && carriers.size() <= parked; n = n->next) {
      carriers.push_back(static_cast<unsigned>(n->place / M::place_one) - 1);
    }
    return carriers;
  }
  // The queue is whole: the walk from its head ends at its tail (both null
  // when it is empty), and meets as many nodes as the word counts parked.
  template <class M>
  static bool queue_is_whole(const M& m) {
    const auto parked = (m.word_.load(std::memory_order_relaxed) & M::parked_mask) / M::parked_one;
    decltype(m.head_) last = nullptr;
    std::uint64_t length = 0;
    for (auto* n = m.head_; n != nullptr && length <= parked; n = n->next) {
      last = n;
      ++length;
    }
    return length == parked && last == m.tail_;
  }
};
}  // namespace fibersync::detail

namespace fibersync::test {
// m.lock(), as a counted hold where m is an adaptive_mutex.
template <class M>
void lock_counted(M& m) {
  m.lock();
}
template <runtime R>
void lock_counted(adaptive_mutex<R>& m) {
  detail::adaptive_mutex_access::lock_not_fast(m);
}
// lock_counted(m) if `counted`, else m.lock() (on an idle adaptive_mutex a
// fast hold).
template <class M>
void lock_counted_if(bool counted, M& m) {
  if (counted) {
    lock_counted(m);
  } else {
    m.lock();
  }
}
}  // namespace fibersync::test
