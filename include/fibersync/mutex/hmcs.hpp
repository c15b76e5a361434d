// hmcs.hpp: hmcs_mutex<R>, the hierarchical MCS lock.
//
// Algorithm: a tree of MCS locks, one level per topology level that has more
//   than one member (cache cluster, then NUMA node) plus the root. An LT queues
//   in the MCS lock of its cluster (the leaf). The head of a leaf queue leads
//   its cohort: it queues a node for the cohort in the parent lock, and so on
//   up to the root. At unlock, the holder passes the lock to its successor in
//   the same leaf queue *with every ancestor lock still held* (a cohort pass)
//   up to `pass_limit` times in a row. After that it releases the parent,
//   then tells its successor to acquire the parent itself; with no
//   successor it frees its own level first, then releases the parent, so
//   that the root's release is its last touch of the mutex (a cohort of the
//   same level that forms meanwhile gets no cohort pass one level up: it
//   waits its turn there). So the lock's data stays in one cluster's caches
//   for up to pass_limit critical sections, then moves on in FIFO order of
//   the cohorts.
// Paper: M. Chabbi, M. Fagan, J. Mellor-Crummey, "High Performance Locks for
//   Multi-level NUMA Systems", PPoPP 2015.
// Fairness: FIFO inside each queue, and the root is FIFO among cohorts, so
//   the bypass is bounded: a waiter sees at most the waiters ahead of it in its
//   own queue plus, per turn of its cohort, at most pass_limit hand-overs
//   inside each other cohort queued ahead (a pass_limit-bounded round robin).
//   On a flat machine there is one level: plain FIFO MCS. try_lock succeeds
//   only when every lock on its path is free.
// Waits: lock() on its own node, and as a cohort leader on its cohort's node
//   in the parent queue (spin -> yield -> suspend, park/grant handshake of
//   wait/handover.hpp); unlock() while a successor is still linking in (spin
//   -> yield).
// Space: per mutex, one cache line per lock of the tree (one per cluster,
//   per node and the root); one pooled node per waiting or holding LT, and
//   one per cohort queued in a parent lock (lock() takes one per level
//   before it queues anywhere and gives back those it did not use).
// Lifetime: the last holder may destroy it right after its unlock(), as a
//   std::mutex: no unlock() touches the mutex after the step that lets
//   another LT take it.
// Not reentrant. Meets Lockable.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "fibersync/detail/cache_line.hpp"
#include "fibersync/detail/node_pool.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/topology/topology.hpp"
#include "fibersync/wait/handover.hpp"
#include "fibersync/wait/wait_policy.hpp"
#include "fibersync/wait/waiter.hpp"

namespace fibersync {

template <runtime R>
class hmcs_mutex {
 public:
  static constexpr std::uint32_t default_pass_limit = 64;

  hmcs_mutex() : hmcs_mutex(default_wait_policy<R>()) {}
  explicit hmcs_mutex(const wait_policy& policy, std::uint32_t pass_limit = default_pass_limit)
      : policy_(policy), topology_(&topology::current()), pass_limit_(pass_limit == 0 ? 1 : pass_limit) {
    build_tree();
  }
  hmcs_mutex(const hmcs_mutex&) = delete;
  hmcs_mutex& operator=(const hmcs_mutex&) = delete;

  // Number of levels of the tree (1 on a flat machine, 3 with clusters and nodes).
  unsigned levels() const noexcept { return static_cast<unsigned>(levels_.size()); }

  void lock() {
    level_lock* leaf = my_leaf();
    node* path[max_levels];
    take_nodes(path);
    const unsigned used = acquire(leaf, path);
    give_back(path + used, levels() - used);
    owner_node_ = path[0];
    owner_leaf_ = leaf;
  }

  bool try_lock() {
    level_lock* leaf = my_leaf();
    node* path[max_levels];
    take_nodes(path);
    const unsigned used = try_acquire(leaf, path);
    give_back(path + used, levels() - used);
    if (used == 0) return false;
    owner_node_ = path[0];
    owner_leaf_ = leaf;
    return true;
  }

  void unlock() {
    node* self = owner_node_;
    release(owner_leaf_, self);
    pool::release(self);  // no one references our node after the release
  }

 private:
  struct level_lock;
  struct alignas(detail::cache_line_size) node {
    handover_flag<R> flag;             // granted by the predecessor in the same queue
    std::atomic<node*> next{nullptr};  // written once by the successor
    // The level whose cohort queued this node in its parent; nullptr for an
    // LT's leaf node. Written before the node is queued.
    const level_lock* child = nullptr;
    // Written by the predecessor before grant(), read by the owner after it:
    bool acquire_parent = false;       // the cohort ended: the new head must take the parent lock
    std::uint32_t passes = 0;          // consecutive cohort passes before this node
    node* pool_next = nullptr;
  };
  using pool = detail::node_pool<node>;

  // One MCS lock of the tree. `in_parent` is the pooled node with which this
  // lock's current cohort queued in (or holds) the parent lock. Only the
  // holder of this lock reads or writes it: the leader sets it once it holds
  // this lock and before it holds the parent, and the holder that ends the
  // cohort reads it before it frees or passes this lock. It is not embedded
  // in the level: when nobody waits here, release() frees this level before
  // the parent, and an LT that arrives then leads a new cohort and queues a
  // node of its own in the parent while ours is still there.
  struct alignas(detail::cache_line_size) level_lock {
    std::atomic<node*> tail{nullptr};
    level_lock* parent = nullptr;
    node* in_parent = nullptr;
  };

  void build_tree() {
    const topology& t = *topology_;
    // Leaf to root; a level with one member adds nothing but a hop.
    std::vector<unsigned> widths;
    if (t.clusters() > t.nodes()) widths.push_back(t.clusters());
    if (t.nodes() > 1) widths.push_back(t.nodes());
    widths.push_back(1);
    for (unsigned w : widths) levels_.push_back(std::make_unique<level_lock[]>(w));
    leaf_is_cluster_ = t.clusters() > t.nodes();
    for (size_t l = 0; l + 1 < widths.size(); ++l) {
      const bool cluster_level = leaf_is_cluster_ && l == 0;
      const bool parent_is_root = l + 2 == widths.size();
      for (unsigned i = 0; i < widths[l]; ++i) {
        const unsigned up = parent_is_root ? 0 : (cluster_level ? t.node_of_cluster(i) : i);
        levels_[l][i].parent = &levels_[l + 1][up];
      }
    }
  }

  level_lock* my_leaf() const noexcept {
    if (levels_.size() == 1) return &levels_[0][0];
    const topology::cpu_place& p = topology_->current_place();
    return &levels_[0][leaf_is_cluster_ ? p.cluster : p.node];
  }

  static void reset(node* n) noexcept {
    n->flag.reset();
    n->next.store(nullptr, std::memory_order_relaxed);  // published by the tail exchange
    n->acquire_parent = false;
    n->passes = 0;
    n->child = nullptr;
  }

  static node* new_node() {
    node* n = pool::acquire();
    reset(n);
    return n;
  }

  // Cluster, node, root.
  static constexpr unsigned max_levels = 3;

  // One node per level, taken before queueing anywhere: an allocation that
  // throws then leaves every level of the tree as it was (one that threw
  // while we held a level would leave it locked for good).
  void take_nodes(node** path) const {
    unsigned taken = 0;
    try {
      for (; taken < levels(); ++taken) path[taken] = new_node();
    } catch (...) {
      give_back(path, taken);
      throw;
    }
  }
  static void give_back(node* const* nodes, unsigned count) noexcept {
    for (unsigned i = 0; i < count; ++i) pool::release(nodes[i]);
  }

  // Takes `l` with path[0], and the parent locks with the next nodes of
  // `path` unless the cohort passes them along with `l`. Returns how many
  // nodes it queued.
  unsigned acquire(level_lock* l, node* const* path) {
    node* n = path[0];
    // acq_rel: as in mcs_mutex::lock().
    node* pred = l->tail.exchange(n, std::memory_order_acq_rel);
    if (pred != nullptr && !wait_in_queue(n, pred)) return 1;  // a cohort pass
    n->passes = 0;  // we start a cohort at this level
    if (l->parent == nullptr) return 1;
    l->in_parent = path[1];
    path[1]->child = l;
    return 1 + acquire(l->parent, path + 1);
  }

  // Returns true when the predecessor ended its cohort (acquire the parent).
  [[gnu::noinline]] bool wait_in_queue(node* self, node* pred) {
    // release: our reset node must be visible before the predecessor grants it.
    pred->next.store(self, std::memory_order_release);
    self->flag.await(policy_);
    return self->acquire_parent;
  }

  // As acquire(), without waiting: returns how many nodes it queued, or 0
  // when a lock on the path was taken (then every level it took is freed or
  // passed to a waiter that queued behind us, and no node of `path` is
  // referenced).
  unsigned try_acquire(level_lock* l, node* const* path) {
    node* n = path[0];
    node* expected = nullptr;
    if (!l->tail.compare_exchange_strong(expected, n, std::memory_order_acq_rel, std::memory_order_relaxed)) {
      return 0;
    }
    n->passes = 0;
    if (l->parent == nullptr) return 1;
    path[1]->child = l;
    if (const unsigned above = try_acquire(l->parent, path + 1)) {
      l->in_parent = path[1];
      return 1 + above;
    }
    // The parent is taken: give `l` back. A waiter that queued behind us in
    // the meantime leads the cohort and takes the parent itself.
    release_level(l, n, /*acquire_parent=*/true);
    return 0;
  }

  void release(level_lock* l, node* n) {
    if (l->parent == nullptr) {
      release_level(l, n, /*acquire_parent=*/false);  // the root passes FIFO, no limit
      return;
    }
    // acquire: pairs with the release store of the link in wait_in_queue().
    node* succ = n->next.load(std::memory_order_acquire);
    // Never a cohort pass to a node of the level that queued ours: that level
    // ended its cohort and was freed before this release (the case with
    // nobody waiting, below, one level down); its new cohort waits its turn
    // here like any other, as in the paper, where the parent goes first.
    const bool same_child = n->child != nullptr && succ != nullptr && succ->child == n->child;
    if (succ != nullptr && n->passes + 1 < pass_limit_ && !same_child) {
      succ->acquire_parent = false;  // the parent locks stay with the cohort
      succ->passes = n->passes + 1;
      succ->flag.grant();            // release: publishes the two fields above
      return;
    }
    // The cohort ends: free this level, or find the successor waiting here;
    // then release the parent; then hand this level to the successor.
    // - Nobody waits: the level goes first, because the root's release must
    //   be our last touch of the mutex (its next holder may unlock and
    //   destroy it at once). An LT that arrives meanwhile leads a new cohort
    //   and may queue behind our node in the parent; it gets no cohort pass
    //   there (`same_child` above).
    // - A successor waits: the parent goes first, as in the paper, so that
    //   the successor's new cohort queues there behind the cohorts already
    //   waiting. The grant after it touches only the successor's node, and
    //   the successor is still inside lock(): nobody may destroy the mutex.
    node* up = l->in_parent;
    node* waiting = free_or_successor(l, n, succ);
    release(l->parent, up);
    pool::release(up);  // no one references it after its release
    if (waiting != nullptr) hand_to(waiting, /*acquire_parent=*/true);
  }

  // Plain MCS release of one level.
  void release_level(level_lock* l, node* n, bool acquire_parent) {
    // acquire: pairs with the release store of the link in wait_in_queue().
    if (node* succ = free_or_successor(l, n, n->next.load(std::memory_order_acquire))) hand_to(succ, acquire_parent);
  }

  // With no successor linked behind n (`succ` null), frees `l` and returns
  // null, unless one is queueing: then, as otherwise, returns the successor.
  node* free_or_successor(level_lock* l, node* n, node* succ) {
    if (succ != nullptr) return succ;
    node* expected = n;
    // release: pairs with the acquire of the next exchange on this tail.
    if (l->tail.compare_exchange_strong(expected, nullptr, std::memory_order_release, std::memory_order_relaxed)) {
      return nullptr;
    }
    return wait_for_successor(n);
  }

  // Hands a level to `succ` outside a cohort pass: it counts passes anew,
  // and with acquire_parent it must take the parent lock itself.
  static void hand_to(node* succ, bool acquire_parent) noexcept {
    succ->acquire_parent = acquire_parent;
    succ->passes = 0;
    succ->flag.grant();  // release: publishes the two fields above
  }

  [[gnu::noinline]] node* wait_for_successor(node* n) {
    node* succ = nullptr;
    spin_yield_until<R>(policy_, [&] { return (succ = n->next.load(std::memory_order_acquire)) != nullptr; });
    return succ;
  }

  alignas(detail::cache_line_size) node* owner_node_ = nullptr;  // holder's leaf node, written after acquiring
  level_lock* owner_leaf_ = nullptr;                             // holder's leaf lock (it may migrate meanwhile)
  wait_policy policy_;                                           // read-only after construction
  const topology* topology_;
  std::uint32_t pass_limit_;
  bool leaf_is_cluster_ = false;
  std::vector<std::unique_ptr<level_lock[]>> levels_;  // leaf level first, root last
};

}  // namespace fibersync
