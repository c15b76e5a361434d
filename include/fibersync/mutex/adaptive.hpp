// adaptive.hpp: adaptive_mutex<R>, fibersync's own lock: competing waiters
// like TTAS, a parking queue for the ones that waited long, bounded barging.
//
// Algorithm: one 64-bit word = LOCKED | WOKEN | RESERVED | WOKEN_LOST |
//   FAST_HOLD, a count of competing and one of parked waiters, and the
//   holder's carrier (CPU on OS threads), noted by holds begun past waiters.
//   A hold begun on an idle mutex (word 0, no uncounted waiter, sampled holds
//   under 100 us) is a fast one: only its holder writes the word, and
//   unlock() frees it with a store, as TTAS does; a waiter behind it counts
//   itself in a second word instead and competes as in TTAS, never parking,
//   and the holds begun meanwhile are counted ones (on a cooperative runtime
//   fast ones too while waiters compete uncounted, below, nobody is counted
//   in the word and no uncounted waiter is due to count itself). A waiter first
//   spins briefly without a trace in the word (polling it, no yield, at
//   least 400 ns, and on a cooperative runtime about one sampled hold while
//   they average up to 2 us; there not beside a holder noted on its
//   carrier); on a cooperative runtime, while holds are short next to
//   wake-ups and holders do not yield beside it, it then competes uncounted, as
//   behind a fast hold, for up to the bounds a competing waiter has below;
//   then it counts itself and competes for the word with the runtime's wait
//   policy (spin -> yield), as in TTAS, and parks in a FIFO queue at its
//   first failed check made while another waiter competes. The exceptions
//   (the last competing waiter and the last awake one of a carrier keep
//   competing, and so does every waiter while holds are short next to
//   wake-ups, within long_wait_checks, and where idle carriers do not
//   steal, until it has competed 1 ms within its first 32 checks; on OS
//   threads a waiter beside its holder parks at once; on Boost.Fiber every
//   waiter parks while checks beside a holder that yielded are frequent,
//   gathers_waiters)
//   are the rules of the constants below (docs/ADAPTIVE.md, "Design").
//   unlock() frees the word and wakes the oldest parked waiter unless one
//   is already awake: the woken one (WOKEN), or, where idle carriers
//   steal, a competing one while the last woken waiter lost to one (Go's
//   spinners; where LTs are time-sliced, only one that failed a check
//   during the hold that ends); a woken waiter that loses re-parks at the
//   front. Where idle carriers do not steal, it wakes instead, out of turn,
//   the first of the next 8 waiters whose carrier has no awake waiter
//   left, while the oldest one's carrier has one (or is the holder's) and
//   no hand-off is due; that acquisition counts as passing the queue, and
//   that waiter re-parks at the back. There too, while the woken waiter has
//   not yet run, it wakes the oldest one beside it, as a competing waiter,
//   if that one was parked by the competition bound (a waiter a ready-queue
//   round from running). After `barge_limit` acquisitions
//   made while others waited, unlock() hands the lock to the woken (or
//   oldest parked) waiter (barge_limit: 32, or 256 where LTs are
//   time-sliced) if it has run and lost the word since its wake
//   (Go's rule); one that has not run may be a ready-queue round away, so
//   unlock() frees the word and yields instead, once every barge_limit such
//   acquisitions, and hands the lock to it whatever it did only after
//   barge_limit x patience_factor (1024; 8192 where time-sliced). The
//   yield matters: on a cooperative runtime an LT that re-locks without
//   ever waiting must yield, or the waiters behind it in its carrier's
//   ready queue never run (docs/ADAPTIVE.md, "Liveness"). While a hand-off
//   is due, unlock() wakes (or hands the lock to) the oldest parked waiter
//   even while others compete.
// Paper: ours, from measurements (docs/ADAPTIVE.md). Ingredients: TTAS; Go's
//   sync.Mutex (woken flag, front re-queue, hand-off to a waiter that lost);
//   the futex mutex's waiter count in the word (Drepper); qspinlock's one
//   spinner; Solaris' and Linux's adaptive mutexes (spin only while the
//   owner runs elsewhere).
// Fairness: a parked waiter is passed by at most about (parked ahead + 1) x
//   (barge_limit + 1) acquisitions when every waiter woken ahead of it runs
//   within barge_limit of them, and at most about (parked ahead + 1) x
//   (barge_limit x patience_factor + 1) in any case (on our scheduler it
//   can take that long: docs/ADAPTIVE.md, finding 19); before parking it
//   competes like TTAS (where idle carriers steal, for at most 256 failed
//   checks); behind a fast hold it waits uncounted until that hold ends,
//   and the holds try_lock() begins meanwhile count as passing it, as they
//   do while it competes uncounted first (within the same bounds: after
//   them its counted wait parks at its first failed check made while
//   another competes, or where idle carriers steal at its first, unless it
//   is its carrier's last awake waiter). Where
//   idle carriers do not steal, a waiter woken out of turn for an idle
//   carrier counts as passing the queue too, but may take a due hand-off
//   before the oldest is woken: there a turn can last about twice as long,
//   (parked ahead + 1) x (2 x barge_limit + 2); and a waiter woken out of
//   turn that loses re-parks at the back, its bound counted from there. A
//   waiter woken beside the woken one (wakes_beside_woken) is treated the
//   same: its acquisition counts as a barge, and if it loses it re-parks at
//   the back.
// Waits: lock() on the word (an unannounced spin of 2 x max_backoff
//   pauses and at least 400 ns, on a cooperative runtime one average
//   sampled hold while they average 0.4-2 us, unless beside the holder;
//   then, behind a fast hold, spin -> yield until it ends, never
//   suspending; uncounted
//   first where Algorithm says, spin -> yield within the bounds, never
//   suspending; then spin -> yield until it parks, as Algorithm says);
//   parked, on its own node (one
//   check, then suspend); the queue guard (spin -> yield, a few pointer
//   writes). unlock() yields once every barge_limit acquisitions past
//   waiters while a hand-off is due and nobody who has run can take it.
// Space: two cache lines per mutex (ten where idle carriers do not steal:
//   eight lines of awake counts);
//   one pooled node per parked LT. At most 2^27 - 1 competing and 2^24 - 1
//   parked LTs per mutex (the word's fields).
// Lifetime: the last holder may destroy it right after its unlock(), as a
//   std::mutex: every unlock() path touches the mutex last in one write of
//   the word, the store of a fast hold or an RMW (docs/ADAPTIVE.md,
//   "Lifetime").
// Not reentrant. Meets Lockable.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "fibersync/detail/cache_line.hpp"
#include "fibersync/detail/node_pool.hpp"
#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/cpu_relax.hpp"
#include "fibersync/wait/handover.hpp"
#include "fibersync/wait/wait_policy.hpp"
#include "fibersync/wait/waiter.hpp"

namespace fibersync {

namespace detail {
struct adaptive_mutex_access;  // tests only: see lock_not_fast()
}

template <runtime R>
class adaptive_mutex {
 public:
  // Where the kernel time-slices LTs, 256: there every hand-off is a futex
  // wake-up with the lock held for a thread that is not running, and
  // high-contention on OS threads (holds of 4-6 us) paid one every 33
  // acquisitions; with 256 the limit is about Go's 1 ms starvation
  // threshold in holds that short (docs/ADAPTIVE.md, finding 47).
  static constexpr std::uint32_t default_barge_limit = preemptive_v<R> ? 256 : 32;
  // After barge_limit x this many acquisitions past waiters, the lock goes
  // to the woken (or oldest parked) waiter even if it has not yet run.
  static constexpr std::uint32_t patience_factor = 32;
  // Where idle carriers steal, even the last competing waiter parks after
  // long_wait_checks failed checks (see lock_slow()), or after
  // short_wait_checks while this mutex's holds last at least
  // hold_to_wake_up times as long as its wake-ups, and long_hold_ns or more
  // (measured: see start_hold()). The floor keeps out the saturated holds
  // of 40-50 us whose waiters lost up to a third when they parked early
  // (docs/ADAPTIVE.md, finding 16): on our scheduler a wake-up takes 0.3 us
  // at the median, and the few that meet a sleeping carrier (~100 us) move
  // the average little (see add_bounded_sample()). Two checks, not 32:
  // with holds that long a waiter's chance to see the hold end within 30
  // more checks is small, and those checks (on OS threads 6 yields and
  // some 20-40 us of spinning) took CPU from the critical section's own
  // threads: paper-coop on OS threads ran at about 1.01 of the lock with
  // 32 (paired, 2-64 threads; at 4-64 threads 4-6 yields per acquisition
  // down to 0, and 0.80 CPU utilisation as std::mutex), on our scheduler
  // at 0.996-1.012 with 31 yields down to 1 (docs/ADAPTIVE.md, finding 35).
  static constexpr std::uint32_t long_wait_checks = 256;
  static constexpr std::uint32_t short_wait_checks = 2;
  static constexpr std::int64_t hold_to_wake_up = 16;
  static constexpr std::int64_t long_hold_ns = 100'000;
  // Where idle carriers steal, a competing waiter does not park because
  // another competes while this mutex's holds last less than a
  // 1/wake_up_to_hold of its wake-ups: it keeps competing, for up to
  // long_wait_checks failed checks (docs/ADAPTIVE.md, finding 18). Where
  // the kernel time-slices LTs, while they last less than
  // short_hold_wake_ups wake-ups: there each park costs the release that
  // wakes it a futex wake, a system call (and, in a virtual machine, an
  // interrupt to the other vCPU), and its CPU idles unless another thread
  // is ready, while a competing waiter's yield gives the CPU to any ready
  // thread, the holder among them. With a quarter of a wake-up,
  // poisson-hold on OS threads at 4 threads with holds 75-90% of the time
  // (7-14 us holds, 19-43 us wake-ups) parked 0.3 times per acquisition
  // and ran at 0.83-0.91 of ttas in two A/Bs; with half, 0.95-1.04
  // (finding 46). With half, poisson-rate at 4 threads and 10 locks per ms
  // (50 us holds) still parked 0.18 times per acquisition, kept 0.91 of
  // the CPUs busy and ran at 0.88-0.94 of ttas; with two wake-ups, 0.02
  // times, 0.99 of the CPUs, 0.96-1.07 of ttas: 1.07-1.15 of the lock with
  // half in five A/Bs on both topologies, the other OS-thread loads level
  // (finding 51). The park beside the holder has a threshold of its own
  // (wake_up_to_hold_beside).
  static constexpr std::int64_t wake_up_to_hold = 4;
  static constexpr std::int64_t short_hold_wake_ups = 2;
  // The park beside the holder (parks_beside_the_holder()) keeps a quarter
  // where LTs are time-sliced. At half it switched itself off in
  // high-contention once unlock() skipped the wake-ups that a watched hold
  // makes useless (watched_holds_skip_wake_ups): the few wake-ups left are
  // hand-offs, timed at 12-16 us against 4.6-6.2 us holds, and the waiters
  // beside the holder then competed, took its CPU at its yields, and made
  // its holds longer still (finding 47).
  static constexpr std::int64_t wake_up_to_hold_beside = 4;
  // Where the kernel time-slices LTs and idle carriers steal (OS threads),
  // unlock() does not wake a parked waiter while one competes that failed
  // a check during the hold that ends (see skips_wasted_wake_ups).
  static constexpr bool watched_holds_skip_wake_ups = idle_carriers_steal_v<R> && preemptive_v<R>;
  // The same rule where idle carriers do not steal (Boost.Fiber, Argobots,
  // and any runtime that does not say they do), while holds last less than
  // 1/own_carrier_wake_up_to_hold of the wake-ups. A woken LT waits there
  // for a round of its own carrier's ready queue, which no other carrier
  // shortens: in hot-handover (1.8-2.0 us holds) a wake-up took 2.5-3.7 us,
  // and a waiter woken at every other release lost to the other carrier's
  // and parked again (docs/ADAPTIVE.md, finding 21). Also while a wake-up
  // lasts many holds: a waiter parked there is a ready-queue round from
  // the lock when the hand-off rule gives it the lock, and the LTs that
  // need the lock meanwhile park behind the competing waiter and become
  // the next hand-offs' waiters (text-stats at 64 LTs: 0.002-0.004
  // suspends per acquisition and 0.71-0.83 of ttas, 0.00003 and 0.86-0.95
  // with no park there; finding 25).
  static constexpr std::int64_t own_carrier_wake_up_to_hold = 1;
  // There a waiter kept competing by that rule parks behind others once it
  // has competed for long_competition_ns (1 ms, Go's starvation threshold)
  // within long_competition_checks (32) checks of its second failed one:
  // its checks are then ready-queue rounds of other LTs' work, not of
  // waiters, and a wake-up is short next to the wait. In low-contention at
  // 64 LTs (384 us of work per LT between holds) a waiter kept checking for
  // up to long_wait_checks such rounds: 73-113 yields per acquisition (ttas 31), 4
  // with the bound, and 0.983-0.992 of the library's throughput ->
  // 1.000-1.012 (docs/ADAPTIVE.md, findings 38 and 39). A waiter whose checks
  // are quick is left to long_wait_checks: a bound in time alone cost
  // hot-handover on Boost.Fiber 1% (waits of a millisecond made of thousands of
  // short rounds). The clock is read at the second failed check (so a wait
  // that ends at its first reads none; finding 42) and at those 4, 8, 16
  // and 32 checks after it. The cost is fairness: more waiters wait parked,
  // served one per turn, while others barge (Jain index at 32 LTs there
  // 0.99 -> 0.65; the 99th-percentile wait 23 -> 44 ms at 32 LTs, 205 -> 107
  // ms at 64).
  static constexpr std::int64_t long_competition_ns = 1'000'000;
  static constexpr std::uint32_t long_competition_checks = 32;
  // Where the kernel time-slices LTs (OS threads) and the runtime says
  // which CPU runs the caller (R::cpu()), a waiter that finds its holder on
  // its own CPU parks at that failed check, even the last competing one,
  // once a wake-up has been timed and unless holds are short next to
  // wake-ups. Running there it only keeps the holder off that CPU until it
  // yields, and its yield may hand the CPU to another waiter rather than to
  // the holder. Under high contention on
  // OS threads (the critical section yields; 4-64 threads on 2 cores) 11-12
  // thousand failed checks per 100 ms were made beside the holder, against
  // 21-24 thousand slow-path lock() calls, and the lock ran at 0.79-0.92 of
  // std::mutex in session 23's sweep (docs/ADAPTIVE.md, finding 22).
  static constexpr bool parks_beside_its_holder = preemptive_v<R> && reports_cpu_v<R>;
  // On a cooperative runtime a waiter that runs on its holder's carrier
  // knows the holder is not running: it yielded (or waits) inside its
  // critical section, and cannot release the word before this waiter yields.
  // So the unannounced spin ends there, at once, and the waiter counts itself
  // and competes, yielding at every failed check (see spin_unannounced()).
  // In high-contention with one carrier (the critical section yields) each
  // waiter spun its 400 ns for nothing at each of the holder's yields: on
  // Boost.Fiber at 4-64 LTs 0.84-0.89 of boost::fibers::mutex; with the
  // rule the lock ran at 1.03-1.19 of itself without it on Boost.Fiber,
  // Argobots and our scheduler (docs/ADAPTIVE.md, finding 23).
  static constexpr bool ends_spin_beside_its_holder = !preemptive_v<R>;
  // Where busy carriers steal but idle ones do not (Boost.Fiber's
  // work_stealing; runtime/concept.hpp) and LTs are not time-sliced, the
  // waiters gather (gathering()): every waiter parks at its failed checks,
  // even its carrier's last awake one, and unlock() wakes the oldest parked
  // waiter, never one out of turn for an idle carrier, while
  //   - failed checks that find the holder noted on the waiter's own
  //     carrier (it yielded or waits inside its critical section; not a
  //     parked waiter handed the lock that has not yet run, see
  //     count_check_beside_holder()) come at
  //     more than one per sample_every acquisitions in lock_slow(): a count
  //     of them, less one per sampled hold, is beside_checks_to_gather or
  //     more (it stops at beside_checks_cap, so that it falls soon after
  //     they stop);
  //   - the sampled holds are under gather_hold_ns (paper-coop's, 0.3-0.7
  //     ms and yielding, are not);
  //   - fewer than gather_waiters_max waiters are counted in the word.
  // That is what boost::fibers::mutex does: a carrier left with only parked
  // LTs sleeps, the busy one takes the LTs woken for it, and the lock passes
  // between LTs of one carrier, in its cache. In high-contention (the
  // critical section yields) competing waiters kept both carriers busy and
  // every hand-over crossed between them, which on one of our machines took
  // 105-160 ns a line round trip: 0.83-0.92 of the library at 8-16 LTs in
  // A/Bs; gathered, 0.95-0.98 (docs/ADAPTIVE.md, findings 43 and 44).
  // Whether a run falls onto one carrier is the carriers' doing: in some
  // runs the LTs stay on both though the rule holds throughout, and such
  // a run, this lock's or the library's, makes 185-240 acquisitions per
  // ms where one that falls makes 245-290 (finding 45; 0.89-1.02 of the
  // library in the checks). At 32 and 64 LTs the runs of both split more
  // often: a lock that gathered there was as slow as the library (0.96-0.97
  // of it, finding 44), and competing waiters ran at 1.05-1.15 of it, or
  // at 0.86 where the library's run fell (finding 45). A latch in place of
  // the rate (one check beside the holder and every waiter parks for good)
  // cost hot-handover 31-33% and paper-coop 17-22% (finding 43). Not on
  // Argobots, whose streams never take each other's ULTs: each hand-over
  // became a wake-up on the other stream (high-contention 14-15% slower,
  // finding 43); nor where idle carriers steal: they are woken to run the
  // woken LTs, and nothing gathers.
  static constexpr bool gathers_waiters = busy_carriers_steal_v<R> && !idle_carriers_steal_v<R> && !preemptive_v<R>;
  static constexpr std::int32_t beside_checks_to_gather = 16;
  static constexpr std::int32_t beside_checks_cap = 64;
  static constexpr std::int64_t gather_hold_ns = 50'000;
  static constexpr std::uint64_t gather_waiters_max = 24;
  // On a cooperative runtime, while holds are short next to wake-ups (the
  // rules under which no waiter parks because another competes) and
  // holders do not yield beside their waiters (see
  // holds_suit_uncounted_competition()), a waiter
  // first competes uncounted, as behind a fast hold: counted only in
  // uncounted_waiters_, never parking, for up to the same bounds a
  // competing waiter has there (long_wait_checks failed checks, and where
  // idle carriers do not steal long_competition_ns within
  // long_competition_checks), and then counts itself as before, parking at
  // its first failed check made while another competes. While nobody is
  // counted, holds begun past such waiters are fast ones, freed by a store
  // (note_fast_barge()). A counted competing waiter cost every hand-over an
  // RMW to count in, a CAS to free the word and unlock_slow()'s bookkeeping:
  // the default preset on Boost.Fiber at 32 LTs ran at 0.89-0.91 of ttas in
  // three A/Bs on the 2x1 topology (its slow phases, line round trips of
  // 125-150 ns), and at 0.98 this way (docs/ADAPTIVE.md, finding 50).
  // Checks beside the holder are counted here too (beside_checks_).
  // Not where the kernel time-slices LTs: there a fast hold's waiters
  // cannot park beside a holder that was preempted (parks_beside_its_holder),
  // and high-contention on OS threads was tuned on counted waiters
  // (findings 46 and 47).
  static constexpr bool competes_uncounted = !preemptive_v<R>;
  static constexpr bool counts_checks_beside_holder = gathers_waiters || competes_uncounted;

  // Before it counts itself in the word, a waiter polls it for
  // unannounced_backoffs of the waiter's longest backoffs and for at least
  // unannounced_spin_floor (see spin_unannounced()). The floor is a time,
  // not a count of pauses, because a pause is not: 13 ns on one of our
  // machines, 25 ns on another. There eight pauses (~106 ns) were shorter
  // than text-stats' critical sections on the other carrier, and its
  // waiters queued (docs/ADAPTIVE.md, finding 20).
  static constexpr std::uint32_t unannounced_backoffs = 2;
  static constexpr std::chrono::nanoseconds unannounced_spin_floor{400};
  // On a cooperative runtime, while the sampled holds average more than the
  // floor and at most unannounced_spin_ceiling, the spin lasts one average
  // hold: a waiter that arrives during a hold waits out at most the rest of
  // it, and a spin that covers it sees the release within a pause, where a
  // counted waiter sees it at its next check after a yield (100-150 ns on
  // Boost.Fiber, with nobody else to run) and has cost the hand-over its
  // count (an RMW, and unlock()'s CAS that fails). Hot-handover (1.2 us
  // holds) at 4-8 LTs ran at 0.91-0.93 of ttas with the floor and at
  // 0.94-0.98 this way on Boost.Fiber, Argobots and our scheduler, default
  // at 8-64 LTs at 0.94-0.99 and 0.97-1.02; hot-handover at 64 LTs ran at
  // 0.98 of the floor's lock on Boost.Fiber and Argobots
  // (docs/ADAPTIVE.md, finding 54).
  // Longer holds keep the floor: a spin could not cover them, and it takes
  // its carrier from LTs that have work (paper-coop's 0.3-0.7 ms holds).
  // Not where the kernel time-slices LTs: there the spin was tuned with
  // the floor alone (findings 46 and 47), and a spinning thread holds a
  // CPU that a preempted holder may need.
  static constexpr std::chrono::nanoseconds unannounced_spin_ceiling{2000};
  // The unannounced spin's length in pauses for `policy`, where one pause
  // lasts `pause` (counted as 1 ns if shorter or not a number) and the
  // sampled holds average `hold_ns` (0: none timed); the spin itself passes
  // pause_duration() and hold_ns_.
  static std::uint32_t unannounced_pauses(const wait_policy& policy, std::chrono::duration<double, std::nano> pause,
                                          std::int64_t hold_ns = 0) noexcept {
    const std::uint32_t longest = waiter<R>::longest_backoff(policy);  // <= 2^16
    if (longest == 0) return 0;
    const double pause_ns = pause.count() >= 1.0 ? pause.count() : 1.0;
    std::int64_t spin_ns = unannounced_spin_floor.count();
    if (!preemptive_v<R> && hold_ns > spin_ns && hold_ns <= unannounced_spin_ceiling.count()) spin_ns = hold_ns;
    const double time_pauses = std::ceil(static_cast<double>(spin_ns) / pause_ns);  // <= 2000
    return std::max(unannounced_backoffs * longest, static_cast<std::uint32_t>(time_pauses));
  }

  adaptive_mutex() noexcept : adaptive_mutex(default_wait_policy<R>()) {}
  explicit adaptive_mutex(const wait_policy& policy, std::uint32_t barge_limit = default_barge_limit) noexcept
      : policy_(park_at_first_failure(policy)),
        barge_limit_(barge_limit),
        patience_(barge_limit > UINT32_MAX / patience_factor ? UINT32_MAX : barge_limit * patience_factor) {}
  adaptive_mutex(const adaptive_mutex&) = delete;
  adaptive_mutex& operator=(const adaptive_mutex&) = delete;

  void lock() {
    word_type w;
    if (!try_lock_idle(w)) [[unlikely]] lock_contended(w);
  }

  bool try_lock() noexcept {
    word_type w;
    if (try_lock_idle(w)) [[likely]] return true;
    return try_lock_again(w);
  }

  void unlock() noexcept {
    // A fast hold: nobody counted itself, nor can, so a store frees it, as
    // in TTAS (a second RMW here cost text-stats at 1 LT 2-13%:
    // docs/ADAPTIVE.md, findings 26 and 27). Only this holder writes the
    // word now.
    // The hint first: a waiter polling the word may have the line shared,
    // and the store below then needs it back. Measured where a line took
    // ~200 ns to cross between the two cores (the EPYC's slow phases,
    // finding 34): poisson-rate at 4 LTs (Boost.Fiber, OS threads) 0.81 ->
    // 0.89 of ttas, text-stats at 16-32 LTs 0.89-0.91 -> 0.95-0.96; in fast
    // phases poisson-rate on Boost.Fiber 0.96 -> 0.99, and at 1 LT, where
    // the line is always ours, text-stats lost 0.5-1.5%. Why it helps that
    // much is not known for sure (the VM has no counters).
    detail::prefetch_for_write(&word_);
    const word_type w = word_.load(std::memory_order_relaxed);
    if (w == (locked | fast_hold)) [[likely]] {
      // release: pairs with the acquire CAS of the next holder.
      word_.store(0, std::memory_order_release);
      return;
    }
    unlock_counted(w);
  }

 private:
  friend struct detail::adaptive_mutex_access;
  using word_type = std::uint64_t;

  // The uncontended path, inlined into the caller: a fast hold begun from
  // an idle word (see try_lock_from()). Everything else is one out-of-line
  // call from lock(), try_lock() and unlock() each, so that the caller's
  // loop keeps its registers: with a call for each step of the slow paths
  // the compiler kept a caller's values on the stack across the fast path
  // too (docs/ADAPTIVE.md, finding 32). On failure w is the word as last
  // read. acquire: pairs with the release of unlock().
  [[gnu::always_inline]] bool try_lock_idle(word_type& w) noexcept {
    w = word_.load(std::memory_order_relaxed);
    if (w != 0 || uncounted_waiters_.load(std::memory_order_relaxed) != 0) [[unlikely]] return false;
    return word_.compare_exchange_strong(w, locked | fast_hold, std::memory_order_acquire, std::memory_order_relaxed);
  }
  [[gnu::noinline]] bool try_lock_again(word_type w) noexcept { return try_lock_from(w); }
  [[gnu::noinline]] void lock_contended(word_type w) {
    if (!try_lock_from(w)) lock_slow(w);
  }
  // A counted hold. release: pairs with the acquire CAS of the next holder.
  // The CAS (not a store) fails when a waiter counted itself meanwhile.
  // `seen`: the word as unlock() read it.
  [[gnu::noinline]] void unlock_counted(word_type seen) noexcept {
    if constexpr (competes_uncounted) {
      // A fast hold begun past uncounted waiters, with our place noted: the
      // word is still ours alone to write.
      if ((seen & ~place_mask) == (locked | fast_hold)) {
        // release: pairs with the acquire CAS of the next holder.
        word_.store(0, std::memory_order_release);
        return;
      }
    }
    word_type w = locked;
    if (!word_.compare_exchange_strong(w, 0, std::memory_order_release, std::memory_order_relaxed)) unlock_slow(w);
  }

  // lock(), except that a free word of 0 is taken as a counted hold, never a
  // fast one, so that waiters that arrive during it count themselves. The
  // tests of the waiter protocol begin with it: every hold begun while
  // anyone waits is one of these anyway.
  void lock_not_fast() {
    word_type w = word_.load(std::memory_order_relaxed);
    if (!try_lock_past_waiters(w)) lock_slow(w);
  }

  // try_lock() from the word w, as read; on failure w is the word as last
  // read. The uncontended path is one CAS (after a read of
  // uncounted_waiters_, on the word's line), as it was before the place was
  // noted (it notes none: nobody waits to read it), and begins a fast hold;
  // past waiters, counted or not, or while no_fast_holds, a counted one.
  // Where competes_uncounted, a hold begun from a word of 0 past uncounted
  // waiters is a fast one too while holds suit the uncounted competition
  // (note_fast_barge()); otherwise a waiter behind a fast hold counts
  // itself in the next, as before.
  bool try_lock_from(word_type& w) noexcept {
    while ((w & locked) == 0) {
      if (w != 0) return try_lock_past_waiters(w);
      const std::uint32_t waiting = uncounted_waiters_.load(std::memory_order_relaxed);
      if (waiting != 0 && !fast_past_uncounted_waiters(waiting)) return try_lock_past_waiters(w);
      // Past uncounted waiters with our place noted, so that one of them
      // that runs beside us knows we yielded while holding.
      // acquire: pairs with the release of unlock().
      if (word_.compare_exchange_weak(w, locked | fast_hold | (waiting != 0 ? own_place() : 0),
                                      std::memory_order_acquire, std::memory_order_relaxed)) {
        if (waiting != 0) note_fast_barge();
        return true;
      }
    }
    return false;
  }
  bool fast_past_uncounted_waiters(std::uint32_t waiting) const noexcept {
    if constexpr (competes_uncounted) {
      return !fast_holds_barred(waiting) && counting_in_.load(std::memory_order_relaxed) == 0 &&
             holds_suit_uncounted_competition();
    } else {
      return false;
    }
  }
  // Holder of a fast hold begun past uncounted waiters: an acquisition past
  // waiters like any other (note_barge()). Once a yield is due by the
  // liveness rule it makes the hold a counted one, whose unlock() goes
  // through unlock_slow(), which yields while uncounted waiters wait.
  // Without that a holder that never waits would re-lock past a waiter
  // sitting in its carrier's ready queue forever ("Liveness" in
  // docs/ADAPTIVE.md).
  void note_fast_barge() noexcept {
    note_barge();
    if (barges_since_yield_ >= barge_limit_) make_hold_counted();
  }
  // Holder of a fast hold: makes it a counted one, with its place noted (a
  // fast hold's holder is the only writer of the word, so a store does it).
  // Its unlock() then goes through unlock_slow(), which also ends a timed
  // hold.
  void make_hold_counted() noexcept { word_.store(locked | own_place(), std::memory_order_relaxed); }
  // `first` runs right after a winning CAS, before any store of ours: a
  // caller's RMWs (see compete_uncounted()).
  struct nothing_first {
    void operator()() const noexcept {}
  };
  template <class First = nothing_first>
  [[gnu::noinline]] bool try_lock_past_waiters(word_type& w, First first = {}) noexcept {
    const std::uint32_t waiting = uncounted_waiters_.load(std::memory_order_relaxed);
    const bool uncounted = any_uncounted(waiting);
    while ((w & locked) == 0) {
      // acquire: pairs with the release of unlock().
      if (word_.compare_exchange_weak(w, w | locked | (w != 0 || uncounted ? own_place() : 0),
                                      std::memory_order_acquire, std::memory_order_relaxed)) {
        first();
        if (w != 0 || uncounted) {
          begin_watched_hold();
          note_barge();  // someone waits: we passed them
        } else if (fast_holds_barred(waiting) && ++quiet_acquisitions_ == forget_holds_after) {
          forget_sampled_holds();  // only no_fast_holds kept this hold counted
        }
        return true;
      }
    }
    return false;
  }
  // WOKEN is set only by a holder (unlock) and cleared only by the woken
  // waiter, so at most one woken waiter competes at a time.
  static constexpr word_type locked = 1;
  static constexpr word_type woken = 2;
  // With LOCKED and WOKEN: unlock() kept the word locked for the woken
  // waiter, which alone may take it. Set only by a holder while WOKEN is
  // set, cleared only by the woken waiter (when it acquires, or in park()
  // if it was re-parking meanwhile).
  static constexpr word_type reserved = 4;
  // The woken waiter failed a check since unlock() woke it: it is running,
  // and a hand-off to it is not a wait for a ready-queue round. Set and
  // cleared only by the woken waiter.
  static constexpr word_type woken_lost = 8;
  // With LOCKED, and nothing else: a fast hold, begun by try_lock() from a
  // word of 0 while no waiter was uncounted (where competes_uncounted, also
  // past waiters that compete uncounted, with the holder's place noted:
  // fast_past_uncounted_waiters()). Only its holder writes the
  // word, with a store that frees it, so a waiter that finds it must not
  // count itself: it could be erased, and a parked waiter never woken
  // (wait_out_fast_hold()). No counted waiter exists during one either:
  // each keeps the word non-zero until it acquires.
  static constexpr word_type fast_hold = 16;
  // In uncounted_waiters_: the sampled holds last long_hold_ns or more, so
  // no hold is fast. A waiter behind a fast hold yields (on OS threads
  // sched_yield) until it ends, however long; behind a counted one it may
  // park. Set and cleared by holders in end_hold(), as the average crosses
  // the floor. Holds are sampled only from acquisitions in lock_slow() to
  // unlock_slow(), so under uncontended use the average would never move,
  // and a mutex whose holds were once long would free every hold with a
  // CAS for good: after forget_holds_after acquisitions of an idle mutex
  // with no unlock_slow() between them, the holder forgets the sampled
  // holds and clears it. The price, if holds are still long: until the
  // sampled holds set it again (one sample in sample_every acquisitions in
  // lock_slow(); the first sets it if it lasted 8 x long_hold_ns, a hold of
  // 400 us needs about four), every hold begun on an idle mutex is fast,
  // and waiters that arrive during one yield through it.
  static constexpr std::uint32_t no_fast_holds = std::uint32_t{1} << 31;
  static constexpr std::uint32_t forget_holds_after = 64;
  static bool any_uncounted(std::uint32_t waiting) noexcept { return (waiting & ~no_fast_holds) != 0; }
  static bool fast_holds_barred(std::uint32_t waiting) noexcept { return (waiting & no_fast_holds) != 0; }
  bool has_uncounted_waiters() const noexcept {
    return any_uncounted(uncounted_waiters_.load(std::memory_order_relaxed));
  }
  // Holder only (end_hold(), forget_sampled_holds()): sets or clears the bit.
  void bar_fast_holds(bool barred) noexcept {
    if (barred) {
      uncounted_waiters_.fetch_or(no_fast_holds, std::memory_order_relaxed);
    } else {
      uncounted_waiters_.fetch_and(~no_fast_holds, std::memory_order_relaxed);
    }
  }
  static constexpr word_type competing_one = word_type{1} << 5;  // bits 5..31: competing waiters
  static constexpr word_type parked_one = word_type{1} << 32;    // bits 32..55: parked waiters
  static constexpr word_type place_one = word_type{1} << 56;     // bits 56..63: the holder's place
  static constexpr word_type competing_mask = parked_one - competing_one;
  static constexpr word_type parked_mask = place_one - parked_one;
  static constexpr word_type place_mask = ~(place_one - 1);

  static bool has_parked(word_type w) noexcept { return (w & parked_mask) != 0; }
  // Waiters that may sit in a ready queue: competing, or the woken one.
  static bool has_awake(word_type w) noexcept { return (w & (competing_mask | woken)) != 0; }

  struct alignas(detail::cache_line_size) node {
    handover_flag<R> flag;    // granted by unlock(): woken, or handed the lock
    bool handed_lock = false;  // written before the grant: the lock is ours
    bool lost = false;         // re-parked after a wake (it lost once); under guard_
    bool out_of_turn = false;  // woken ahead of the oldest (unlink_waiter_of_idle_carrier()): not a turn
    bool parked_long = false;  // parked at a check where it had competed 1 ms (competed_long()); its owner writes it
    bool woken_competing = false;  // woken beside the woken waiter (wakes_beside_woken): counted as competing
    std::int64_t granted_at = 0;  // clock_ns() at the grant, if this wake-up is timed
    word_type place = 0;       // own_place() when it parked: noted in the word if handed the lock
    node* next = nullptr;      // queue link, under guard_
    node* pool_next = nullptr;
  };
  using pool = detail::node_pool<node>;

  // Awake waiters (competing or woken) per carrier, for runtimes whose idle
  // carriers do not steal (Boost.Fiber, Argobots): there a carrier whose
  // waiters all park idles, while the lock's holder and its spawned work
  // queue on another carrier (paper-coop and low-contention at 64 LTs ran at
  // 0.5-0.76 CPU utilisation, docs/ADAPTIVE.md finding 7). Carriers share a
  // slot modulo carrier_slots (32), so beyond that many carriers the rule
  // weakens to "the last awake waiter of a group of carriers". A waiter that
  // migrates (Boost.Fiber steals) moves its count at its next failed check.
  // The counts only decide whether to park, never who owns the lock: relaxed
  // is enough. The slots lie on slot_lines lines, slot i on line i modulo 8,
  // so that carriers 0-7 each count on a line of their own: in one shared
  // line every sit_down() and stand_up() (a holder's stand_up() comes right
  // after its acquisition, inside its hold) took the line from the other
  // carrier's waiters, which read it at their failed checks, and where a
  // line took ~200 ns to cross (finding 34) hot-handover on Boost.Fiber at
  // 4 LTs ran at 0.90 of ttas, 0.95 with the counts apart.
  using carrier_seat = unsigned;
  struct awake_counts {
    static constexpr unsigned carrier_slots = 32;
    static constexpr unsigned slot_lines = 8;
    struct alignas(detail::cache_line_size) line_of_slots {
      std::atomic<std::uint32_t> awake[carrier_slots / slot_lines] = {};
    };
    static_assert(sizeof(line_of_slots) == detail::cache_line_size);
    line_of_slots lines[slot_lines];
    std::atomic<std::uint32_t>& count(carrier_seat seat) noexcept {
      return lines[seat % slot_lines].awake[seat / slot_lines];
    }

    carrier_seat sit_down() noexcept {
      const carrier_seat seat = R::carrier() % carrier_slots;
      count(seat).fetch_add(1, std::memory_order_relaxed);
      return seat;
    }
    void stand_up(carrier_seat seat) noexcept { count(seat).fetch_sub(1, std::memory_order_relaxed); }
    bool last_on_carrier(carrier_seat& seat) noexcept {
      const carrier_seat now = R::carrier() % carrier_slots;
      if (now != seat) {
        stand_up(seat);
        count(now).fetch_add(1, std::memory_order_relaxed);
        seat = now;
      }
      return count(seat).load(std::memory_order_relaxed) <= 1;
    }
  };
  // Where idle carriers steal (our scheduler, OS threads), nothing to count.
  struct no_awake_counts {
    static carrier_seat sit_down() noexcept { return 0; }
    static void stand_up(carrier_seat) noexcept {}
    static bool last_on_carrier(carrier_seat&) noexcept { return false; }
  };

  // Whether a waiter parks depends on what a park costs next to a hold
  // (docs/ADAPTIVE.md, findings 17, 18 and 21): with holds of 0.3-0.7 ms
  // (paper-coop) a wake-up of 0.3-20 us is cheap and the waiter's spin
  // takes carrier time from the holder's work; with holds of 50 us (a
  // saturated poisson-rate) a 20 us futex round trip is not. So the mutex
  // keeps moving averages (1/8) of both, from one in sample_every of the
  // acquisitions made in lock_slow() (not those of the unannounced spin,
  // which go through try_lock()) and of the wake-ups (a clock read costs
  // ~20 ns). The same two averages decide the rules: where idle carriers
  // steal, a lone waiter parks at short_wait_checks while hold >=
  // hold_to_wake_up x wake-up (and >= long_hold_ns, holds_are_long()), and
  // no waiter parks because another competes while wake_up_to_hold x hold
  // < wake-up, where LTs are time-sliced while hold < short_hold_wake_ups
  // x wake-up (holds_are_short(), findings 18 and 51); where they do not,
  // no waiter parks because another competes while hold < wake-up
  // (holds_are_shorter_than_own_carrier_wake_ups(), findings 21 and 25). A
  // hold is timed from an acquisition in lock_slow() to the unlock_slow()
  // that ends it; a wake-up from unlock_slow()'s grant to the woken (or
  // handed) waiter running. Only a park is followed by a wake-up: while no
  // waiter parks, the wake-up average keeps its last value, and the hold
  // average alone moves (finding 21 says what that does). The holder, and
  // the waiter it woke, write one at a time (ordered by the word or the
  // grant), except that a waiter woken beside the woken one
  // (wakes_beside_woken) may time its wake-up while that one does: one
  // sample can then be lost, which moves an average of 1/8 little. Relaxed
  // atomics because waiters read them while they are written.
  static constexpr std::uint32_t sample_every = 8;
  static std::int64_t clock_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  // Holder, after an acquisition in lock_slow(): time one hold in
  // sample_every; otherwise make sure no earlier holder's time is left.
  void start_hold() noexcept {
    if (++slow_acquisitions_ % sample_every == 0) {
      held_since_.store(clock_ns(), std::memory_order_relaxed);
    } else {
      forget_hold();
    }
  }
  // Where no place is noted (!notes_holder_place): a waiter about to count
  // itself in a word without waiters (read with acquire, so that it sees
  // the time of the holder whose release it read). A holder that came in
  // through try_lock() times nothing, and the holder before it, if it
  // acquired in lock_slow(), may have left its time: its unlock() took the
  // fast path (nobody waited). The release of the count that follows makes
  // the holder's unlock_slow() see the cleared time. Two imperfections,
  // both bounded by end_hold()'s caps: a waiter that read the word just
  // before the last counted waiter acquired does not clear; and a waiter
  // that arrives while a holder that came in through lock_slow() alone
  // holds clears that holder's own time, so a lone waiter gets its holds
  // timed only while other waiters are counted. Where places are noted no
  // time is left behind (a holder that acquired in lock_slow() noted its
  // place, and unlocks through unlock_slow(), which ends its time), so
  // nobody clears and the lone waiter's holds are timed too: else at 2 OS
  // threads in paper-coop it never learns that holds are long
  // (docs/ADAPTIVE.md, finding 48).
  void forget_hold() noexcept {
    if (held_since_.load(std::memory_order_relaxed) != 0) held_since_.store(0, std::memory_order_relaxed);
  }
  // Holder, in unlock_slow(), after its unlock CAS failed: it saw a waiter,
  // or the holder's own noted place.
  void end_hold() noexcept {
    // acquire: pairs with the release of the count that forget_hold()
    // precedes. This load reads that count or a later value, and every
    // write to the word while that waiter is counted is an RMW (a fast
    // hold, freed by a store, begins only from a word of 0), so it is in
    // that release's sequence. (A fence would do the same; ThreadSanitizer
    // does not model fences.)
    (void)word_.load(std::memory_order_acquire);
    const std::int64_t since = held_since_.load(std::memory_order_relaxed);
    if (since == 0) return;
    held_since_.store(0, std::memory_order_relaxed);
    add_bounded_sample(hold_ns_, clock_ns() - since);
    if constexpr (counts_checks_beside_holder) {
      // One sampled hold in sample_every acquisitions in lock_slow() (and
      // in the uncounted competition): the count falls unless checks beside
      // the holder come more often.
      const std::int32_t beside = beside_checks_.load(std::memory_order_relaxed);
      if (beside > 0) beside_checks_.store(beside - 1, std::memory_order_relaxed);
    }
    // Fast holds only while the sampled holds are short (see no_fast_holds).
    const bool long_holds = hold_ns_.load(std::memory_order_relaxed) >= long_hold_ns;
    if (long_holds != fast_holds_barred(uncounted_waiters_.load(std::memory_order_relaxed))) {
      bar_fast_holds(long_holds);
    }
  }
  // Holder, after forget_holds_after acquisitions of an idle mutex: the
  // sampled holds are forgotten, as if none had been timed (the wake-ups,
  // timed only under contention, are kept), and holds may be fast again.
  void forget_sampled_holds() noexcept {
    hold_ns_.store(0, std::memory_order_relaxed);
    bar_fast_holds(false);
  }
  // Both averages (weight 1/8) take a sample for at most 4x the average, and
  // the first for at most 8 x long_hold_ns: one stale hold time moves the
  // hold average by 3/8 at most, or, as the first sample, to the floor. The
  // wake-ups have no stale times, but they are bounded alike so that neither
  // average outruns the other while both grow from 0. With only the holds
  // bounded, the hold average rose by at most 3/8 a sample (a dozen samples
  // from the floor to 4 ms) while the wake-up average took 1/8 of any
  // sample: with 4 ms holds and 3 ms wake-ups the holds counted as short
  // after the second sample of each, for a sample period (8 acquisitions)
  // or more (docs/ADAPTIVE.md, finding 18).
  static void add_bounded_sample(std::atomic<std::int64_t>& average, std::int64_t sample) noexcept {
    const std::int64_t old = average.load(std::memory_order_relaxed);
    const std::int64_t bounded = std::min(sample, old > 0 ? 4 * old : 8 * long_hold_ns);
    average.store(old + (bounded - old) / 8, std::memory_order_relaxed);
  }
  // Holder, before the RMW that wakes a waiter: the time to write into its
  // node, 0 if this wake-up is not timed.
  std::int64_t start_wake_up() noexcept { return ++wake_ups_ % sample_every == 0 ? clock_ns() : 0; }
  // The woken waiter, once it runs.
  void end_wake_up(std::int64_t granted_at) noexcept {
    if (granted_at != 0) add_bounded_sample(wake_up_ns_, clock_ns() - granted_at);
  }
  // Whether the sampled holds are under wake_ups / wake_ups_per_hold of the
  // sampled wake-ups (false while no hold is timed).
  bool holds_are_under(std::int64_t wake_ups_per_hold, std::int64_t wake_ups = 1) const noexcept {
    const std::int64_t hold = hold_ns_.load(std::memory_order_relaxed);
    return hold > 0 && wake_ups_per_hold * hold < wake_ups * wake_up_ns_.load(std::memory_order_relaxed);
  }
  // Whether no waiter parks because another competes (where idle carriers
  // steal): holds under 1/wake_up_to_hold of a wake-up, or where the kernel
  // time-slices LTs under short_hold_wake_ups wake-ups.
  bool holds_are_short() const noexcept {
    return preemptive_v<R> ? holds_are_under(1, short_hold_wake_ups) : holds_are_under(wake_up_to_hold);
  }
  // Where idle carriers do not steal: hold < wake-up.
  bool holds_are_shorter_than_own_carrier_wake_ups() const noexcept {
    return holds_are_under(own_carrier_wake_up_to_hold);
  }
  bool holds_are_long() const noexcept {
    const std::int64_t wake_up = wake_up_ns_.load(std::memory_order_relaxed);
    return wake_up > 0 && hold_ns_.load(std::memory_order_relaxed) >= std::max(hold_to_wake_up * wake_up, long_hold_ns);
  }

  // The holder's place, in the word (bits 56..63; 0: not noted): its carrier
  // on a cooperative runtime, its CPU where the kernel time-slices LTs and
  // the runtime reports it (R::cpu()), as place % 255 + 1 (beyond 255
  // places two can share a value, and carrier indices count every carrier
  // the process started: it is a guess either way, since a holder may move
  // after it noted). Every acquisition in lock_slow() notes it in its
  // acquiring RMW (a handed waiter's is the place it parked on, written by
  // unlock()'s RMW), and so does try_lock() past waiters; an uncontended
  // try_lock() notes none, so the uncontended path is the CAS it was, with
  // no carrier() or getcpu call. A holder that noted one unlocks through
  // unlock_slow() even if nobody waits any more, and so its hold is timed
  // (see forget_hold()). Every RMW that frees the word, or keeps it locked
  // for a woken waiter, clears the place: it is 0 whenever the word is
  // free. Waiters read the place in the word they read anyway. In a
  // field of its own, written after the acquiring CAS, it cost text-stats
  // on Boost.Fiber and Argobots 15-25% (each store took a line that waiters
  // poll from them within a critical section of 25-170 ns), and on the
  // guard's line it cost poisson-rate on OS threads 14% (finding 22, where
  // it was written only while holds_weigh_against_wake_ups()). It only
  // decides whether to spin or park, never who owns the lock.
  static constexpr bool notes_holder_place = parks_beside_its_holder || ends_spin_beside_its_holder;
  static word_type place_bits(int place) noexcept {
    return place < 0 ? 0 : (static_cast<word_type>(place) % 255 + 1) * place_one;
  }
  static word_type own_place() noexcept {
    if constexpr (!notes_holder_place) {
      return 0;
    } else if constexpr (preemptive_v<R>) {
      return place_bits(current_cpu<R>());
    } else {
      return place_bits(static_cast<int>(R::carrier()));
    }
  }
  // Whether the word w notes its holder at `place` (own_place() of the
  // caller; 0, no place, never matches).
  static bool holder_noted_at(word_type w, word_type place) noexcept {
    return place != 0 && (w & place_mask) == place;
  }
  // Where parks_beside_its_holder, the rule's condition: a wake-up has been
  // timed, and holds are not short next to wake-ups (under a quarter of
  // them: wake_up_to_hold_beside). Where a hold is over
  // long before a parked waiter would run again, every waiter keeps
  // competing (finding 18), and a yield that lets the holder run costs less
  // than the wake-up; before a wake-up is timed (one waiter, which parks
  // only after its long wait) there is nothing to weigh.
  bool holds_weigh_against_wake_ups() const noexcept {
    return wake_up_ns_.load(std::memory_order_relaxed) > 0 && !holds_are_under(wake_up_to_hold_beside);
  }
  // A failed check that read the word `seen`.
  bool parks_beside_the_holder(word_type seen) const noexcept {
    if constexpr (parks_beside_its_holder) {
      // The cheap test first: no place noted, no getcpu call.
      return (seen & place_mask) != 0 && holds_weigh_against_wake_ups() && holder_noted_at(seen, own_place());
    } else {
      return false;
    }
  }

  // Where gathers_waiters (see there): whether every waiter parks, and
  // unlock() wakes only the oldest, given the word w as last read. The
  // count is a rate: a failed check beside the holder adds 1
  // (count_check_beside_holder()), a sampled hold takes 1 (end_hold()). It
  // only decides whether to park and whom to wake, never who owns the
  // lock: relaxed, and a lost update moves it by one.
  bool gathering(word_type w) const noexcept {
    if constexpr (!gathers_waiters) {
      return false;
    } else {
      if (beside_checks_.load(std::memory_order_relaxed) < beside_checks_to_gather) return false;
      const std::int64_t hold = hold_ns_.load(std::memory_order_relaxed);
      const word_type waiters = (w & competing_mask) / competing_one + (w & parked_mask) / parked_one;
      return hold > 0 && hold < gather_hold_ns && waiters < gather_waiters_max;
    }
  }
  // A failed check that read the word `seen`, where gathers_waiters or
  // competes_uncounted. Not while the holder is a parked waiter that
  // unlock() handed the lock to and that has not yet run (handed_unrun_):
  // its place is noted and it is not running, but it waits for its turn
  // in the ready queue, not inside its critical section, and the checks
  // beside it say nothing about the holds. Counted, they made the waiters
  // gather where no holder yields: in the default preset on Boost.Fiber at
  // 32-64 LTs a few waits of a millisecond parked their waiters, each of
  // their hand-offs was met by checks beside it, the waiters gathered and
  // no longer competed uncounted, and more of them parked: 0.87-0.88 of
  // ttas; 0.93-0.97 with these checks left out (docs/ADAPTIVE.md,
  // finding 53).
  void count_check_beside_holder(word_type seen) noexcept {
    // The cheap test first: no place noted, no carrier() call.
    if ((seen & place_mask) == 0 || !holder_noted_at(seen, own_place())) return;
    if (handed_unrun_.load(std::memory_order_relaxed)) return;
    const std::int32_t beside = beside_checks_.load(std::memory_order_relaxed);
    if (beside < beside_checks_cap) beside_checks_.store(beside + 1, std::memory_order_relaxed);
  }

  // Holder only: an acquisition passed waiters (competing, parked or woken).
  void note_barge() noexcept {
    ++barges_;
    ++barges_since_yield_;
  }

  // Before it counts itself in the word, a waiter spins for two of the
  // waiter's longest backoffs (2 x max_backoff pauses: 8 on fibers, 128 on OS
  // threads) and for at least unannounced_spin_floor, 400 ns (on fibers that
  // decides: 16-31 pauses on our machines; none with max_backoff 0, which does
  // not time the pause either), and on a cooperative runtime, while the
  // sampled holds average 0.4 us to unannounced_spin_ceiling, for one
  // average hold; it reads the word after every pause and tries as soon as
  // it reads it free (it CASes only a word it read free: while the word is
  // held, each poll only reads its cache line and writes nothing). A short
  // critical section on another carrier is over by then, and the
  // announcement is saved: the waiter's count would take the word's
  // line from the holder, whose unlock CAS would then fail and go round unlock_slow(),
  // and a counted waiter yields, parks behind others and is handed the lock
  // (measured: docs/ADAPTIVE.md, findings 8, 9 and 20). It never yields, so it
  // never leaves an uncounted waiter in a ready queue behind a holder that
  // never waits (the session 4 hang, "Liveness"); a waiter that yields is
  // counted (in the word, or behind a fast hold in uncounted_waiters_,
  // which its holder's successors read). On a cooperative runtime it ends
  // at once where the word notes the holder on the waiter's own carrier
  // (ends_spin_beside_its_holder), and does not begin where `seen`, the
  // word as the caller last read it, does: a pause there only delays the
  // yield that lets the holder run (in high-contention on one carrier, where
  // every wait behind a counted hold begins beside its holder, the lock ran
  // about 1% faster without that pause and without the competition bound's
  // clock read at a first failed check, the two measured together;
  // docs/ADAPTIVE.md, finding 42).
  bool spin_unannounced(word_type seen) noexcept {
    if (waiter<R>::longest_backoff(policy_) == 0) return false;
    // A waiter that does not yield stays on its carrier.
    const word_type beside_us = ends_spin_beside_its_holder ? own_place() : 0;
    if (ends_spin_beside_its_holder && holder_noted_at(seen, beside_us)) return false;
    const std::uint32_t pauses = unannounced_pauses(policy_, pause_duration(), hold_ns_.load(std::memory_order_relaxed));
    for (std::uint32_t pause = 0; pause < pauses; ++pause) {
      (cpu_relax)();
      word_type w = word_.load(std::memory_order_relaxed);
      if (try_lock_from(w)) return true;
      if (ends_spin_beside_its_holder && holder_noted_at(w, beside_us)) return false;
    }
    return false;
  }

  // Every wait of this lock that may end in a park or a suspend ends there
  // at its first failed check: a competing waiter parks at its first failed
  // check made while another waiter competes, and a parked waiter suspends
  // at its first failed check on its node (a policy that never suspends
  // still never does; the other waits, the unannounced spin and the guard,
  // never suspend). One awake waiter takes a released word at once; a second
  // adds nothing but a share of the word's cache line and of the carriers.
  // Where threads outnumber cores its spins and yields are what the holder's
  // own yields (or its preemption) switch to: high-contention on OS threads
  // at 4-64 threads ran at 0.54-0.84 of std::mutex with the policy's 8
  // checks, 0.85-1.33 with one (docs/ADAPTIVE.md, finding 10). A parked
  // waiter cannot take the word before unlock() wakes it: on the fiber
  // runtimes it used to yield suspend_after (32) times on its node and then
  // suspend all the same (finding 11).
  static wait_policy park_at_first_failure(wait_policy policy) noexcept {
    policy.suspend_after = std::min(policy.suspend_after, std::uint32_t{1});
    return policy;
  }

  // An LT in lock_slow() is counted in exactly one place of the word (after
  // spin_unannounced(), its uncounted competition where competes_uncounted,
  // and any fast hold it waits out uncounted): as competing, as parked, or
  // as the woken waiter (WOKEN).
  [[gnu::noinline]] void lock_slow(word_type seen_first) {
    if (spin_unannounced(seen_first)) return;
    // Set when the uncounted competition ended by its bounds: the counted
    // one that follows parks at its first failed check made while another
    // competes (where idle carriers steal, at its first failed check).
    bool competed_uncounted_long = false;
    bool competed_uncounted_1ms = false;  // ... by the bound in time (where idle carriers do not steal)
    if constexpr (competes_uncounted) {
      if (holds_suit_uncounted_competition()) {
        const uncounted_end end = compete_uncounted();
        if (end == uncounted_end::took_the_word) return;
        // After its bounds counting_in_ counts us until count_in() returns.
        competed_uncounted_long = end != uncounted_end::holds_changed;
        competed_uncounted_1ms = end == uncounted_end::competed_1ms;
      }
    }
    node* self = nullptr;
    bool was_woken = false;  // we hold WOKEN and must clear it (by acquiring or re-parking)
    bool lost = false;       // we set WOKEN_LOST and must clear it with WOKEN
    bool parks_long = false;    // at our last failed check we had competed 1 ms (competed_long())
    const bool took_uncounted = count_in();
    if (competed_uncounted_long) counting_in_.fetch_sub(1, std::memory_order_relaxed);  // compete_uncounted() raised it
    if (took_uncounted) return acquired(nullptr, false);
    for (;;) {
      carrier_seat seat = awake_.sit_down();  // awake: competing, or woken
      waiter<R> w(policy_);
      bool park_early = false;  // decided at short_wait_checks failed checks
      std::int64_t competing_since = 0;  // where idle carriers do not steal: at the second failed check
      for (;;) {
        word_type seen = word_.load(std::memory_order_relaxed);
        if (was_woken && (seen & reserved) != 0) {
          // unlock() reserved the word for us: LOCKED stays set, it is ours
          // (and no place is noted: unlock() cleared it). One add (modulo
          // 2^64: the subtracted bits are set, the place bits clear).
          // acquire: pairs with the release that set RESERVED.
          word_.fetch_add(own_place() - (reserved | woken | (lost ? woken_lost : 0)), std::memory_order_acquire);
          awake_.stand_up(seat);
          if (self->out_of_turn) note_barge();  // it passed the queue's head
          return acquired(self, /*after_waiting_our_turn=*/!self->out_of_turn);
        }
        if ((seen & locked) == 0) {
          const word_type want =
              (seen | locked | own_place()) - (was_woken ? woken + (lost ? woken_lost : 0) : competing_one);
          if (word_.compare_exchange_weak(seen, want, std::memory_order_acquire, std::memory_order_relaxed)) {
            awake_.stand_up(seat);  // first, before any store (see compete_uncounted())
            // A waiter woken in its turn that wins ends the run of barges
            // past the queue; anyone else who wins while others wait (one
            // woken out of turn too) is one more.
            const bool in_turn = was_woken && !self->out_of_turn;
            const bool past_uncounted = competes_uncounted && has_uncounted_waiters();
            if (!in_turn && ((want & ~place_mask) != locked || past_uncounted)) note_barge();
            if constexpr (skips_wasted_wake_ups) {
              if (was_woken && last_woken_lost_.load(std::memory_order_relaxed)) {
                last_woken_lost_.store(false, std::memory_order_relaxed);
              }
            }
            return acquired(self, in_turn);
          }
          continue;  // the word moved: look again before paying for a failure
        }
        // Park only while another waiter keeps competing (a woken one does
        // not count: it may still be on its way back). The last competing
        // waiter takes a released word at once, where a parked one needs a
        // wake-up first (a futex, or a sleeping Boost.Fiber carrier) while
        // the word stays free.
        // Where an idle carrier does not take work from busy ones, also the
        // last awake waiter of a carrier does not park (awake_counts).
        // Where idle carriers steal, the last competing waiter parks too once
        // it has failed long_wait_checks checks: the hold is long, the
        // wake-up it will need is short next to it, and its yields took
        // carrier time from the holder's work (paper-coop on our scheduler:
        // ~1200 yields per acquisition, 0.83-0.89 of the queue locks;
        // docs/ADAPTIVE.md, finding 14). While this mutex's holds are long
        // next to its wake-ups, it parks at its second failed check
        // (short_wait_checks; findings 17 and 35).
        // And while they are short next to its wake-ups, no waiter parks
        // because another competes: the word is free again long before a
        // parked waiter would run, and every park costs the next release a
        // wake-up (hot-handover on OS threads: 3 us holds, 20 us futex
        // wake-ups; finding 18). They all compete, as in TTAS, until their
        // long wait. Where idle carriers do not steal, the same while holds
        // are shorter than wake-ups, for up to long_wait_checks (findings
        // 21 and 25).
        // Waiters competing uncounted compete too (competes_uncounted).
        const word_type other_competitors = (seen & competing_mask) / competing_one - (was_woken ? 0 : 1) +
                                            (competes_uncounted && has_uncounted_waiters() ? 1 : 0);
        bool park_behind_others = other_competitors != 0;
        bool long_wait = false;
        if constexpr (idle_carriers_steal_v<R>) {
          const std::uint32_t checks = w.failures() + 1;
          if (checks == short_wait_checks && other_competitors == 0) park_early = holds_are_long();
          long_wait = checks >= long_wait_checks || park_early || competed_uncounted_long;  // park_early: set at short_wait_checks
          park_behind_others = park_behind_others && !holds_are_short();
        } else {
          const bool competed_1ms = competed_long(w.failures(), competing_since);  // at every failed check
          const bool long_competition = competed_uncounted_long || competed_1ms;
          // Only the bound in time marks the node (wakes_beside_woken).
          parks_long = competed_1ms || competed_uncounted_1ms;
          park_behind_others = park_behind_others && (w.failures() + 1 >= long_wait_checks || long_competition ||
                                                      !holds_are_shorter_than_own_carrier_wake_ups());
        }
        if (!was_woken) watch_hold();
        if (was_woken && !lost) {
          word_.fetch_or(woken_lost, std::memory_order_relaxed);  // tells unlock() we are running
          lost = true;
        }
        bool gather = false;
        if constexpr (counts_checks_beside_holder) count_check_beside_holder(seen);
        if constexpr (gathers_waiters) gather = gathering(seen);
        const bool may_park = gather || park_behind_others || long_wait || parks_beside_the_holder(seen);
        if (w.on_failure(/*may_suspend=*/may_park && (gather || !awake_.last_on_carrier(seat)))) break;
      }
      if (self == nullptr) self = pool::acquire();
      competed_uncounted_long = competed_uncounted_1ms = false;
      awake_.stand_up(seat);
      if (lost) {
        // Re-parking: the node's `lost` flag carries it (park() sets it).
        word_.fetch_sub(woken_lost, std::memory_order_relaxed);
        lost = false;
      }
      if (!park(self, was_woken, parks_long)) {
        was_woken = false;  // counted as competing again: the word was free
        continue;
      }
      if (self->handed_lock) {
        if constexpr (counts_checks_beside_holder) {
          if (handed_unrun_.load(std::memory_order_relaxed)) handed_unrun_.store(false, std::memory_order_relaxed);
        }
        // LOCKED stayed set for us: handed in our turn, or, woken out of
        // turn, the word was reserved for us in park() (a pass of the queue).
        if (self->out_of_turn) note_barge();
        return acquired(self, /*after_waiting_our_turn=*/!self->out_of_turn);
      }
      was_woken = !self->woken_competing;  // woken beside the woken one: competing
    }
  }

  // Where idle carriers do not steal: whether a waiter at its failed check
  // number `failures` (from 0) has competed for long_competition_ns within
  // long_competition_checks checks (see there): the clock starts at check 1
  // and is read again 4, 8, 16 and 32 checks on.
  static bool competed_long(std::uint32_t failures, std::int64_t& since) noexcept {
    if (failures <= 1) {
      if (failures == 1) since = clock_ns();
      return false;
    }
    const std::uint32_t timed = failures - 1;  // checks since the clock started
    const bool clock_read_due = timed >= 4 && timed <= long_competition_checks && (timed & (timed - 1)) == 0;
    return clock_read_due && clock_ns() - since >= long_competition_ns;
  }

  // Whether a waiter competes uncounted first (competes_uncounted): while
  // no waiter parks because another competes (holds_are_short(), or where
  // idle carriers do not steal holds_are_shorter_than_own_carrier_wake_ups())
  // and holders do not yield inside their critical sections: failed checks
  // beside the holder (count_check_beside_holder()) are under
  // beside_checks_to_gather, as for gathering() (which parks every waiter
  // while they are not). Where a holder yields while holding, every LT of
  // its carrier runs before it continues, and uncounted waiters there, which
  // never park, lengthen each hold by a ready-queue round of yields:
  // high-contention (the critical section yields) at 64 LTs ran at 0.59 of
  // the lock without the uncounted competition on Argobots and 0.74 on
  // Boost.Fiber without this condition (docs/ADAPTIVE.md, finding 50).
  bool holds_suit_uncounted_competition() const noexcept {
    if (beside_checks_.load(std::memory_order_relaxed) >= beside_checks_to_gather) return false;
    if constexpr (idle_carriers_steal_v<R>) {
      return holds_are_short();
    } else {
      return holds_are_shorter_than_own_carrier_wake_ups();
    }
  }
  // Competes for the word counted only in uncounted_waiters_ (so a holder
  // sees us, and its acquisitions count as passing us: "Liveness"), with
  // the wait policy's spin -> yield, never suspending, until it takes the
  // word, or has failed long_wait_checks checks, or where idle carriers do
  // not steal competed long_competition_ns within long_competition_checks
  // (then counting_in_ counts it until the caller has counted itself), or
  // holds no longer suit it (checked at every failed check). A word of 0
  // it takes as a fast hold (unless no_fast_holds; past other uncounted
  // waiters only as try_lock_from() would), one in sample_every of them
  // timed; any other free word as a counted hold past waiters.
  enum class uncounted_end { took_the_word, failed_its_checks, competed_1ms, holds_changed };
  [[gnu::noinline]] uncounted_end compete_uncounted() noexcept {
    uncounted_waiters_.fetch_add(1, std::memory_order_relaxed);
    // Awake on its carrier, as a counted competing waiter is: a counted one
    // beside it may park (awake_counts).
    carrier_seat seat = awake_.sit_down();
    waiter<R> wt(policy_);
    std::int64_t competing_since = 0;
    // Our exit's two RMWs: no longer uncounted, no longer awake. A waiter
    // that takes the word makes them right after its winning CAS, before
    // the holder's bookkeeping: the CAS left the word's line in our cache,
    // and the waiters on other carriers read it again within tens of
    // nanoseconds. On x86 an RMW waits for every store before it to reach
    // the cache, so with the bookkeeping's stores to that line ahead of
    // them, and the line taken back by a waiter's read meanwhile, each RMW
    // waited for a line round trip (~300 cycles on our Xeon guest), inside
    // our hold: hot-handover on Boost.Fiber at 8 LTs lost ~60 ns an
    // acquisition there, and ran at 0.89 of ttas; RMWs first, at 0.93
    // (docs/ADAPTIVE.md, finding 52). The same order in lock_slow().
    const auto leave = [this, seat]() noexcept {
      uncounted_waiters_.fetch_sub(1, std::memory_order_relaxed);
      awake_.stand_up(seat);
    };
    uncounted_end end;
    for (;;) {
      word_type w = word_.load(std::memory_order_relaxed);
      if ((w & locked) == 0) {
        if (w != 0) {
          if (try_lock_past_waiters(w, leave)) return uncounted_end::took_the_word;
          continue;
        }
        const std::uint32_t waiting = uncounted_waiters_.load(std::memory_order_relaxed);  // us among them
        const bool past_others = any_uncounted(waiting - 1);
        const bool fast = past_others ? fast_past_uncounted_waiters(waiting) : !fast_holds_barred(waiting);
        // acquire: pairs with the release of unlock().
        if (word_.compare_exchange_weak(w, (fast ? locked | fast_hold : locked) | own_place(), std::memory_order_acquire,
                                        std::memory_order_relaxed)) {
          leave();  // ours now: the RMWs first
          // Time one hold in sample_every, so that the averages that let
          // us compete uncounted keep moving.
          const bool timed = ++slow_acquisitions_ % sample_every == 0;
          if (timed) held_since_.store(clock_ns(), std::memory_order_relaxed);
          if (past_others) {
            if (fast) {
              note_fast_barge();
            } else {
              note_barge();
            }
          }
          if (fast && timed) make_hold_counted();
          return uncounted_end::took_the_word;
        }
        continue;
      }
      count_check_beside_holder(w);
      if (wt.failures() + 1 >= long_wait_checks) {
        end = uncounted_end::failed_its_checks;
        break;
      }
      if constexpr (!idle_carriers_steal_v<R>) {
        if (competed_long(wt.failures(), competing_since)) {
          end = uncounted_end::competed_1ms;
          break;
        }
      }
      if (!holds_suit_uncounted_competition()) {
        end = uncounted_end::holds_changed;
        break;
      }
      wt.on_failure(/*may_suspend=*/false);
    }
    // Ended by the bounds: holds begun from now on are counted ones until
    // we have counted ourselves (lock_slow() takes this back); raised
    // before we leave uncounted_waiters_. (Ended because holds changed,
    // they are counted ones anyway.)
    if (end == uncounted_end::failed_its_checks || end == uncounted_end::competed_1ms) {
      counting_in_.fetch_add(1, std::memory_order_relaxed);
    }
    leave();
    return end;
  }

  // Counts the caller as competing in the word, once no fast hold is in the
  // way; true if it took the word instead, uncounted.
  bool count_in() noexcept {
    word_type w = word_.load(std::memory_order_acquire);
    for (;;) {
      if ((w & fast_hold) != 0) {
        if (wait_out_fast_hold()) return true;
        w = word_.load(std::memory_order_acquire);
        continue;
      }
      // acquire: see forget_hold().
      if constexpr (!notes_holder_place) {
        if ((w & ~(locked | place_mask)) == 0) forget_hold();
      }
      // release: publishes forget_hold(), where it ran, to the holder's unlock_slow().
      if (word_.compare_exchange_weak(w, w + competing_one, std::memory_order_acq_rel, std::memory_order_acquire)) {
        return false;
      }
    }
  }
  // A fast hold's holder will look for no waiter, and the store that ends
  // it would erase a count: wait as in TTAS (spin -> yield, never suspend),
  // announced only in uncounted_waiters_, which makes the holds begun
  // meanwhile counted ones, passing us (liveness: "Liveness" in
  // docs/ADAPTIVE.md). It ends at the first check that finds no fast hold:
  // we take a word of 0 (a counted hold; our place noted where places are),
  // or return to count ourselves (count_in() waits again if by then another
  // fast hold began). True if we took the word.
  [[gnu::noinline]] bool wait_out_fast_hold() noexcept {
    uncounted_waiters_.fetch_add(1, std::memory_order_relaxed);
    // Where holds past uncounted waiters may be fast, bar them while we
    // wait here, so that the next hold is a counted one, as above.
    if constexpr (competes_uncounted) counting_in_.fetch_add(1, std::memory_order_relaxed);
    waiter<R> wt(policy_);
    bool took = false;
    for (;;) {
      word_type w = word_.load(std::memory_order_relaxed);
      if ((w & fast_hold) != 0) {
        wt.on_failure(/*may_suspend=*/false);
        continue;
      }
      if (w == 0) {
        // acquire: pairs with the release of unlock().
        took = word_.compare_exchange_strong(w, locked | own_place(), std::memory_order_acquire,
                                             std::memory_order_relaxed);
        if (!took && (w & fast_hold) != 0) continue;
      }
      break;
    }
    if constexpr (competes_uncounted) counting_in_.fetch_sub(1, std::memory_order_relaxed);
    uncounted_waiters_.fetch_sub(1, std::memory_order_relaxed);
    return took;
  }

  void acquired(node* self, bool after_waiting_our_turn) noexcept {
    if (after_waiting_our_turn) barges_ = barges_since_yield_ = 0;
    begin_watched_hold();
    start_hold();
    if (self != nullptr) pool::release(self);
  }

  // Moves self from competing (or woken) to parked and waits for unlock()
  // to wake it. Returns false without waiting if the word was free by then:
  // self is counted as competing again. A waiter woken in its turn re-parks
  // at the front, so it keeps its turn; one woken out of turn
  // (unlink_waiter_of_idle_carrier()) or beside the woken one
  // (wakes_beside_woken) had no turn to keep and re-parks at the back:
  // at the front, several of those out of the queue at once would re-park
  // in reverse order, each ahead of the woken waiter, and the oldest
  // waiter's turn could recede. If the word was reserved for a woken waiter
  // meanwhile, it takes the lock instead (handed_lock). `parks_long`: it
  // had competed 1 ms by this check (see wakes_beside_woken).
  bool park(node* self, bool was_woken, bool parks_long = false) {
    // out_of_turn is left as it is: unlock_slow() writes it before every
    // grant, and it is read only after one. Cleared here, it would make a
    // woken-out-of-turn waiter that finds the word reserved below take it
    // as its turn, and restart the oldest waiter's count of barges.
    const bool at_front = was_woken && !self->out_of_turn;
    self->parked_long = parks_long;
    self->woken_competing = false;
    self->flag.reset();
    self->handed_lock = false;
    self->lost = at_front;
    self->next = nullptr;
    self->granted_at = 0;
    self->place = own_place();
    guard_lock();
    // acq_rel: the count must be visible to the holder's CAS in unlock() (it
    // fails and takes the slow path), and we must see whether the word is
    // still locked: if not, no unlock() is coming to wake us. For a woken
    // waiter, also whether unlock() reserved the word for it meanwhile
    // (acquire: pairs with the release that set RESERVED).
    const word_type delta = parked_one - (was_woken ? woken : competing_one);
    const word_type before = word_.fetch_add(delta, std::memory_order_acq_rel);
    if (was_woken && (before & reserved) != 0) {
      // The word is ours (LOCKED stayed set, no place noted): take back the
      // parked count and the reservation, and note our place.
      word_.fetch_add(own_place() - (parked_one + reserved), std::memory_order_relaxed);
      guard_unlock();
      self->handed_lock = true;
      return true;
    }
    if ((before & locked) == 0) {
      word_.fetch_sub(parked_one - competing_one, std::memory_order_relaxed);
      guard_unlock();
      return false;
    }
    if constexpr (skips_wasted_wake_ups) {
      if (was_woken) last_woken_lost_.store(true, std::memory_order_relaxed);
    }
    if (at_front) {
      self->next = head_;
      head_ = self;
      if (tail_ == nullptr) tail_ = self;
    } else {
      if (tail_ == nullptr) head_ = self; else tail_->next = self;
      tail_ = self;
    }
    guard_unlock();
    self->flag.await(policy_);
    end_wake_up(self->granted_at);
    return true;
  }

  // The hand-off rule (docs/ADAPTIVE.md, finding 13). After barge_limit
  // acquisitions past waiters, the lock goes to the woken waiter if it has
  // lost the word once since its wake, or to the oldest parked one if that
  // one re-parked after losing: both have run since their wake. A woken
  // waiter that has not yet run may be a ready-queue round away, and every
  // LT that needs the lock meanwhile would park behind the reservation (the
  // text-stats convoy, finding 12); instead unlock() frees the word and
  // yields, so that LTs of our carrier, the woken one among them, get to
  // run. Only after barge_limit x patience_factor acquisitions past waiters
  // does the lock go to the woken or oldest waiter whatever it did.
  //
  // Every path touches the mutex for the last time in one RMW on the word
  // (it frees or reserves the word, or, in a hand-off, takes the waiter out
  // of the count before the grant passes the lock): whoever takes the lock
  // next may destroy the mutex as soon as it unlocks (the usual rule for
  // std::mutex and POSIX), even before this call has returned. What follows
  // that RMW touches only the waiter's node, which cannot run before its
  // grant.
  [[gnu::noinline]] void unlock_slow(word_type w) noexcept {
    quiet_acquisitions_ = 0;
    end_hold();
    // Waiters behind an earlier fast hold, not yet counted: read before the
    // RMW that ends our use of the mutex.
    const bool uncounted = has_uncounted_waiters();
    const bool due = barges_ >= barge_limit_;
    const bool overdue = barges_ >= patience_;
    // While a hand-off is due but nobody can take it, yield once every
    // barge_limit acquisitions past waiters. Still ours: the word is locked.
    const bool yield_due = due && barges_since_yield_ >= barge_limit_;
    if (yield_due) barges_since_yield_ = 0;
    const auto woken_ran = [overdue](word_type x) { return overdue || (x & woken_lost) != 0; };
    // Without the guard: reserve the word for a woken waiter that is due a
    // hand-off, or free it when there is nobody to wake (nobody parked, or a
    // woken waiter already competes).
    node* n = nullptr;
    bool beside_woken = false;    // n is woken as a competing waiter, beside the woken one
    bool no_wake_beside = false;  // the oldest was not parked by the competition bound
    for (;;) {
      if (due && (w & woken) != 0 && woken_ran(w)) {
        // The woken waiter has waited longest (it left the front of the
        // queue; or, where idle carriers do not steal, it was woken out of
        // turn for an idle carrier, and takes this as a pass of the queue):
        // keep the word locked for it. Every other LT must now wait,
        // and waiting yields, so it gets to run if it is not running. If it
        // is re-parking meanwhile, park() finds the reservation.
        // release: pairs with the woken waiter's acquire.
        if (word_.compare_exchange_weak(w, (w | reserved) & ~place_mask, std::memory_order_release,
                                        std::memory_order_relaxed)) {
          return;
        }
        continue;
      }
      const bool may_wake_beside =
          wakes_beside_woken && !no_wake_beside && !due && (w & (woken | woken_lost)) == woken;
      if (!has_parked(w) || ((w & woken) != 0 && !may_wake_beside) || (wake_up_is_wasted(w) && !due)) {
        // Nobody to wake, a woken one that has not run (unless the oldest
        // parked one may be woken beside it), or a wake-up that a competing
        // waiter would make useless.
        if (word_.compare_exchange_weak(w, w & ~(locked | place_mask), std::memory_order_release,
                                        std::memory_order_relaxed)) {
          if (yield_due && (has_awake(w) || uncounted)) R::yield();
          return;
        }
        continue;
      }
      // Someone to wake, or to hand the lock to. Under the guard, while we
      // hold the lock, the parked count is the queue's length: a waiter
      // joins the count, and leaves it when it finds the word free, under
      // the guard. Outside it the count can be one more for a moment: a
      // waiter in park() counts itself, finds the word free (before we took
      // it) and takes its count back before it releases the guard; a woken
      // one that re-parks that way also clears WOKEN meanwhile. So the queue
      // can be empty here: then look at the word again.
      guard_lock();
      n = head_;
      if (n != nullptr) {
        if constexpr (!wakes_beside_woken) break;
        // Under the guard, with the lock held, WOKEN cannot change: only a
        // holder sets it, and the woken waiter clears it by acquiring or,
        // under the guard, by re-parking. WOKEN_LOST can, which is harmless.
        w = word_.load(std::memory_order_relaxed);
        if ((w & woken) == 0) break;
        if (n->parked_long && (w & woken_lost) == 0) {
          beside_woken = true;
          break;
        }
        no_wake_beside = true;  // free the word as before
      }
      guard_unlock();
      w = word_.load(std::memory_order_relaxed);
    }
    // Parked waiters, and none woken unless beside_woken (then WOKEN is the
    // other waiter's, which may re-park meanwhile): that stays so while we
    // hold the lock, since only a holder sets WOKEN or takes waiters out of
    // the queue, and a waiter that parks now queues (the word is locked). The count is one
    // more than the queue's length from the pop below to the RMW after it;
    // only a holder relies on it, and we hold the lock.
    node* const ahead_of_turn = due || beside_woken || gathering(w) ? nullptr : unlink_waiter_of_idle_carrier(n);
    if (ahead_of_turn != nullptr) {
      n = ahead_of_turn;
    } else {
      head_ = n->next;
      if (head_ == nullptr) tail_ = nullptr;
    }
    guard_unlock();
    n->out_of_turn = ahead_of_turn != nullptr;  // read by n after the grant
    n->woken_competing = beside_woken;          // likewise
    const bool hand_to_n = due && (overdue || n->lost);
    n->granted_at = start_wake_up();
    if (beside_woken) {
      // Free the word, move n from parked to competing (WOKEN stays the
      // other's), clear our place: one add, as below.
      // release: pairs with the acquire CAS of the next holder.
      word_.fetch_add(competing_one - parked_one - locked - (w & place_mask), std::memory_order_release);
    } else if (hand_to_n) {
      // The word stays LOCKED: ownership passes to n, whose grant below
      // carries our critical section (release/acquire on its flag).
      n->handed_lock = true;
      if constexpr (counts_checks_beside_holder) handed_unrun_.store(true, std::memory_order_relaxed);
      // n's place replaces ours: one add (modulo 2^64, as below).
      word_.fetch_add(n->place - parked_one - (w & place_mask), std::memory_order_relaxed);
    } else {
      // Free the word, mark n woken, take it out of the count, clear our
      // place: one add (modulo 2^64: the subtractions cannot borrow, the
      // bits are set).
      // release: pairs with the acquire CAS of the next holder.
      word_.fetch_add(woken - parked_one - locked - (w & place_mask), std::memory_order_release);
    }
    n->flag.grant();
    if (yield_due && !hand_to_n) R::yield();  // n may be in our carrier's ready queue
  }

  // Where idle carriers do not steal (Argobots; Boost.Fiber, whose idle
  // carriers sleep), a woken waiter runs on the carrier it parked on, and a
  // carrier whose waiters are all parked idles, however much work the
  // others have. The last awake waiter of a carrier keeps it from that
  // while it waits (awake_counts), but once it takes the lock its carrier
  // may have only parked LTs left, and the oldest parked waiter, whom
  // unlock() wakes, may belong to a carrier that is busy anyway. So while the oldest
  // waiter's carrier has an awake waiter (or is the holder's, which runs
  // on), unlock() wakes instead the first of the next idle_carrier_lookahead
  // waiters whose carrier has none and is neither of those two. Paper-coop
  // on Argobots at 64 LTs, where waking the oldest left carriers idle 3%
  // of the time, ran at 0.94-1.00 of ABT_mutex that way and at 0.995-1.02
  // this way, in both of the machine's phases (docs/ADAPTIVE.md, finding
  // 37). Never while a hand-off is due. The waiter woken ahead of the
  // oldest counts as passing it (its acquisition is a barge, and a loss
  // re-parks it at the back), but while it holds WOKEN the oldest cannot be
  // woken, and a hand-off that comes due meanwhile may reserve the word
  // for it first: a turn of the oldest can last about twice barge_limit
  // ("Fairness" at the top). Under guard_, the lock held; `head` is the
  // oldest parked waiter. The places are the carrier modulo 255, plus 1
  // (own_place()), and the counts share slots modulo 32: beyond that many
  // carriers the choice is a guess, never a wrong turn. Returns the waiter,
  // out of the queue, or nullptr.
  static constexpr unsigned idle_carrier_lookahead = 8;

  // Where idle carriers do not steal (and LTs are not time-sliced), one
  // woken waiter at a time drains the queue slowly when each woken waiter
  // is a ready-queue round of other LTs' work from running: in
  // low-contention at 32-64 LTs (384 us of work per LT, 6-12 ms a round)
  // one parked waiter a round, while competing ones barge. The competition
  // bound (competed_long()) parks exactly such waiters. So while the woken
  // waiter has not run yet (no WOKEN_LOST) and no hand-off is due, unlock()
  // also wakes the oldest parked waiter if the bound parked it, as a
  // competing waiter (not WOKEN): its acquisition counts as a barge, and
  // if it loses it re-parks at the back, as a waiter woken out of turn (at
  // the front, several woken beside would re-park in reverse order ahead
  // of the woken one). "Parked by the bound": it parked at one of the
  // bound's checks, after competing 1 ms (a lone waiter or a carrier's last
  // awake one that parks there for its own reason is flagged too). Measured
  // (docs/ADAPTIVE.md, finding 40; 6 cycles of 500 ms against the lock
  // without it): low-contention at 32 LTs, Jain index 0.91 -> 0.98 on
  // Boost.Fiber and 0.86 -> 0.95 on Argobots, at 64 LTs on Boost.Fiber
  // 0.46 -> 0.74; throughput level; but the 99th-percentile wait 43 -> 38
  // ms, 44 -> 51 ms and 103 -> 126 ms (a loser starts again at the back).
  // Waiters parked for any other reason (a park at the first failed check
  // behind another, high-contention, hot-handover) never are: there a
  // second wake-up is a cost on the critical path.
  static constexpr bool wakes_beside_woken = !idle_carriers_steal_v<R> && !preemptive_v<R>;
  node* unlink_waiter_of_idle_carrier(node* head) noexcept {
    // Not where idle carriers steal (nothing idles), nor where LTs are
    // time-sliced (their places are CPUs, not the carriers the counts use).
    if constexpr (idle_carriers_steal_v<R> || preemptive_v<R>) {
      return nullptr;
    } else {
      const auto seat_of = [](word_type place) {
        return static_cast<carrier_seat>(place / place_one - 1) % awake_counts::carrier_slots;
      };
      if (head->place == 0) return nullptr;
      const carrier_seat ours = R::carrier() % awake_counts::carrier_slots;
      const carrier_seat heads = seat_of(head->place);
      if (heads != ours && awake_.count(heads).load(std::memory_order_relaxed) == 0) return nullptr;
      node* before = head;
      unsigned looked = 0;
      for (node* m = head->next; m != nullptr && looked < idle_carrier_lookahead; before = m, m = m->next, ++looked) {
        if (m->place == 0) continue;
        const carrier_seat seat = seat_of(m->place);
        if (seat == heads || seat == ours || awake_.count(seat).load(std::memory_order_relaxed) != 0) continue;
        before->next = m->next;
        if (tail_ == m) tail_ = before;
        return m;
      }
      return nullptr;
    }
  }

  // On a cooperative runtime whose idle carriers steal (our scheduler) a
  // competing waiter, running or in a ready queue, checks the word again
  // within a round of its carrier, so it takes the released word where a
  // parked waiter woken now would run later and, as a rule, lose it and
  // park again: two switches and a queue round trip for nothing
  // (hot-handover there: 0.6 suspends per acquisition, 0.83 of ttas). So
  // there unlock() does not wake while a waiter competes, as Go's spinners
  // keep Unlock from waking (mutexWoken), as long as the last woken waiter
  // lost to a competing one; the parked ones get the lock when a hand-off
  // is due. Where a woken waiter wins, wakes are not wasted and every
  // unlock() wakes again: in low-contention, where most releases find
  // nobody competing, a parked waiter skipped on every contended release
  // waited 3-6 times as long at the 99th percentile. Where the kernel
  // time-slices LTs a yielding waiter may not run for several slices while
  // the word stays free and the parked ones sleep (low-contention on OS
  // threads: 0.7 CPU utilisation, 0.71 of the lock that wakes), so there
  // the wake is skipped only if, besides, a competing waiter failed a
  // check during the hold that ends now (hold_watched_): one that ran
  // while the holder held, as in high-contention, where the waiters of the
  // holder's CPU park beside it and the other CPU's one competes alone.
  // There 0.42 wake-ups per acquisition, of which 92% lost the word and
  // parked again (on the holder's CPU, at its yield inside the critical
  // section): 0.81-0.95 of std::mutex at 4-16 threads; with the skip, the
  // quarter beside the holder and the barge limit of 256 together,
  // 1.03-1.20, and none of the three alone or two of them did it
  // (watched_holds_skip_wake_ups; finding 47). Nor where
  // idle carriers do not steal: a parked waiter's work can run only on its
  // own carrier, which meanwhile may have only a waiter yielding in a loop
  // (low-contention on Boost.Fiber and Argobots: 36-76 yields per
  // acquisition instead of 1, 0.98 of the lock that wakes).
  // docs/ADAPTIVE.md, finding 19.
  static constexpr bool skips_wasted_wake_ups = idle_carriers_steal_v<R>;
  bool wake_up_is_wasted(word_type w) const noexcept {
    return skips_wasted_wake_ups && (w & competing_mask) != 0 &&
           last_woken_lost_.load(std::memory_order_relaxed) &&
           (!watched_holds_skip_wake_ups || hold_watched_.load(std::memory_order_relaxed));
  }
  // Where watched_holds_skip_wake_ups: the holder clears hold_watched_ as
  // its hold begins (counted holds only; a fast hold's unlock wakes no
  // one), and a competing waiter sets it at a failed check. One write a
  // hold each way: each writes only if the flag is not yet what it wants.
  void begin_watched_hold() noexcept {
    if constexpr (watched_holds_skip_wake_ups) {
      if (hold_watched_.load(std::memory_order_relaxed)) hold_watched_.store(false, std::memory_order_relaxed);
    }
  }
  void watch_hold() noexcept {
    if constexpr (watched_holds_skip_wake_ups) {
      if (!hold_watched_.load(std::memory_order_relaxed)) hold_watched_.store(true, std::memory_order_relaxed);
    }
  }

  void guard_lock() noexcept {
    // The queue's own guard: held for a few pointer writes, never across a
    // wait; waiters spin and yield (a holder on our carrier must get to run).
    if (!guard_.exchange(true, std::memory_order_acquire)) return;
    spin_yield_until<R>(policy_, [this] {
      return !guard_.load(std::memory_order_relaxed) && !guard_.exchange(true, std::memory_order_acquire);
    });
  }
  void guard_unlock() noexcept { guard_.store(false, std::memory_order_release); }

  // LOCKED | WOKEN | RESERVED | WOKEN_LOST | FAST_HOLD | competing count |
  // parked count | holder's place
  alignas(detail::cache_line_size) std::atomic<word_type> word_{0};
  // The waiters in wait_out_fast_hold() and, where competes_uncounted, in
  // compete_uncounted(), and no_fast_holds: while any, no hold is fast,
  // except one past waiters that compete uncounted while
  // fast_past_uncounted_waiters(). On the word's line, which try_lock() has just read,
  // so that one load decides. Only decides whether a hold is fast and
  // whether one passes waiters, never who owns the lock: relaxed.
  std::atomic<std::uint32_t> uncounted_waiters_{0};
  // Where competes_uncounted: waiters whose uncounted competition ended by
  // its bounds and that have not yet counted themselves, and waiters in
  // wait_out_fast_hold(). While any, no hold begun past uncounted waiters
  // is fast, so that they can count themselves (count_in() waits out a
  // fast hold, and ends at the first check that finds none). Relaxed, as
  // uncounted_waiters_.
  std::atomic<std::uint32_t> counting_in_{0};
  // Where watched_holds_skip_wake_ups: a competing waiter failed a check
  // during the current counted hold. On the word's line, which the
  // holder's unlock() takes anyway. Only decides whether to wake: relaxed.
  std::atomic<bool> hold_watched_{false};
  // Holder only: acquisitions past waiters since the last turn (a woken or
  // handed waiter acquired), and since the last such yield in unlock().
  std::uint32_t barges_ = 0;
  std::uint32_t barges_since_yield_ = 0;
  // Holder only: acquisitions of an idle mutex kept counted by
  // no_fast_holds since the last unlock_slow().
  std::uint32_t quiet_acquisitions_ = 0;
  // The sampled holds (see start_hold()).
  // Written by the holder (and, where no place is noted, cleared by a first
  // waiter), read by waiters.
  std::uint32_t slow_acquisitions_ = 0;  // holder only
  std::uint32_t wake_ups_ = 0;           // holder only
  std::atomic<std::int64_t> held_since_{0};  // clock_ns() of a timed hold's start; 0: none
  std::atomic<std::int64_t> hold_ns_{0};     // moving average of the timed holds
  alignas(detail::cache_line_size) std::atomic<bool> guard_{false};  // guards head_, tail_ and the parked count
  node* head_ = nullptr;  // oldest parked waiter
  node* tail_ = nullptr;
  // Where skips_wasted_wake_ups: the last woken waiter lost the word and
  // parked again (set under guard_ by that waiter), until a woken waiter
  // wins the word (cleared by it). Starts set: until a wake-up has paid
  // off, a competing waiter is trusted to take the word. It only decides
  // whether to wake, never who owns the lock: relaxed.
  std::atomic<bool> last_woken_lost_{true};
  // Where gathers_waiters or competes_uncounted: failed checks beside the
  // holder, less sampled holds, from 0 to beside_checks_cap (see gathering()
  // and holds_suit_uncounted_competition()). On the guard's
  // line: waiters write it only at a check beside a holder that is not
  // running, and parking touches this line anyway.
  std::atomic<std::int32_t> beside_checks_{0};
  // Where counts_checks_beside_holder: unlock() handed the lock to a
  // parked waiter that has not yet run (set by the holder that hands it,
  // cleared by that waiter once it runs; see count_check_beside_holder()).
  // On this line, which the hand-off's guard took anyway. Only decides
  // what a waiter counts: relaxed.
  std::atomic<bool> handed_unrun_{false};
  wait_policy policy_;  // read-only after construction; suspend_after 0 or 1
  std::uint32_t barge_limit_;
  std::uint32_t patience_;  // barge_limit_ x patience_factor
  std::atomic<std::int64_t> wake_up_ns_{0};  // moving average of the timed wake-ups; written by woken or handed waiters
  [[no_unique_address]] std::conditional_t<idle_carriers_steal_v<R>, no_awake_counts, awake_counts> awake_;
};

}  // namespace fibersync
