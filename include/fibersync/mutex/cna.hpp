// cna.hpp: cna_mutex<R>, the compact NUMA-aware lock.
//
// Algorithm: an MCS queue in which every node records its NUMA node. At
//   unlock, the holder looks down the queue for the first waiter from its own
//   node, moves the remote waiters it skipped to a secondary queue, and hands
//   the lock to that local waiter; the secondary queue travels with the lock
//   (its ends live in the holder's node). When no local waiter is queued, or
//   after `local_limit` consecutive local hand-overs, the secondary queue is
//   put back in front of the main queue and the lock goes to its head.
// Paper: D. Dice, A. Kogan, "Compact NUMA-aware Locks", EuroSys 2019.
// Fairness: bounded unfairness. A waiter is bypassed by at most
//   `local_limit` (default 64) consecutive hand-overs inside another node
//   before the secondary queue is flushed; FIFO among same-node waiters.
//   (The paper's threshold is probabilistic; ours is a counter, so the bound
//   is exact.) try_lock succeeds only on an empty queue.
// Waits: lock() on its own node (spin -> yield -> suspend, park/grant
//   handshake); unlock() while a successor is still linking in (spin -> yield).
// Space: one pointer per mutex (on its own cache line) like MCS; one pooled
//   node per waiting or holding LT.
// Not reentrant. Meets Lockable.
#pragma once

#include <atomic>
#include <cstdint>

#include "fibersync/detail/cache_line.hpp"
#include "fibersync/detail/node_pool.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/topology/topology.hpp"
#include "fibersync/wait/handover.hpp"
#include "fibersync/wait/wait_policy.hpp"
#include "fibersync/wait/waiter.hpp"

namespace fibersync {

template <runtime R>
class cna_mutex {
 public:
  static constexpr std::uint32_t default_local_limit = 64;

  cna_mutex() : cna_mutex(default_wait_policy<R>()) {}
  explicit cna_mutex(const wait_policy& policy, std::uint32_t local_limit = default_local_limit)
      : policy_(policy), topology_(&topology::current()), local_limit_(local_limit) {}
  cna_mutex(const cna_mutex&) = delete;
  cna_mutex& operator=(const cna_mutex&) = delete;

  void lock() {
    node* self = new_node();
    node* pred = tail_.exchange(self, std::memory_order_acq_rel);  // as in mcs_mutex::lock()
    if (pred != nullptr) lock_slow(self, pred);
    owner_node_ = self;
  }

  bool try_lock() {
    node* self = new_node();
    node* expected = nullptr;
    if (tail_.compare_exchange_strong(expected, self, std::memory_order_acq_rel, std::memory_order_relaxed)) {
      owner_node_ = self;
      return true;
    }
    pool::release(self);
    return false;
  }

  void unlock() {
    node* self = owner_node_;
    node* sec_head = self->sec_head;
    node* sec_tail = self->sec_tail;
    node* succ = self->next.load(std::memory_order_acquire);
    if (succ == nullptr) {
      node* expected = self;
      if (sec_head == nullptr) {
        if (tail_.compare_exchange_strong(expected, nullptr, std::memory_order_release, std::memory_order_relaxed)) {
          pool::release(self);
          return;
        }
      } else if (tail_.compare_exchange_strong(expected, sec_tail, std::memory_order_acq_rel,
                                               std::memory_order_relaxed)) {
        // The main queue was empty: the secondary queue becomes the queue
        // (sec_tail->next is null, so new arrivals link behind it).
        hand_to(sec_head, nullptr, nullptr, 0);
        pool::release(self);
        return;
      }
      succ = wait_for_successor(self);
    }
    if (self->local_passes < local_limit_) {
      // Find the first waiter of our node; the remote ones before it move to
      // the secondary queue. Only linked nodes are visited: a null link ends
      // the search (that waiter is the tail or still linking in).
      node* skipped_last = nullptr;
      node* cur = succ;
      while (cur != nullptr && cur->numa_node != self->numa_node) {
        skipped_last = cur;
        cur = cur->next.load(std::memory_order_acquire);
      }
      if (cur != nullptr) {
        if (skipped_last != nullptr) {
          // skipped_last is not the tail (cur follows it): nobody else writes its link.
          skipped_last->next.store(nullptr, std::memory_order_relaxed);
          if (sec_head == nullptr) {
            sec_head = succ;
          } else {
            sec_tail->next.store(succ, std::memory_order_relaxed);
          }
          sec_tail = skipped_last;
        }
        hand_to(cur, sec_head, sec_tail, self->local_passes + 1);
        pool::release(self);
        return;
      }
    }
    // No local waiter, or the bound is reached: the secondary queue goes first.
    if (sec_head != nullptr) {
      sec_tail->next.store(succ, std::memory_order_relaxed);
      hand_to(sec_head, nullptr, nullptr, 0);
    } else {
      hand_to(succ, nullptr, nullptr, 0);
    }
    pool::release(self);
  }

 private:
  struct alignas(detail::cache_line_size) node {
    handover_flag<R> flag;             // granted by the previous holder
    std::atomic<node*> next{nullptr};  // main- or secondary-queue link; written by successor or holder
    unsigned numa_node = 0;            // written by the owner before queueing
    // Written by the previous holder before grant(), read by this node's owner
    // while it holds the lock (grant/is_granted order them):
    node* sec_head = nullptr;          // secondary queue of skipped remote waiters
    node* sec_tail = nullptr;
    std::uint32_t local_passes = 0;    // consecutive same-node hand-overs so far
    node* pool_next = nullptr;
  };
  using pool = detail::node_pool<node>;

  node* new_node() {
    node* n = pool::acquire();
    n->flag.reset();
    n->next.store(nullptr, std::memory_order_relaxed);
    n->numa_node = topology_->current_place().node;
    n->sec_head = n->sec_tail = nullptr;
    n->local_passes = 0;
    return n;
  }

  static void hand_to(node* next_owner, node* sec_head, node* sec_tail, std::uint32_t local_passes) {
    next_owner->sec_head = sec_head;
    next_owner->sec_tail = sec_tail;
    next_owner->local_passes = local_passes;
    next_owner->flag.grant();  // release: publishes the three fields above
  }

  [[gnu::noinline]] void lock_slow(node* self, node* pred) {
    pred->next.store(self, std::memory_order_release);
    self->flag.await(policy_);
  }

  [[gnu::noinline]] node* wait_for_successor(node* self) {
    node* succ = nullptr;
    spin_yield_until<R>(policy_, [&] { return (succ = self->next.load(std::memory_order_acquire)) != nullptr; });
    return succ;
  }

  alignas(detail::cache_line_size) std::atomic<node*> tail_{nullptr};  // main queue tail
  alignas(detail::cache_line_size) node* owner_node_ = nullptr;        // holder's node, written after acquiring
  wait_policy policy_;                                                 // read-only after construction
  const topology* topology_;
  std::uint32_t local_limit_;
};

}  // namespace fibersync
