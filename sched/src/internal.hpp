// internal.hpp: the scheduler's private types, shared by scheduler.cpp and
// the three event architectures. Not installed.
#pragma once

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "fibersync/detail/carrier_local.hpp"
#include "fibersync/sched/event.hpp"
#include "fibersync/wait/cpu_relax.hpp"
#include "fibersync/sched/scheduler.hpp"

namespace fibersync::sched {

namespace detail {

using fibersync::cpu_relax;

// Tiny TTAS spinlock: critical sections are a few pointer writes.
class spinlock {
 public:
  void lock() noexcept {
    while (flag_.exchange(true, std::memory_order_acquire)) {  // acquire: pairs with unlock's release
      while (flag_.load(std::memory_order_relaxed)) (cpu_relax)();
    }
  }
  bool try_lock() noexcept { return !flag_.load(std::memory_order_relaxed) && !flag_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { flag_.store(false, std::memory_order_release); }  // release: pairs with lock's acquire

 private:
  std::atomic<bool> flag_{false};
};

// What a uthread asks its carrier to do once its context is saved.
enum class action : std::uint8_t { none, yield, park, block, finished };

// Intrusive FIFO of uthreads (uthread::next_).
struct uqueue {
  uthread* head = nullptr;
  uthread* tail = nullptr;
  std::size_t size = 0;
  void push(uthread* t) noexcept;
  uthread* pop() noexcept;
  bool empty() const noexcept { return head == nullptr; }
};

// The scheduler accepts 1..max_carriers carriers (per-carrier arrays below).
inline constexpr std::size_t max_carriers = 64;

struct alignas(64) carrier {
  unsigned index = 0;
  sched_impl* owner = nullptr;
  spinlock lock;                        // guards ready
  uqueue ready;                         // written under lock by anyone
  std::atomic<std::size_t> ready_size{0};   // hint for stealers/idle checks, relaxed
  boost::context::fiber main;           // this carrier's loop, while a uthread runs
  std::atomic<std::uint32_t> wake_seq{0};   // futex word: bumped by wakers
  std::atomic<bool> sleeping{false};    // written by this carrier, read by wakers (seq_cst Dekker with push)
  std::atomic<bool> scan_requested{false};  // A1: an event this carrier registered with was set
  std::atomic<std::uint64_t> runs{0};
  std::atomic<bool> last_push_was_yield{false};  // under lock; a hint for thieves, relaxed
  // Stealing a lone yielder (find_work): per other carrier, how many of our
  // looks in a row found its queue non-empty. Ours only.
  std::uint32_t nonempty_looks[max_carriers] = {};
  std::thread thread;
};

// Looks in a row at another carrier's non-empty queue before an idle
// carrier steals a lone uthread that yielded (each look is one pass of
// find_work and one pause: a few microseconds in all).
inline constexpr std::uint32_t steal_patience = 64;

struct sched_impl {
  scheduler_options options;
  std::vector<std::unique_ptr<carrier>> carriers;
  std::atomic<std::size_t> live{0};     // spawned, not finished; futex-waited by wait_idle
  std::atomic<std::uint32_t> live_epoch{0};
  std::atomic<bool> stop{false};
  std::atomic<unsigned> sleepers{0};
  std::atomic<unsigned> next_spawn{0};
  std::atomic<std::uint64_t> steals{0};
  std::atomic<std::uint64_t> sleeps{0};

  // A0: the one process-wide completion list, fed by event setters after a
  // system call (eventfd write), drained by carriers into their ready queues.
  int completion_fd = -1;
  std::mutex completion_mutex;          // an OS mutex on purpose: A0 is OS-mediated
  uqueue completions;
  std::atomic<bool> completions_pending{false};

  // Stacks of finished uthreads, reused by later spawns: unmapping a guarded
  // stack costs a TLB shoot-down on every CPU the process ran on, which at
  // thousands of short-lived uthreads dominated the end of a run. Freed in
  // ~scheduler.
  spinlock stack_lock;
  std::vector<boost::context::stack_context> stack_pool;
  ~sched_impl();

  // A1: the one scheduler-wide blocked queue.
  spinlock blocked_lock;
  uqueue blocked;

  void make_ready(uthread* t);                 // push on t's carrier's queue, wake
  void push_ready(carrier& c, uthread* t, bool by_yield = false);
  // Appends a whole list to c's ready queue: one lock, one fence, at most
  // one wake-up for the batch.
  void push_ready_batch(carrier& c, uqueue q);
  void wake(carrier& c);
  void wake_any();
  void run_carrier(carrier& c);
  uthread* find_work(carrier& c);
  void run(carrier& c, uthread* t);
  void after_switch(carrier& c, uthread* t);
  void drain_completions(carrier& c);
  void scan_blocked(carrier& c);
  void finished(uthread* t);
};

}  // namespace detail

class uthread {
 public:
  static constexpr std::uint32_t k_empty = 0;   // no permit, running or about to park
  static constexpr std::uint32_t k_permit = 1;  // a resume arrived before the suspend
  static constexpr std::uint32_t k_parked = 2;  // parked with a saved context (INV2)

  static constexpr std::uintptr_t k_join_none = 0;     // nobody joins yet
  static constexpr std::uintptr_t k_join_os = 1;       // an OS thread waits on the futex
  static constexpr std::uintptr_t k_join_done = 2;     // finished

  detail::sched_impl* sched = nullptr;
  std::function<void()> fn;
  boost::context::fiber ctx;                  // saved context while not running
  detail::carrier* home = nullptr;            // carrier it last ran on (written by that carrier)
  uthread* next = nullptr;                    // link in exactly one queue at a time
  const char* stack_hint = nullptr;           // near its saved context (switch_out's frame); prefetch hint
  detail::action pending = detail::action::none;  // written by the uthread before switching out
  detail::event_impl* blocking_on = nullptr;  // with action::block
  std::uint64_t block_gen = 0;                // A0/A1: event generation seen when blocking
  std::atomic<std::uint32_t> permit{k_empty};
  std::atomic<std::uintptr_t> join_word{k_join_none};  // k_join_* or the joining uthread*
  std::atomic<std::uint32_t> join_futex{0};  // 1 once finished; futex word of an OS-thread joiner
  std::atomic<int> refs{2};                   // the task handle + the running uthread
  std::exception_ptr error;

  void release_ref() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;  // acq_rel: last owner sees all writes
  }
};

namespace detail {
// Stack allocator of the uthreads: guarded stacks (protected_fixedsize_stack)
// taken from and given back to the scheduler's pool.
class pooled_stack {
 public:
  pooled_stack(sched_impl& s, std::size_t size) noexcept : s_(&s), size_(size) {}
  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context& sctx) noexcept;

 private:
  sched_impl* s_;
  std::size_t size_;
};

// Non-inlined accessors for carrier-local state (DESIGN.md section 7): a
// uthread may resume on another carrier after any switch.
FIBERSYNC_CARRIER_LOCAL carrier* current_carrier() noexcept;
FIBERSYNC_CARRIER_LOCAL uthread* current_uthread() noexcept;
// Saves the caller's context and returns control to its carrier's loop,
// which performs `what`. Returns when the uthread runs again.
void switch_out(action what);
long futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, long timeout_ns);
void futex_wake(std::atomic<std::uint32_t>* word, int count);
}  // namespace detail

}  // namespace fibersync::sched
