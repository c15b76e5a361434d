// event_a1_blocked_queue.cpp: A1, one scheduler-wide blocked queue (seed
// figure 2).
//
// wait(): set -> return. Else the uthread records the generation and
// switches out; its carrier appends it to the scheduler's one blocked queue
// (sched_impl::blocked, under a spinlock), registers itself with the event
// (bit in carriers_), then re-checks the generation. set() bumps the
// generation, takes the registered carriers and asks each to scan; a
// scanning carrier walks the whole blocked queue and readies the uthreads it
// blocked whose event moved on (sched_impl::scan_blocked).
// No lost wake-up (Dekker): carrier = {RMW carriers_; load word_},
// setter = {RMW word_; RMW carriers_}, all seq_cst: either the carrier sees
// the new generation or the setter sees the carrier's bit.
// A registration can also be taken by an older set(): one that published
// generation g, stalled before collecting carriers_, and meanwhile let its
// waiter run, reset and block again at g, registering anew. That set() takes
// the new bit but releases nobody, and the set() of g+1 would find no bit.
// So whoever takes a bit asks that carrier to scan, and the scan registers
// again, with the same Dekker re-check, for each uthread it leaves blocked
// (released_or_register): while a uthread is blocked, its carrier's bit is in
// carriers_ or a scan of that carrier is pending.
#include "events.hpp"

namespace fibersync::sched::detail {
namespace {

class event_a1 final : public event_impl {
 public:
  explicit event_a1(sched_impl& s) : s_(s) {}

  void wait() override {
    const std::uint64_t w = word_.load(std::memory_order_seq_cst);
    if (w & k_set_bit) return;
    uthread* t = current_uthread();
    t->block_gen = generation(w);
    t->blocking_on = this;
    switch_out(action::block);
  }

  bool enqueue_blocked(carrier& c, uthread* t) override {
    s_.blocked_lock.lock();
    s_.blocked.push(t);
    s_.blocked_lock.unlock();
    carriers_.fetch_or(std::uint64_t{1} << c.index, std::memory_order_seq_cst);
    if (generation(word_.load(std::memory_order_seq_cst)) == t->block_gen) return true;
    // Set meanwhile: take it back out ourselves (only this carrier releases
    // the uthreads it blocked, and it is busy here).
    s_.blocked_lock.lock();
    uthread* prev = nullptr;
    for (uthread* x = s_.blocked.head; x != nullptr; prev = x, x = x->next) {
      if (x != t) continue;
      if (prev == nullptr) s_.blocked.head = x->next; else prev->next = x->next;
      if (s_.blocked.tail == x) s_.blocked.tail = prev;
      --s_.blocked.size;
      break;
    }
    s_.blocked_lock.unlock();
    t->next = nullptr;
    return false;
  }

  bool released_or_register(carrier& c, std::uint64_t gen) noexcept override {
    if (generation(word_.load(std::memory_order_acquire)) != gen) return true;
    // Still blocked. Our bit may have been taken by a set() of an earlier
    // generation (see the top of the file). A plain look first, since with
    // thousands of blocked uthreads most scans find the bit in place. All
    // seq_cst: a bit seen here was taken, if at all, by an exchange after
    // this load, whose scan request comes after the exchange that began
    // this scan, so another scan follows.
    const std::uint64_t bit = std::uint64_t{1} << c.index;
    if ((carriers_.load(std::memory_order_seq_cst) & bit) != 0) return false;
    carriers_.fetch_or(bit, std::memory_order_seq_cst);
    return generation(word_.load(std::memory_order_seq_cst)) != gen;
  }

  void set() override {
    std::uint64_t w = word_.load(std::memory_order_relaxed);
    do {
      if (w & k_set_bit) return;
    } while (!word_.compare_exchange_weak(w, ((generation(w) + 1) << 1) | k_set_bit, std::memory_order_seq_cst));
    std::uint64_t mask = carriers_.exchange(0, std::memory_order_seq_cst);
    while (mask != 0) {
      const unsigned k = static_cast<unsigned>(__builtin_ctzll(mask));
      mask &= mask - 1;
      carrier& c = *s_.carriers[k];
      // seq_cst: ordered after the exchange above, against find_work's
      // exchange and released_or_register's look at carriers_.
      c.scan_requested.store(true, std::memory_order_seq_cst);
      std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the sleep path's fence
      if (c.sleeping.load(std::memory_order_relaxed)) s_.wake(c);
    }
  }

  void reset() override { word_.fetch_and(~k_set_bit, std::memory_order_seq_cst); }

  bool is_set() const noexcept override { return word_.load(std::memory_order_acquire) & k_set_bit; }

 private:
  sched_impl& s_;
  std::atomic<std::uint64_t> word_{0};      // set bit + generation; any thread
  std::atomic<std::uint64_t> carriers_{0};  // carriers registered for a notification
};

}  // namespace

std::unique_ptr<event_impl> make_event_a1(sched_impl& s) { return std::make_unique<event_a1>(s); }

}  // namespace fibersync::sched::detail
