// adaptive.hpp: adaptive_mutex<R>, fibersync's own lock: competing waiters
// like TTAS, a parking queue for the ones that waited long, bounded barging.
//
// Algorithm: one lock word = LOCKED bit | WOKEN bit | count of parked waiters.
//   lock() takes the word with a CAS whenever it is free. A waiter competes
//   for the word with the runtime's wait policy (spin -> yield), exactly as a
//   TTAS waiter does; only after `suspend_after` failed checks does it park
//   in a FIFO queue. unlock() frees the word and, if waiters are parked and
//   none is already awake (WOKEN), wakes the oldest, which competes again; if
//   it loses again it re-parks at the front. Once `barge_limit` acquisitions
//   passed the parked or woken waiters, unlock() hands the word (still
//   LOCKED) straight to the oldest parked waiter instead.
// Paper: our design, from measurements (docs/ADAPTIVE.md). Ingredients: TTAS
//   (Rudolph & Segall 1984) for the competing phase; Go's sync.Mutex for the
//   woken flag, the front re-queue and the starvation hand-off; the futex
//   mutex's waiter count in the lock word (Drepper, "Futexes Are Tricky").
// Fairness: bounded. With the queue non-empty, a hand-off reaches its front
//   at least every barge_limit + 1 acquisitions, and a woken waiter that lost
//   re-parks at the front, so a parked waiter is passed by at most about
//   (parked ahead + 1) x (barge_limit + 1) acquisitions; before parking it
//   competes like TTAS, unbounded but for suspend_after checks.
// Waits: lock() on the word (spin -> yield, as TTAS); parked, on its own node
//   (spin -> yield -> suspend, park/grant handshake); the queue's own guard
//   (spin -> yield, held for a few pointer writes).
// Space: two cache lines per mutex; one pooled node per parked LT.
// Not reentrant. Meets Lockable.
#pragma once

#include <atomic>
#include <cstdint>

#include "fibersync/detail/cache_line.hpp"
#include "fibersync/detail/node_pool.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/handover.hpp"
#include "fibersync/wait/wait_policy.hpp"
#include "fibersync/wait/waiter.hpp"

namespace fibersync {

template <runtime R>
class adaptive_mutex {
 public:
  static constexpr std::uint32_t default_barge_limit = 32;

  adaptive_mutex() noexcept : adaptive_mutex(default_wait_policy<R>()) {}
  explicit adaptive_mutex(const wait_policy& policy, std::uint32_t barge_limit = default_barge_limit) noexcept
      : policy_(policy), barge_limit_(barge_limit) {}
  adaptive_mutex(const adaptive_mutex&) = delete;
  adaptive_mutex& operator=(const adaptive_mutex&) = delete;

  void lock() {
    if (!try_lock()) lock_slow();
  }

  bool try_lock() noexcept {
    std::uint32_t w = word_.load(std::memory_order_relaxed);
    while ((w & locked) == 0) {
      // acquire: pairs with the release of unlock().
      if (word_.compare_exchange_weak(w, w | locked, std::memory_order_acquire, std::memory_order_relaxed)) {
        if (w != 0) note_barge();  // someone is parked or woken: we passed them
        return true;
      }
    }
    return false;
  }

  void unlock() noexcept {
    std::uint32_t w = locked;
    // release: pairs with the acquire CAS of the next holder. The CAS (not a
    // store) fails when a waiter announced itself meanwhile.
    if (word_.compare_exchange_strong(w, 0, std::memory_order_release, std::memory_order_relaxed)) return;
    unlock_slow(w);
  }

 private:
  // The word. WOKEN is set only by a holder (unlock) and cleared only by the
  // woken waiter, so at most one woken waiter competes at a time.
  static constexpr std::uint32_t locked = 1;
  static constexpr std::uint32_t woken = 2;
  static constexpr std::uint32_t parked_one = 4;  // count of parked waiters, in the bits above

  struct alignas(detail::cache_line_size) node {
    handover_flag<R> flag;    // granted by unlock(): woken, or handed the lock
    bool handed_lock = false;  // written before the grant: the lock is ours
    node* next = nullptr;      // queue link, under guard_
    node* pool_next = nullptr;
  };
  using pool = detail::node_pool<node>;

  // Holder only: an acquisition passed the waiters (parked or woken).
  void note_barge() noexcept { ++barges_; }

  [[gnu::noinline]] void lock_slow() {
    node* self = nullptr;
    bool was_woken = false;  // we hold WOKEN and must clear it (by acquiring or re-parking)
    for (;;) {
      waiter<R> w(policy_);
      for (;;) {
        std::uint32_t seen = word_.load(std::memory_order_relaxed);
        if ((seen & locked) == 0) {
          const std::uint32_t want = (seen | locked) & (was_woken ? ~woken : ~0u);
          if (word_.compare_exchange_weak(seen, want, std::memory_order_acquire, std::memory_order_relaxed)) {
            if (was_woken) {
              barges_ = 0;  // a waiter that left the queue got the lock: the count starts again
            } else if (seen != 0) {
              note_barge();
            }
            if (self != nullptr) pool::release(self);
            return;
          }
          continue;  // the word moved: look again before paying for a failure
        }
        if (w.on_failure(/*may_suspend=*/true)) break;
      }
      if (self == nullptr) self = pool::acquire();
      if (!park(self, /*at_front=*/was_woken)) {
        was_woken = false;  // park() cleared WOKEN; the word was free: compete again
        continue;
      }
      if (self->handed_lock) {
        barges_ = 0;
        pool::release(self);
        return;  // handed over: LOCKED stayed set for us
      }
      was_woken = true;
    }
  }

  // Announces self as parked and waits for unlock() to wake it. Returns false
  // without waiting if the word was free by then (compete instead). A woken
  // waiter re-parks at the front, so it keeps its turn.
  bool park(node* self, bool at_front) {
    self->flag.reset();
    self->handed_lock = false;
    self->next = nullptr;
    guard_lock();
    // acq_rel: the count must be visible to the holder's CAS in unlock() (it
    // fails and takes the slow path), and we must see whether the word is
    // still locked: if not, no unlock() is coming to wake us.
    const std::uint32_t delta = at_front ? parked_one - woken : parked_one;
    const std::uint32_t before = word_.fetch_add(delta, std::memory_order_acq_rel);
    if ((before & locked) == 0) {
      word_.fetch_sub(parked_one, std::memory_order_relaxed);
      guard_unlock();
      return false;
    }
    if (at_front) {
      self->next = head_;
      head_ = self;
      if (tail_ == nullptr) tail_ = self;
    } else {
      if (tail_ == nullptr) head_ = self; else tail_->next = self;
      tail_ = self;
    }
    guard_unlock();
    self->flag.await(policy_);
    return true;
  }

  [[gnu::noinline]] void unlock_slow(std::uint32_t w) noexcept {
    // Without the guard first: nobody parked, or a woken waiter already
    // competes (and no hand-off is due): just free the word.
    for (;;) {
      if (w >= parked_one && ((w & woken) == 0 || barges_ >= barge_limit_)) break;
      if (word_.compare_exchange_weak(w, w & ~locked, std::memory_order_release, std::memory_order_relaxed)) return;
    }
    guard_lock();
    // Under the guard, and holding the lock, the word cannot change: the count
    // and the clearing of WOKEN by a re-parking waiter happen under the guard,
    // LOCKED is ours, and only a holder sets WOKEN. So the count is exactly
    // the queue's length here (a waiter that found the word free took its
    // count back before releasing the guard).
    w = word_.load(std::memory_order_relaxed);
    const bool hand_off = barges_ >= barge_limit_;
    if (w < parked_one || ((w & woken) != 0 && !hand_off)) {
      word_.fetch_sub(locked, std::memory_order_release);  // release: as in unlock()
      guard_unlock();
      return;
    }
    node* n = head_;
    head_ = n->next;
    if (head_ == nullptr) tail_ = nullptr;
    if (hand_off) {
      // The word stays LOCKED: ownership passes to n, whose grant below
      // carries our critical section (release/acquire on its flag).
      word_.fetch_sub(parked_one, std::memory_order_relaxed);
      n->handed_lock = true;
    } else {
      // Free the word, mark n woken, take it out of the count: one add.
      // release: pairs with the acquire CAS of the next holder.
      word_.fetch_add(woken - parked_one - locked, std::memory_order_release);
    }
    guard_unlock();
    n->flag.grant();
  }

  void guard_lock() noexcept {
    // The queue's own guard: held for a few pointer writes, never across a
    // wait; waiters spin and yield (a holder on our carrier must get to run).
    if (!guard_.exchange(true, std::memory_order_acquire)) return;
    spin_yield_until<R>(policy_, [this] {
      return !guard_.load(std::memory_order_relaxed) && !guard_.exchange(true, std::memory_order_acquire);
    });
  }
  void guard_unlock() noexcept { guard_.store(false, std::memory_order_release); }

  alignas(detail::cache_line_size) std::atomic<std::uint32_t> word_{0};  // LOCKED | WOKEN | parked count
  std::uint32_t barges_ = 0;  // acquisitions past the waiters since the last turn; holder only
  alignas(detail::cache_line_size) std::atomic<bool> guard_{false};  // guards head_, tail_ and the count
  node* head_ = nullptr;  // oldest parked waiter
  node* tail_ = nullptr;
  wait_policy policy_;  // read-only after construction
  std::uint32_t barge_limit_;
};

}  // namespace fibersync
