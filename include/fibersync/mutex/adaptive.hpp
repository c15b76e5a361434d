// adaptive.hpp: adaptive_mutex<R>, fibersync's own lock: barging fast path,
// one spinning head, a parked MCS queue, bounded barging.
//
// Algorithm: one lock word (free / held / handed to the queue head) and an MCS
//   queue of waiters. lock() first tries the word (TTAS), then spins on it
//   for an adaptive budget: twice the recent successful spin length plus a
//   little (an exponential moving average, so the budget follows the observed
//   hold time; it falls to a few pauses when spinning keeps failing, e.g. when
//   the holder shares our carrier). Then it queues. Only the queue head
//   competes for the word (spin -> yield); the others wait on their own node
//   (spin -> yield -> suspend). Acquisitions by LTs that did not queue while
//   a queue exists are counted; once `barge_limit` of them passed the current
//   head, unlock() hands the word straight to the head instead of freeing it.
// Paper: our design, from measurements (docs/ADAPTIVE.md). Ingredients: MCS
//   (Mellor-Crummey & Scott, TOCS 1991); one spinner in front of a queue as in
//   Linux's qspinlock; barging with a starvation hand-off as in Go's
//   sync.Mutex; the spin budget as an average of past spins as in glibc's
//   adaptive mutexes.
// Fairness: bounded. Between a waiter's queueing and its acquisition there are
//   at most (queued ahead) x (barge_limit + 1) + barge_limit other
//   acquisitions; FIFO among queued waiters. try_lock barges (and counts).
// Waits: lock() on the word during the adaptive spin (pure spin); queued, on
//   its own node (spin -> yield -> suspend, park/grant handshake); as head, on
//   the word (spin -> yield, no suspension: nobody would know to resume it);
//   after acquiring, on its successor linking in (spin -> yield).
// Space: two cache lines per mutex; one pooled node per queued LT.
// Not reentrant. Meets Lockable.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "fibersync/detail/cache_line.hpp"
#include "fibersync/detail/node_pool.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/cpu_relax.hpp"
#include "fibersync/wait/handover.hpp"
#include "fibersync/wait/wait_policy.hpp"
#include "fibersync/wait/waiter.hpp"

namespace fibersync {

template <runtime R>
class adaptive_mutex {
 public:
  static constexpr std::uint32_t default_barge_limit = 32;
  static constexpr std::uint32_t max_spin = 256;  // pauses; ~10 us at most

  adaptive_mutex() noexcept : adaptive_mutex(default_wait_policy<R>()) {}
  explicit adaptive_mutex(const wait_policy& policy, std::uint32_t barge_limit = default_barge_limit) noexcept
      : policy_(policy), barge_limit_(barge_limit) {}
  adaptive_mutex(const adaptive_mutex&) = delete;
  adaptive_mutex& operator=(const adaptive_mutex&) = delete;

  void lock() {
    if (try_take()) {
      note_barge();
      return;
    }
    lock_slow();
  }

  bool try_lock() noexcept {
    if (!try_take()) return false;
    note_barge();
    return true;
  }

  void unlock() noexcept {
    // barges_ and tail_: barges_ is written only by holders; a non-null tail
    // means a queued LT that cannot leave before it acquires, so a hand-off
    // to the head is always taken up.
    if (barges_ >= barge_limit_ && tail_.load(std::memory_order_relaxed) != nullptr) {
      word_.store(handed_to_head, std::memory_order_release);
      return;
    }
    // release: pairs with the acquire CAS in try_take() / head_acquire().
    word_.store(free_word, std::memory_order_release);
  }

 private:
  enum : std::uint32_t { free_word = 0, held = 1, handed_to_head = 2 };

  struct alignas(detail::cache_line_size) node {
    handover_flag<R> flag;             // granted when the predecessor hands us the head position
    std::atomic<node*> next{nullptr};  // written once by the successor
    node* pool_next = nullptr;
  };
  using pool = detail::node_pool<node>;

  bool try_take() noexcept {
    std::uint32_t expected = free_word;
    return word_.load(std::memory_order_relaxed) == free_word &&
           word_.compare_exchange_strong(expected, held, std::memory_order_acquire, std::memory_order_relaxed);
  }

  // Holder: an acquisition by an LT that did not wait in the queue while the
  // queue was non-empty bypassed its head.
  void note_barge() noexcept {
    if (tail_.load(std::memory_order_relaxed) != nullptr) ++barges_;
  }

  [[gnu::noinline]] void lock_slow() {
    if (spin_phase()) {
      note_barge();
      return;
    }
    node* self = pool::acquire();
    self->flag.reset();
    self->next.store(nullptr, std::memory_order_relaxed);
    // acq_rel: as in mcs_mutex::lock().
    node* pred = tail_.exchange(self, std::memory_order_acq_rel);
    if (pred != nullptr) {
      pred->next.store(self, std::memory_order_release);
      self->flag.await(policy_);  // until we are the head
    }
    head_acquire();
    barges_ = 0;  // the next head's count starts now; we hold the lock
    pass_head_position(self);
  }

  // Spins for the adaptive budget; true if the word was taken.
  bool spin_phase() noexcept {
    const std::uint32_t estimate = spin_estimate_.load(std::memory_order_relaxed);
    const std::uint32_t budget = std::min<std::uint32_t>(max_spin, 2 * estimate + 8);
    std::uint32_t spent = 0;
    bool taken = false;
    for (; spent < budget; ++spent) {
      if (try_take()) {
        taken = true;
        break;
      }
      (cpu_relax)();
    }
    // A racy average is fine: it only sizes the next spins. Failure pulls it
    // down, so spinning stops where it never pays (the holder on our carrier).
    const std::int64_t sample = taken ? spent : 0;
    const std::int64_t next = static_cast<std::int64_t>(estimate) + (sample - static_cast<std::int64_t>(estimate)) / 8;
    spin_estimate_.store(static_cast<std::uint32_t>(next), std::memory_order_relaxed);
    return taken;
  }

  void head_acquire() noexcept {
    waiter<R> w(policy_);
    for (;;) {
      // acquire: pairs with the release store of unlock().
      const std::uint32_t seen = word_.load(std::memory_order_acquire);
      if (seen == handed_to_head) {
        word_.store(held, std::memory_order_relaxed);  // ours already: only the head takes a hand-off
        return;
      }
      if (seen == free_word && try_take()) return;
      w.on_failure(/*may_suspend=*/false);
    }
  }

  // Holder, former head: the next queued LT becomes the head.
  void pass_head_position(node* self) {
    node* succ = self->next.load(std::memory_order_acquire);
    if (succ == nullptr) {
      node* expected = self;
      if (tail_.compare_exchange_strong(expected, nullptr, std::memory_order_release, std::memory_order_relaxed)) {
        pool::release(self);
        return;
      }
      spin_yield_until<R>(policy_, [&] { return (succ = self->next.load(std::memory_order_acquire)) != nullptr; });
    }
    succ->flag.grant();
    pool::release(self);
  }

  alignas(detail::cache_line_size) std::atomic<std::uint32_t> word_{free_word};  // free / held / handed_to_head
  std::uint32_t barges_ = 0;  // acquisitions past the current head; holder only
  alignas(detail::cache_line_size) std::atomic<node*> tail_{nullptr};  // last queued LT
  std::atomic<std::uint32_t> spin_estimate_{0};  // pauses a successful spin took, averaged
  wait_policy policy_;                          // read-only after construction
  std::uint32_t barge_limit_;
};

}  // namespace fibersync
