// mcs.hpp: mcs_mutex<R>, the MCS queue lock for lightweight threads.
//
// Algorithm: a waiter appends its node to a FIFO queue with one exchange on
//   `tail_` and links itself behind its predecessor; each waiter watches only
//   its own node's hand-over flag; unlock() grants the successor's flag.
// Paper: J. M. Mellor-Crummey, M. L. Scott, "Algorithms for Scalable
//   Synchronization on Shared-Memory Multiprocessors", ACM TOCS 9(1), 1991.
// Fairness: FIFO among queued LTs; try_lock succeeds only on an empty queue.
// Waits: lock() on its own node (spin -> yield -> suspend, with the park/grant
//   handshake of wait/handover.hpp, so only a parked waiter costs the holder a
//   resume); unlock() while a successor that already swapped the tail is
//   still linking in (spin -> yield: the link is a few instructions away,
//   unless its LT was descheduled).
// Space: two cache lines per mutex; one pooled node (one cache line) per
//   waiting or holding LT.
// Not reentrant. Meets Lockable.
#pragma once

#include <atomic>

#include "fibersync/detail/cache_line.hpp"
#include "fibersync/detail/node_pool.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/handover.hpp"
#include "fibersync/wait/wait_policy.hpp"
#include "fibersync/wait/waiter.hpp"

namespace fibersync {

template <runtime R>
class mcs_mutex {
 public:
  mcs_mutex() noexcept : mcs_mutex(default_wait_policy<R>()) {}
  explicit mcs_mutex(const wait_policy& policy) noexcept : policy_(policy) {}
  mcs_mutex(const mcs_mutex&) = delete;
  mcs_mutex& operator=(const mcs_mutex&) = delete;

  void lock() {
    node* self = new_node();
    // acq_rel: release publishes our node's initialisation to the successor
    // that will link behind it; acquire makes the predecessor's node valid.
    node* pred = tail_.exchange(self, std::memory_order_acq_rel);
    if (pred != nullptr) lock_slow(self, pred);
    owner_node_ = self;
  }

  bool try_lock() {
    node* self = new_node();
    node* expected = nullptr;
    // acquire: pairs with the release CAS in unlock() that emptied the queue.
    if (tail_.compare_exchange_strong(expected, self, std::memory_order_acq_rel, std::memory_order_relaxed)) {
      owner_node_ = self;
      return true;
    }
    pool::release(self);
    return false;
  }

  void unlock() {
    node* self = owner_node_;
    // acquire: pairs with the release store of the link in lock_slow().
    node* succ = self->next.load(std::memory_order_acquire);
    if (succ == nullptr) {
      node* expected = self;
      // release: pairs with the acquire of the next lock()'s exchange.
      if (tail_.compare_exchange_strong(expected, nullptr, std::memory_order_release, std::memory_order_relaxed)) {
        pool::release(self);
        return;
      }
      succ = wait_for_successor(self);
    }
    succ->flag.grant();
    pool::release(self);  // no one references our node after the grant
  }

 private:
  struct alignas(detail::cache_line_size) node {
    handover_flag<R> flag;             // granted by the predecessor at hand-over
    std::atomic<node*> next{nullptr};  // written once by the successor, read by the owner in unlock()
    node* pool_next = nullptr;         // free-list link, used only while pooled
  };
  using pool = detail::node_pool<node>;

  static node* new_node() {
    node* n = pool::acquire();
    n->flag.reset();
    n->next.store(nullptr, std::memory_order_relaxed);  // published by the tail exchange
    return n;
  }

  // Out of line: the uncontended lock() is one exchange and should inline.
  [[gnu::noinline]] void lock_slow(node* self, node* pred) {
    // release: our node (reset flag) must be visible before the predecessor
    // can grant it; pairs with the acquire load in unlock().
    pred->next.store(self, std::memory_order_release);
    self->flag.await(policy_);
  }

  [[gnu::noinline]] node* wait_for_successor(node* self) {
    node* succ = nullptr;
    spin_yield_until<R>(policy_, [&] { return (succ = self->next.load(std::memory_order_acquire)) != nullptr; });
    return succ;
  }

  alignas(detail::cache_line_size) std::atomic<node*> tail_{nullptr};  // last queued node. RMW by lock/try_lock/unlock
  alignas(detail::cache_line_size) node* owner_node_ = nullptr;  // the holder's node: written after acquiring, read in unlock()
  wait_policy policy_;  // read-only after construction
};

}  // namespace fibersync
