// clh.hpp: clh_mutex<R>, the CLH queue lock for lightweight threads.
//
// Algorithm: the queue is implicit: each waiter swaps its node into `tail_`
//   and waits on the flag of the node it displaced (its predecessor's); unlock()
//   grants the holder's own node, which its successor is watching. The
//   predecessor's node, now unreferenced, is recycled by the new holder.
// Paper: T. S. Craig, "Building FIFO and Priority-Queuing Spin Locks from
//   Atomic Swap", TR 93-02-02, U. Washington, 1993; P. Magnusson, A. Landin,
//   E. Hagersten, "Queue Locks on Cache Coherent Multiprocessors", IPPS 1994.
// Fairness: FIFO among queued LTs; try_lock succeeds only when no LT holds or
//   waits.
// Waits: lock() on the predecessor's node (spin -> yield -> suspend, with the
//   park/grant handshake of wait/handover.hpp). unlock() never waits.
// try_lock reads the tail node and swaps in its own only if the tail was
//   released; a CAS that succeeds on a tail node recycled in between (ABA,
//   needing a complete hand-over and re-enqueue of that very node between two
//   adjacent instructions) leaves it queued, and it then waits out that one
//   hand-over: mutual exclusion holds, try_lock may wait in that rare case.
//   Node memory is type-stable (detail/node_pool.hpp), so the read is safe.
// Space: two cache lines per mutex plus one node; one pooled node per waiting
//   or holding LT.
// Not reentrant. Meets Lockable.
#pragma once

#include <atomic>

#include "fibersync/detail/cache_line.hpp"
#include "fibersync/detail/node_pool.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/handover.hpp"
#include "fibersync/wait/wait_policy.hpp"

namespace fibersync {

template <runtime R>
class clh_mutex {
 public:
  clh_mutex() : clh_mutex(default_wait_policy<R>()) {}
  explicit clh_mutex(const wait_policy& policy) : policy_(policy) {
    node* released = pool::acquire();
    released->flag.reset(handover_flag<R>::granted);  // the queue starts free
    tail_.store(released, std::memory_order_relaxed);
  }
  clh_mutex(const clh_mutex&) = delete;
  clh_mutex& operator=(const clh_mutex&) = delete;
  // Precondition: unlocked. Then the tail node is released and unreferenced.
  ~clh_mutex() { pool::release(tail_.load(std::memory_order_relaxed)); }

  void lock() {
    node* self = new_node();
    // acq_rel: release publishes our node's reset flag to our successor;
    // acquire makes the predecessor's node state valid to read.
    node* pred = tail_.exchange(self, std::memory_order_acq_rel);
    if (!pred->flag.is_granted()) lock_slow(pred);
    pool::release(pred);  // unreferenced: its owner granted it and left
    owner_node_ = self;
  }

  bool try_lock() {
    node* pred = tail_.load(std::memory_order_acquire);
    if (!pred->flag.is_granted()) return false;
    node* self = new_node();
    if (!tail_.compare_exchange_strong(pred, self, std::memory_order_acq_rel, std::memory_order_relaxed)) {
      pool::release(self);
      return false;
    }
    if (!pred->flag.is_granted()) lock_slow(pred);  // the ABA case described above
    pool::release(pred);
    owner_node_ = self;
    return true;
  }

  void unlock() {
    // The successor (or the next arrival) owns the node from here on.
    owner_node_->flag.grant();
  }

 private:
  struct alignas(detail::cache_line_size) node {
    handover_flag<R> flag;      // granted when the LT that enqueued this node unlocks
    node* pool_next = nullptr;  // free-list link, used only while pooled
  };
  using pool = detail::node_pool<node>;

  static node* new_node() {
    node* n = pool::acquire();
    n->flag.reset();  // published by the tail exchange
    return n;
  }

  [[gnu::noinline]] void lock_slow(node* pred) { pred->flag.await(policy_); }

  alignas(detail::cache_line_size) std::atomic<node*> tail_{nullptr};  // last enqueued node. RMW by lock/try_lock
  alignas(detail::cache_line_size) node* owner_node_ = nullptr;  // the holder's node: written after acquiring, read in unlock()
  wait_policy policy_;  // read-only after construction
};

}  // namespace fibersync
