// numa_mcs.hpp: numa_mcs_mutex<R>, N MCS queues behind one TTAS word (the
// Java thesis' NUMA_MCS, the TTAS-MCS-N cohort lock).
//
// Algorithm: an LT queues in the MCS queue of its NUMA node (queue = node mod
//   N). The head of a queue (the node's leader) takes the global TTAS word.
//   At unlock, the holder passes the lock to its successor in the same queue
//   *with the global word still taken* (a cohort pass) up to `pass_limit`
//   times in a row, so the protected data stays in that node's caches. After
//   that, or with no local successor, it releases the global word: to the
//   waiting leader of the next queue in round-robin order if there is one
//   (the word then reads "reserved for queue q", and only that leader may
//   take it), else to whoever takes it first.
// Paper: D. Dice, V. J. Marathe, N. Shavit, "Lock Cohorting: A General
//   Technique for Designing NUMA Locks", PPoPP 2012 (C-TTAS-MCS); NUMA_MCS for
//   Java virtual threads from the thesis in seeds/001 (per-node MCS queues
//   behind a global CAS flag).
// Fairness: FIFO inside a node queue; across nodes a cohort keeps the lock for
//   at most `pass_limit` consecutive hand-overs (default 64), and the hand-off
//   to waiting leaders is round robin, so the bypass is bounded as in HMCS.
//   (A plain TTAS word has no such bound: measured on one carrier, a node's
//   next leader won the race every time and starved the other node.)
//   try_lock barges: it takes the global word if it is free (not reserved)
//   and its node queue is empty.
// Waits: lock() on its own node (spin -> yield -> suspend, park/grant
//   handshake), then, as a leader, on the global word (spin -> yield);
//   unlock() while a successor is still linking in (spin -> yield).
// Space: one cache line per queue (N) and one for the global word per mutex;
//   one pooled node per waiting or holding LT.
// Not reentrant. Meets Lockable.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "fibersync/detail/cache_line.hpp"
#include "fibersync/detail/node_pool.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/topology/topology.hpp"
#include "fibersync/wait/handover.hpp"
#include "fibersync/wait/wait_policy.hpp"
#include "fibersync/wait/waiter.hpp"

namespace fibersync {

template <runtime R>
class numa_mcs_mutex {
 public:
  static constexpr std::uint32_t default_pass_limit = 64;

  numa_mcs_mutex() : numa_mcs_mutex(default_wait_policy<R>()) {}
  // queues = 0: one queue per NUMA node of topology::current().
  explicit numa_mcs_mutex(const wait_policy& policy, unsigned queues = 0, std::uint32_t pass_limit = default_pass_limit)
      : policy_(policy),
        topology_(&topology::current()),
        queue_count_(queues != 0 ? queues : topology_->nodes()),
        pass_limit_(pass_limit),
        queues_(std::make_unique<queue[]>(queue_count_)) {}
  numa_mcs_mutex(const numa_mcs_mutex&) = delete;
  numa_mcs_mutex& operator=(const numa_mcs_mutex&) = delete;

  void lock() {
    const unsigned q = my_queue();
    node* self = new_node();
    // acq_rel: as in mcs_mutex::lock().
    node* pred = queues_[q].tail.exchange(self, std::memory_order_acq_rel);
    if (pred == nullptr || !wait_in_queue(self, pred)) {
      acquire_global(q);  // we lead this queue's cohort
      self->passes = 0;
    }
    owner_node_ = self;
    owner_queue_ = q;
  }

  bool try_lock() {
    const unsigned q = my_queue();
    if (queues_[q].tail.load(std::memory_order_relaxed) != nullptr) return false;
    std::uint32_t expected = word_free;
    if (global_.load(std::memory_order_relaxed) != word_free ||
        !global_.compare_exchange_strong(expected, word_taken, std::memory_order_acquire, std::memory_order_relaxed)) {
      return false;
    }
    owner_node_ = nullptr;  // held without a queue node: unlock() only releases the word
    return true;
  }

  void unlock() {
    node* self = owner_node_;
    if (self == nullptr) {
      release_global(my_queue());
      return;
    }
    queue& q = queues_[owner_queue_];
    node* succ = self->next.load(std::memory_order_acquire);
    if (succ == nullptr) {
      node* expected = self;
      if (q.tail.compare_exchange_strong(expected, nullptr, std::memory_order_release, std::memory_order_relaxed)) {
        release_global(owner_queue_);
        pool::release(self);
        return;
      }
      succ = wait_for_successor(self);
    }
    if (self->passes + 1 < pass_limit_) {
      succ->holds_global = true;  // a cohort pass: the global word stays taken
      succ->passes = self->passes + 1;
    } else {
      // succ will lead this queue: register it now, so that the leader of
      // another node, served first, hands the word back to it.
      q.leader_waiting.store(true, std::memory_order_relaxed);
      release_global(owner_queue_);  // let the other nodes' leaders in
      succ->holds_global = false;
    }
    succ->flag.grant();  // release: publishes holds_global/passes to succ
    pool::release(self);
  }

 private:
  struct alignas(detail::cache_line_size) node {
    handover_flag<R> flag;             // granted by the predecessor in the same queue
    std::atomic<node*> next{nullptr};  // written once by the successor
    bool holds_global = false;         // written by the predecessor before grant: lock passed with the global word
    std::uint32_t passes = 0;          // consecutive cohort passes before this node, same writer
    node* pool_next = nullptr;
  };
  using pool = detail::node_pool<node>;

  struct alignas(detail::cache_line_size) queue {
    std::atomic<node*> tail{nullptr};        // last node queued from this NUMA node
    std::atomic<bool> leader_waiting{false};  // its leader waits for the global word
  };

  // The global word: free, taken, or reserved for the leader of queue q.
  static constexpr std::uint32_t word_free = 0, word_taken = 1;
  static constexpr std::uint32_t reserved_for(unsigned q) noexcept { return 2 + q; }

  unsigned my_queue() const noexcept { return topology_->current_place().node % queue_count_; }

  static node* new_node() {
    node* n = pool::acquire();
    n->flag.reset();
    n->next.store(nullptr, std::memory_order_relaxed);
    n->holds_global = false;
    n->passes = 0;
    return n;
  }

  // Returns true if the lock was passed to us with the global word held.
  [[gnu::noinline]] bool wait_in_queue(node* self, node* pred) {
    pred->next.store(self, std::memory_order_release);
    self->flag.await(policy_);
    return self->holds_global;
  }

  [[gnu::noinline]] void acquire_global(unsigned q) {
    waiter<R> w(policy_);
    queues_[q].leader_waiting.store(true, std::memory_order_relaxed);
    for (;;) {
      std::uint32_t seen = global_.load(std::memory_order_relaxed);
      // acquire: pairs with the release store in release_global().
      if ((seen == word_free || seen == reserved_for(q)) &&
          global_.compare_exchange_strong(seen, word_taken, std::memory_order_acquire, std::memory_order_relaxed)) {
        break;
      }
      w.on_failure(/*may_suspend=*/false);
    }
    // Cleared before our unlock reads the flags (program order), and before
    // any later holder can (it acquires the word after we release it).
    queues_[q].leader_waiting.store(false, std::memory_order_relaxed);
  }

  // Hands the word to the first waiting leader after queue `from` (round
  // robin, `from` itself last), else frees it. A flag read as set belongs to
  // a leader still waiting: it is cleared only after taking the word, which
  // we hold, so the reservation is always taken up.
  void release_global(unsigned from) noexcept {
    for (unsigned i = 1; i <= queue_count_; ++i) {
      const unsigned q = (from + i) % queue_count_;
      if (queues_[q].leader_waiting.load(std::memory_order_relaxed)) {
        global_.store(reserved_for(q), std::memory_order_release);
        return;
      }
    }
    global_.store(word_free, std::memory_order_release);
  }

  [[gnu::noinline]] node* wait_for_successor(node* self) {
    node* succ = nullptr;
    spin_yield_until<R>(policy_, [&] { return (succ = self->next.load(std::memory_order_acquire)) != nullptr; });
    return succ;
  }

  alignas(detail::cache_line_size) std::atomic<std::uint32_t> global_{word_free};  // taken by the cohort holding the lock
  alignas(detail::cache_line_size) node* owner_node_ = nullptr;       // holder's node (nullptr after try_lock)
  unsigned owner_queue_ = 0;                                          // holder's queue, written after acquiring
  wait_policy policy_;                                                // read-only after construction
  const topology* topology_;
  unsigned queue_count_;
  std::uint32_t pass_limit_;
  std::unique_ptr<queue[]> queues_;
};

}  // namespace fibersync
