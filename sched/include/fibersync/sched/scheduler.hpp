// scheduler.hpp: fibersync::sched, a small M:N scheduler of user threads.
//
// M carrier OS threads (optionally pinned) run N user threads (uthreads),
// each on its own Boost.Context stack (protected_fixedsize_stack: a guard
// page below every stack; size configurable, 64 KiB by default, so 10 000
// uthreads take about 650 MiB of address space, little of it resident).
//
// API for users:
//   scheduler s({.carriers = 2});        // carriers start at once
//   task t = s.spawn([] { ... });        // callable from any thread
//   t.join();                            // from a uthread (parks it) or an OS thread (futex)
//   this_thread::yield() / suspend(); resume(h) (permit semantics, any thread)
//   ~scheduler() waits until every uthread has finished, then joins carriers.
// Preconditions (UB otherwise): yield/suspend/self are called from a
// uthread (yield from a plain OS thread falls back to sched_yield); a
// uthread* given to resume() names a uthread that has not finished.
//
// Implementation overview
//   Each carrier owns a FIFO ready queue (intrusive list under a tiny TTAS
//   spinlock). A carrier runs the front of its queue; when empty it drains the
//   A0 completion list and A1 scan requests, then steals the front of another
//   carrier's queue, spins briefly, and finally sleeps on its own futex word.
//   Anyone who makes a uthread ready pushes it onto the queue of the carrier
//   it last ran on and wakes that carrier, or another sleeping one to steal.
//   Popping a uthread prefetches the stack of the next one in the queue:
//   with thousands of uthreads, a switch is mostly misses on a cold stack.
//   A uthread never switches directly to another: it switches to its
//   carrier's loop with a pending action (yield, park, block on an event,
//   finished), and the carrier performs the action once the uthread's context
//   is saved. So a resumer can never schedule a uthread still running on its
//   stack (the race of Boost.Fiber issue 109 cannot happen here).
//
//   Permit word of a uthread (uthread::permit_):
//     k_empty --resume--> k_permit --suspend--> k_empty (returns at once)
//     k_empty --suspend: switch out, carrier CAS--> k_parked
//     k_parked --resume: CAS to k_empty, push ready--> (runs again)
//   INV1: only the CAS k_parked -> k_empty makes a parked uthread ready, so
//         each park is ended by exactly one resume.
//   INV2: k_parked is published by the carrier after the switch, so a uthread
//         in k_parked has a saved context.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace fibersync::sched {

class scheduler;
class uthread;  // opaque; a uthread* is the handle of native_runtime

struct scheduler_options {
  unsigned carriers = 1;              // carrier OS threads
  std::vector<int> cpus;              // carrier k pinned to cpus[k % size]; empty: not pinned
  std::size_t stack_size = 64 * 1024; // bytes per uthread stack (plus one guard page)
  unsigned idle_spin = 4000;          // empty polls before a carrier sleeps (about 20-50 us)
  bool stealing = true;               // idle carriers take work from others
};

// Join handle. Move-only; destroying a joinable task detaches it.
class task {
 public:
  task() = default;
  explicit task(uthread* t) : t_(t) {}
  task(task&& o) noexcept : t_(o.t_) { o.t_ = nullptr; }
  task& operator=(task&& o) noexcept;
  ~task() { if (t_ != nullptr) detach(); }
  bool joinable() const noexcept { return t_ != nullptr; }
  void join();    // waits for the uthread; rethrows its exception
  void detach();
  uthread* native_handle() const noexcept { return t_; }

 private:
  uthread* t_ = nullptr;
};

struct scheduler_stats {
  std::uint64_t steals = 0;     // uthreads taken from another carrier's queue
  std::uint64_t sleeps = 0;     // times a carrier went to sleep on its futex
  std::vector<std::uint64_t> runs_per_carrier;  // context switches into uthreads per carrier
};

namespace detail {
struct carrier;
struct sched_impl;
}  // namespace detail

class scheduler {
 public:
  explicit scheduler(const scheduler_options& options = {});
  ~scheduler();  // waits for every uthread, then stops and joins the carriers
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  // Starts fn in a new uthread. From a uthread of this scheduler: queued on
  // the caller's carrier; from elsewhere: carriers in round-robin order.
  task spawn(std::function<void()> fn);
  task spawn_on(unsigned carrier, std::function<void()> fn);

  unsigned carriers() const noexcept;
  std::size_t live() const noexcept;  // uthreads spawned and not finished
  void wait_idle();                   // from an OS thread: until live() == 0
  scheduler_stats stats() const;

  detail::sched_impl& impl() noexcept { return *impl_; }

 private:
  std::unique_ptr<detail::sched_impl> impl_;
};

// Makes h ready (permit semantics). Any thread, uthread or not.
void resume(uthread* h);

namespace this_thread {
uthread* self() noexcept;          // nullptr on a plain OS thread
bool in_uthread() noexcept;
void yield();
void suspend();
unsigned carrier() noexcept;       // index of the carrier running the caller in its scheduler (0 outside)
unsigned carrier_id() noexcept;    // process-wide unique id of the carrier OS thread (any OS thread gets one)
}  // namespace this_thread

}  // namespace fibersync::sched
