// node_pool.hpp: where queue locks get their per-waiter nodes.
//
// A user never passes a queue node, so each lock() takes one from a pool and
// the node goes back when nobody references it any more. Each carrier (OS
// thread) keeps a private free list; a node may be taken on one carrier and
// returned on another (an LT can migrate while it holds a lock), which is
// fine because each list is touched only by its own thread and never across a
// yield. When a thread exits, its nodes move to one process-wide list instead
// of being freed: memory of a node type is never returned to the allocator
// (type-stable memory), so a racing reader that still holds a stale node
// pointer (CLH's try_lock) reads a valid node, never freed memory.
#pragma once

#include <mutex>
#include <new>

#include "fibersync/detail/carrier_local.hpp"

namespace fibersync::detail {

// Node must have a `Node* pool_next` member and be default-constructible.
template <class Node>
class node_pool {
 public:
  static Node* acquire() {
    free_list& local = local_list();
    if (local.head == nullptr) local.refill();
    if (Node* n = local.head) {
      local.head = n->pool_next;
      --local.count;
      return n;
    }
    return new Node{};
  }

  static void release(Node* n) noexcept {
    free_list& local = local_list();
    n->pool_next = local.head;
    local.head = n;
    ++local.count;
  }

 private:
  struct shared_list {
    std::mutex guard;
    Node* head = nullptr;
  };

  static shared_list& shared() noexcept {
    // Never destroyed: threads may still exit (and hand their nodes over)
    // during static destruction.
    static shared_list* list = new shared_list{};
    return *list;
  }

  struct free_list {
    Node* head = nullptr;
    unsigned count = 0;

    void refill() {
      shared_list& s = shared();
      std::lock_guard<std::mutex> g(s.guard);
      // Take a handful at once so that a thread allocating in a loop visits
      // the shared list rarely.
      for (unsigned i = 0; i < 16 && s.head != nullptr; ++i) {
        Node* n = s.head;
        s.head = n->pool_next;
        n->pool_next = head;
        head = n;
        ++count;
      }
    }

    ~free_list() {
      if (head == nullptr) return;
      Node* last = head;
      while (last->pool_next != nullptr) last = last->pool_next;
      shared_list& s = shared();
      std::lock_guard<std::mutex> g(s.guard);
      last->pool_next = s.head;
      s.head = head;
    }
  };

  // Not inlined: the thread_local must be looked up on the carrier that runs
  // the caller now, never cached from before a yield (DESIGN.md section 7).
  FIBERSYNC_CARRIER_LOCAL static free_list& local_list() noexcept {
    thread_local free_list list;
    return list;
  }
};

}  // namespace fibersync::detail
