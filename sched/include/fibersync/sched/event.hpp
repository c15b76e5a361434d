// event.hpp: fibersync::sched::event, the scheduler's blocking primitive, in
// three interchangeable architectures chosen at run time (DESIGN.md 4; the
// seed's architectures A0, A1, A2).
//
// Semantics (all three): a manual-reset event. set() makes it set and
// releases every uthread waiting at that moment; wait() returns at once while
// it is set, else blocks until a later set(); reset() makes it unset (waiters
// already released by an earlier set() stay released: no lost wake-up even
// when reset() follows set() immediately). set()/reset()/is_set() may be
// called from any thread; wait() from a uthread of the event's scheduler (on
// a plain OS thread it polls with sched_yield). The event must outlive every
// call on it, including a set() whose waiters already returned.
//
//   arch::a0  OS-mediated. The event is a kernel object (an eventfd,
//             readable while set): wait(), set(), reset() and is_set() are
//             each a system call on it, as the seed's OS events are. A
//             blocked uthread is registered under an OS mutex; set() queues
//             the released uthreads on the scheduler's one process-wide
//             completion list and writes the scheduler's completion eventfd;
//             carriers read that eventfd and drain the list into their ready
//             queues (the path of a uthread blocked in the kernel in the
//             seed's UMS design, figure 1). One file descriptor per event.
//   arch::a1  Scheduler-wide blocked queue (seed figure 2). The event holds
//             set/unset plus a generation; a blocked uthread goes to the one
//             blocked queue of the scheduler and its carrier registers with
//             the event; set() notifies every registered carrier, which scans
//             the whole blocked queue for the uthreads it blocked whose event
//             has been set since.
//   arch::a2  Per-event wait queue, no lock (seed figure 4). State machine
//             below; set() moves its waiters straight to the ready queues of
//             their carriers.
//
// A2 state word (one std::atomic<std::uintptr_t>):
//
//     bits 0-1  phase: UNSET=0 | SET=1 | SETTING=2
//     bit  2    RESET_PENDING (only with SETTING): a reset() arrived while
//               the setter was releasing waiters
//     bits 3-47 head of the LIFO stack of blocked uthreads (UNSET only; the
//               uthread* itself, 8-byte aligned)
//     bits 48-63 JOINING count: uthreads that decided to block and whose
//               carriers have not yet linked them in
//
//               wait(): phase==UNSET, JOINING+1, switch out
//        +-------------------------------------------+
//        |                                           v
//   +---------+  carrier links T (CAS head=T,      +---------+
//   |  UNSET  |  JOINING-1) <--------------------  | JOINING |  (UNSET with
//   | (queue) |                                    |  k > 0  |   count k)
//   +---------+ ------ set(): CAS detach queue --> +---------+
//     ^    ^                         |
//     |    |                         v
//     |    |   reset() while   +-----------+ releases the detached waiters to
//     |    +-- RESET_PENDING --|  SETTING  | their carriers' ready queues, then
//     |        (end of set)    +-----------+ CAS to SET (or UNSET if RESET_PENDING)
//     |                              |
//     +------ reset(): CAS ------ +-----+ <-+
//                                 | SET |   set(): no-op; wait(): returns
//                                 +-----+
//   A joiner whose carrier finds phase SET or SETTING (a set() overtook it)
//   decrements JOINING and runs the uthread again instead of linking it.
//   SETTING|RESET_PENDING is logically unset: wait() blocks (joins) there;
//   such a "strict" joiner's carrier repeats its link once the setter left
//   SETTING instead of being released by it.
//
//   INV1 (no lost wake-up): a uthread is linked only by a CAS that saw
//     phase==UNSET, and set() detaches the whole stack with the CAS that
//     leaves UNSET; so every linked uthread is detached by exactly one set().
//   INV2: while SETTING, only the setter that entered it touches the detached
//     waiters; other setters and waiters return at once, resets leave
//     RESET_PENDING (a later set() in the window clears it again).
//   INV3: JOINING counts are carried unchanged across set/reset, so the count
//     is exact; a destroyed event must have JOINING==0 and an empty stack.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

namespace fibersync::sched {

class scheduler;
class uthread;

enum class arch { a0, a1, a2 };
std::string_view to_string(arch a) noexcept;
bool parse_arch(std::string_view s, arch& out) noexcept;

namespace detail {
struct sched_impl;
struct carrier;
// One architecture. enqueue_blocked() runs on the carrier after the waiter
// switched out: it returns false when the event was set meanwhile (the
// carrier then runs the waiter again).
class event_impl {
 public:
  virtual ~event_impl() = default;
  virtual void wait() = 0;  // from a uthread
  virtual void set() = 0;
  virtual void reset() = 0;
  virtual bool is_set() const noexcept = 0;
  virtual bool enqueue_blocked(carrier& c, uthread* t) = 0;
  // A1 only, called by carrier c's scan for a uthread c blocked at
  // generation gen: whether it may go; if not, keeps c registered for the
  // next set().
  virtual bool released_or_register(carrier& /*c*/, std::uint64_t /*gen*/) noexcept { return false; }
};
}  // namespace detail

class event {
 public:
  event(scheduler& s, arch a, bool initially_set = false);
  ~event();
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  void set();
  void reset();
  void wait();
  bool is_set() const noexcept;
  arch architecture() const noexcept { return arch_; }

 private:
  arch arch_;
  std::unique_ptr<detail::event_impl> impl_;
};

}  // namespace fibersync::sched
