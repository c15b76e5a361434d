// adaptive_mutex specifics: the starvation bound under an adversary that
// re-acquires in a tight loop, liveness of the queued LTs, and which waiters
// stay awake, and the lifetime rule on the hand-off paths.
// (The generic suites cover exclusion, deadlock, lost wake-ups, try_lock.)
#include <fibersync/fibersync.hpp>
#include <fibersync/runtime/boost_fiber.hpp>
#include <fibersync/runtime/boost_fiber_executor.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

#include "support/adaptive_access.hpp"
#include "support/lifetime.hpp"
#include "support/runtimes.hpp"
#include "support/watchdog.hpp"

namespace fibersync::test {
namespace {
using namespace std::chrono_literals;

// Runs `lts` LTs on one Boost.Fiber carrier: nothing runs in parallel, and
// the LTs take turns in the order their yields give.
void run_on_one_carrier(unsigned lts, const lt_body& body) {
  executor_options o;
  o.carriers = 1;
  run_lts_on_boost_fibers(o, lts, body);
}

struct adversary_stats {
  long worst_bypass = 0;  // acquisitions by others between a victim's arrival and its acquisition
  long victims_done_at = -1;  // adversary acquisitions when the last victim finished
};

// One carrier, so nothing runs between a victim's arrival and its queueing.
// LT 0 is the adversary: it yields only while it holds the lock (so the
// victims run and queue behind it) and re-locks at once after unlock, before
// any queued LT can run. Without a bound it keeps the lock for all its rounds.
template <class M>
adversary_stats run_adversary(M& m, unsigned victims, unsigned victim_rounds, unsigned adversary_rounds) {
  adversary_stats s;
  long total = 0, adversary = 0;
  unsigned victims_left = victims;
  watchdog dog("adaptive adversary", 120s);
  run_on_one_carrier(victims + 1, [&](unsigned lt) {
    if (lt == 0) {
      for (unsigned i = 0; i < adversary_rounds; ++i) {
        m.lock();
        boost_fiber_runtime::yield();
        ++total;
        ++adversary;
        m.unlock();
      }
      return;
    }
    for (unsigned i = 0; i < victim_rounds; ++i) {
      const long arrival = total;
      m.lock();
      s.worst_bypass = std::max(s.worst_bypass, total - arrival);
      ++total;
      m.unlock();
      boost_fiber_runtime::yield();
    }
    if (--victims_left == 0) s.victims_done_at = adversary;
  });
  std::printf("[ info     ] worst bypass %ld; victims done after %ld adversary acquisitions\n", s.worst_bypass,
              s.victims_done_at);
  return s;
}

TEST(adaptive_mutex, adversary_cannot_starve_queued_lts) {
  constexpr unsigned victims = 4;
  constexpr std::uint32_t barge_limit = 8;
  constexpr unsigned suspend_after = 4;
  adaptive_mutex<boost_fiber_runtime> m(wait_policy{}.with_yield_every(1).with_suspend_after(suspend_after), barge_limit);
  const adversary_stats s = run_adversary(m, victims, 200, 20000);
  // A victim competes for at most suspend_after failed checks (one, while
  // another victim competes); between two of them every other LT runs once
  // on the one carrier, so each costs at most `victims` acquisitions. Then
  // it parks behind at most the other victims, and the front of the queue
  // gets the lock at least every barge_limit + 1 acquisitions: once woken it
  // runs while the adversary yields inside, fails, and so has run when the
  // hand-off is due. (Its unannounced spin before them never yields, so on
  // one carrier it costs no acquisitions. The control below reaches ~2000.)
  EXPECT_LE(s.worst_bypass,
            static_cast<long>(suspend_after * victims + (victims - 1) * (barge_limit + 1) + barge_limit));
  EXPECT_GE(s.victims_done_at, 0);
  EXPECT_LT(s.victims_done_at, 20000) << "the victims finished only after the adversary stopped";
}

TEST(adaptive_mutex, without_the_barge_limit_the_adversary_starves_them) {
  // The control: the same schedule with the hand-off disabled shows what the
  // bound prevents (and that the test above can fail).
  adaptive_mutex<boost_fiber_runtime> m(wait_policy{}.with_yield_every(1).with_suspend_after(4),
                                        std::numeric_limits<std::uint32_t>::max());
  const adversary_stats s = run_adversary(m, 4, 20, 2000);
  EXPECT_GE(s.worst_bypass, 2000 - 1);
}

// The session 4 hang (docs/ADAPTIVE.md): a waiter sits in the ready queue of
// the carrier whose running LT keeps re-locking. That LT never waits (the
// waiter cannot compete before it runs), so it never yields, and the waiter
// never runs. One carrier makes it deterministic: LT 0 holds the lock across
// yields while the victims fail, then re-locks in a loop that never yields by
// itself until the victims are done. Within barge_limit + 1 acquisitions LT 0
// must yield, in unlock(): the victims only compete, or the woken one has not
// run since its wake. LT 0 never has to wait: a word is reserved (or handed)
// only for a woken victim that has run and lost it (docs/ADAPTIVE.md, finding
// 13); the session 11 lock reserved it for the woken victim still in the ready
// queue, and LT 0 waited.
//   victims_park: two victims, so one of them parks (the last competing
//   waiter never parks) and is woken by LT 0's first unlock; otherwise one
//   victim that only competes.
//   holder_yields: how often LT 0 yields while holding the lock, i.e. how
//   often each victim fails before LT 0's loop. One is the edge case: a
//   waiter that yields after its first failed check must already be known
//   to the holder (a "quiet" first wait that yielded without a trace hung
//   here, docs/ADAPTIVE.md finding 8).
//   short_holds: the mutex's sampled holds are short next to its wake-ups,
//   so a victim competes uncounted (competes_uncounted) and LT 0's holds
//   past it are fast ones: LT 0 must make one of them counted to yield in
//   its unlock() (note_fast_barge()).
void run_victims_behind_a_holder_that_never_waits(bool victims_park, int holder_yields = 16, bool short_holds = false) {
  using counted = counting_runtime<boost_fiber_runtime>;
  constexpr std::uint32_t barge_limit = 8;
  const unsigned suspend_after = victims_park ? 4 : 1u << 30;
  const unsigned victims = victims_park ? 2 : 1;
  adaptive_mutex<counted> m(wait_policy{}.with_yield_every(1).with_suspend_after(suspend_after), barge_limit);
  static_assert(adaptive_mutex<counted>::competes_uncounted);
  if (short_holds) detail::adaptive_mutex_access::set_sampled_averages(m, 1'000, 1'000'000);
  std::atomic<unsigned> victims_done{0};
  long after_release = 0;  // LT 0's acquisitions after its first unlock
  long holder_waits = 0;    // ... of them, the ones that found the word taken
  watchdog dog("adaptive victims behind a holder that never waits", 60s);
  counted::reset();
  run_on_one_carrier(1 + victims, [&](unsigned lt) {
    if (lt != 0) {
      m.lock();
      m.unlock();
      victims_done.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    // Where the victims only compete, LT 0's first hold is a fast one (the
    // victim waits uncounted, in the carrier's ready queue, and LT 0 learns
    // of it only from the mutex's uncounted count): the same hang, in the
    // form it takes with fast holds. A victim can park only in a counted hold.
    lock_counted_if(victims_park, m);
    for (int i = 0; i < holder_yields; ++i) boost_fiber_runtime::yield();  // each victim fails each time
    m.unlock();
    while (victims_done.load(std::memory_order_relaxed) != victims) {
      if (!m.try_lock()) {
        ++holder_waits;
        m.lock();
      }
      ++after_release;
      m.unlock();
    }
  });
  // The case under test: a victim parked (and was woken), or nobody did.
  // Only a victim can park here: LT 0 never waits.
  const std::uint64_t suspends = counted::totals().suspends;
  if (victims_park) {
    EXPECT_GE(suspends, 1u);
  } else {
    EXPECT_EQ(suspends, 0u);
  }
  EXPECT_LE(after_release, static_cast<long>(victims * (barge_limit + 1)));
  EXPECT_EQ(holder_waits, 0);
}

TEST(adaptive_mutex, a_woken_lt_is_not_starved_by_a_holder_that_never_waits) {
  run_victims_behind_a_holder_that_never_waits(/*victims_park=*/true);
}

TEST(adaptive_mutex, a_competing_lt_is_not_starved_by_a_holder_that_never_waits) {
  run_victims_behind_a_holder_that_never_waits(/*victims_park=*/false);
}

TEST(adaptive_mutex, an_lt_that_failed_once_is_not_starved_by_a_holder_that_never_waits) {
  run_victims_behind_a_holder_that_never_waits(/*victims_park=*/false, /*holder_yields=*/1);
}

TEST(adaptive_mutex, an_lt_that_competes_uncounted_is_not_starved_by_a_holder_that_never_waits) {
  run_victims_behind_a_holder_that_never_waits(/*victims_park=*/false, /*holder_yields=*/16, /*short_holds=*/true);
  run_victims_behind_a_holder_that_never_waits(/*victims_park=*/false, /*holder_yields=*/1, /*short_holds=*/true);
}

// The waiters an adaptive_mutex counts in its word, and those counted only
// in uncounted_waiters_ (behind a fast hold, or competing uncounted).
struct waiters_seen {
  detail::adaptive_mutex_access::waiter_counts counted;
  std::uint32_t uncounted = 0;
  bool operator==(const waiters_seen&) const = default;
};
template <class M>
waiters_seen waiters_of(const M& m) {
  return {detail::adaptive_mutex_access::counted_waiters(m), detail::adaptive_mutex_access::uncounted_waiters(m)};
}
// From an LT of one Boost.Fiber carrier: yields `rounds` times (each a
// failed check of every waiter that yields at each), then reads the waiters.
template <class M>
waiters_seen waiters_after_yield_rounds(const M& m, unsigned rounds) {
  for (unsigned i = 0; i < rounds; ++i) boost_fiber_runtime::yield();
  return waiters_of(m);
}

// The scripted tests of the uncounted competition: one Boost.Fiber carrier
// (counted), every failed check a yield, where waiters compete uncounted
// first.
class adaptive_mutex_uncounted_on_one_carrier : public ::testing::Test {
 protected:
  using counted = counting_runtime<boost_fiber_runtime>;
  using M = adaptive_mutex<counted>;
  using access = detail::adaptive_mutex_access;
  static_assert(M::competes_uncounted);
  adaptive_mutex_uncounted_on_one_carrier() { counted::reset(); }
  M m{wait_policy{}.with_yield_every(1).with_suspend_after(4)};
};

// While holds are short next to wake-ups, on a cooperative runtime a waiter
// competes uncounted for up to long_wait_checks failed checks, then counts
// itself; a waiter that counts itself so while another competes parks at
// its first failed check. One carrier: LT 0 holds across yields while LTs
// 1 and 2 fail once at each (each check a yield round, far under the 1 ms
// bound of slow checks).
TEST_F(adaptive_mutex_uncounted_on_one_carrier, while_holds_are_short_waiters_compete_uncounted_within_long_wait_checks) {
  waiters_seen early, late;
  watchdog dog("adaptive uncounted competition", 60s);
  run_on_one_carrier(3, [&](unsigned lt) {
    if (lt == 0) {
      lock_counted(m);
      access::set_sampled_averages(m, 1'000, 1'000'000);  // holds a thousandth of a wake-up
      early = waiters_after_yield_rounds(m, 3);
      late = waiters_after_yield_rounds(m, M::long_wait_checks + 8);
      m.unlock();
      return;
    }
    m.lock();
    m.unlock();
  });
  EXPECT_EQ(early, (waiters_seen{{0, 0, false}, 2}));
  // At its bound LT 1 counted itself while LT 2 still competed uncounted,
  // and parked (LT 2, awake on the carrier, counts as another competing
  // waiter); LT 2 then counted itself and competes (the last competing
  // waiter stays awake).
  EXPECT_EQ(late, (waiters_seen{{1, 1, false}, 0}));
  EXPECT_GE(counted::totals().suspends, 1u);
}

// A waiter whose uncounted competition ended by its bounds, behind a fast
// hold, waits for that hold to end and then counts itself: meanwhile
// (counting_in_) the holds begun past it are counted ones, so a holder that
// re-locks at once cannot keep it behind fast holds, which nobody can count
// itself behind. One carrier: LT 0 holds a fast hold (begun on the idle
// word: no place noted, so no check is beside it) across more yields than
// long_wait_checks, while LTs 1 and 2 compete uncounted and fail once at
// each; then it unlocks and locks again within one run.
TEST_F(adaptive_mutex_uncounted_on_one_carrier, a_waiter_past_its_uncounted_bounds_is_not_kept_behind_fast_holds) {
  bool first_fast = false, relock_fast = true;
  waiters_seen early, at_bound, after;
  watchdog dog("adaptive waiter past its uncounted bounds", 60s);
  run_on_one_carrier(3, [&](unsigned lt) {
    if (lt == 0) {
      m.lock();  // the idle word: a fast hold
      first_fast = access::holds_fast(m);
      access::set_sampled_averages(m, 1'000, 1'000'000);  // holds a thousandth of a wake-up
      early = waiters_after_yield_rounds(m, 3);
      // Both past their bounds, waiting out the fast hold to count themselves.
      at_bound = waiters_after_yield_rounds(m, M::long_wait_checks + 8);
      m.unlock();
      m.lock();  // past them, in the same run
      relock_fast = access::holds_fast(m);
      after = waiters_after_yield_rounds(m, 3);
      m.unlock();
      return;
    }
    m.lock();
    m.unlock();
  });
  ASSERT_TRUE(first_fast);
  EXPECT_EQ(early, (waiters_seen{{0, 0, false}, 2}));
  EXPECT_EQ(at_bound, (waiters_seen{{0, 0, false}, 2}));
  // The case under test: the hold begun past them is a counted one ...
  EXPECT_FALSE(relock_fast);
  // ... behind which both counted themselves.
  EXPECT_EQ(after.uncounted, 0u);
  EXPECT_EQ(after.counted.competing + after.counted.parked, 2u);
}

// The patience limit: a woken waiter that does not get to run is handed the
// lock after barge_limit x patience_factor acquisitions past waiters, even
// though it never lost it. One carrier, barge_limit 1: LT 0 holds the lock
// while LT 1 (the last competing waiter: it stays awake) and LT 2 (parks)
// fail, then releases it, which wakes LT 2 to the back of the ready queue,
// behind LT 1 and `loopers` LTs that re-lock in a loop. Each of those yields
// only in unlock(), once per acquisition past waiters (barge_limit 1), and
// then the next one runs: without the limit LT 2 would run, and acquire,
// only after LT 1 and every looper had acquired once (4 x patience + 1).
// With it, the 32nd acquisition past LT 2 reserves the word for it; the
// loopers then wait, waiting yields, and LT 2 runs.
TEST(adaptive_mutex, a_woken_lt_that_cannot_run_gets_the_lock_within_the_patience_limit) {
  using M = adaptive_mutex<boost_fiber_runtime>;
  constexpr std::uint32_t barge_limit = 1;
  constexpr unsigned patience = barge_limit * M::patience_factor;
  constexpr unsigned loopers = 4 * patience;
  M m(wait_policy{}.with_yield_every(1).with_suspend_after(4), barge_limit);
  std::atomic<bool> held{false}, released{false}, woken_done{false};
  long total = 0;          // acquisitions, counted inside the critical sections
  long woken_bypass = -1;  // acquisitions by others between LT 2's lock() and its acquisition
  watchdog dog("adaptive patience limit", 60s);
  run_on_one_carrier(3 + loopers, [&](unsigned lt) {
    if (lt == 0) {
      m.lock();
      ++total;
      held.store(true, std::memory_order_relaxed);
      for (int i = 0; i < 4; ++i) boost_fiber_runtime::yield();  // LTs 1 and 2 fail; LT 2 parks
      released.store(true, std::memory_order_relaxed);
      m.unlock();
      return;
    }
    if (lt <= 2) {
      while (!held.load(std::memory_order_relaxed)) boost_fiber_runtime::yield();
      const long arrival = total;
      m.lock();
      if (lt == 2) woken_bypass = total - arrival;
      ++total;
      m.unlock();
      if (lt == 2) woken_done.store(true, std::memory_order_relaxed);
      return;
    }
    while (!released.load(std::memory_order_relaxed)) boost_fiber_runtime::yield();
    while (!woken_done.load(std::memory_order_relaxed)) {
      m.lock();
      ++total;
      m.unlock();
    }
  });
  std::printf("[ info     ] the woken LT was passed %ld times\n", woken_bypass);
  EXPECT_GE(woken_bypass, 1);  // LT 1 at least passed it: it was woken, not handed the lock
  EXPECT_LE(woken_bypass, static_cast<long>(patience));
}

// The unannounced spin never yields, so on one carrier it cannot end before
// the holder runs again: it must stay short whatever the policy says. With
// the largest max_backoff it is two of the waiter's longest backoffs (2 x
// 2^16 pauses, milliseconds); uncapped, 2 x (2^32 - 1) would wrap to 2^32 - 2
// pauses (minutes per lock()) and the watchdog would fire.
TEST(adaptive_mutex, the_unannounced_spin_stays_short_with_the_largest_max_backoff) {
  adaptive_mutex<boost_fiber_runtime> m(
      wait_policy{}.with_max_backoff(std::numeric_limits<std::uint32_t>::max()).with_yield_every(1));
  long counter = 0;
  watchdog dog("adaptive unannounced spin with the largest max_backoff", 60s);
  run_on_one_carrier(2, [&](unsigned) {
    for (int i = 0; i < 20; ++i) {
      m.lock();
      boost_fiber_runtime::yield();  // the other LT runs, finds the word held and spins
      ++counter;
      m.unlock();
    }
  });
  EXPECT_EQ(counter, 40);
}

// The unannounced spin lasts two of the waiter's longest backoffs and at
// least its floor in time (400 ns), whatever a pause lasts: on fibers
// (max_backoff 4) the floor decides, unless pauses are long; on OS threads
// (max_backoff 64) the backoffs do; with max_backoff 0 there is no spin.
// Had the floor been a count of pauses (session 21), the 13 ns machine
// would spin 8 pauses, ~106 ns (docs/ADAPTIVE.md, finding 20). This checks
// the rule; spin_unannounced() passes it this machine's pause_duration().
// A pause read below 1 ns counts as 1 ns (a clock too coarse for it).
TEST(adaptive_mutex, the_unannounced_spin_lasts_at_least_its_floor_whatever_a_pause_lasts) {
  using M = adaptive_mutex<boost_fiber_runtime>;
  using ns = std::chrono::duration<double, std::nano>;
  const wait_policy fibers = fiber_wait_policy();
  const wait_policy os_threads = wait_policy{};
  EXPECT_EQ(M::unannounced_pauses(fibers, ns(13)), 31u);   // ceil(400 / 13)
  EXPECT_EQ(M::unannounced_pauses(fibers, ns(25)), 16u);
  EXPECT_EQ(M::unannounced_pauses(fibers, ns(140)), 8u);   // 2 x 4 pauses already last longer
  EXPECT_EQ(M::unannounced_pauses(os_threads, ns(13)), 128u);
  EXPECT_EQ(M::unannounced_pauses(os_threads, ns(1)), 400u);
  EXPECT_EQ(M::unannounced_pauses(wait_policy{fibers}.with_max_backoff(0), ns(13)), 0u);
  EXPECT_EQ(M::unannounced_pauses(fibers, ns(0.0)), 400u);
  EXPECT_EQ(M::unannounced_pauses(fibers, ns(std::numeric_limits<double>::quiet_NaN())), 400u);
  for (const double pause : {0.3, 1.0, 7.0, 13.0, 25.0, 65.0, 140.0, 1000.0}) {
    const std::uint32_t pauses = M::unannounced_pauses(fibers, ns(pause));
    EXPECT_GE(pauses * std::max(pause, 1.0), 400.0) << pause << " ns per pause";
    EXPECT_GE(pauses, 8u) << pause << " ns per pause";
  }
  // This machine's pause, measured once: a positive time, the same each call.
  const ns measured = pause_duration();
  EXPECT_GE(measured.count(), 1.0);
  EXPECT_LT(measured.count(), 100'000.0);
  EXPECT_EQ(pause_duration().count(), measured.count());
}

// On a cooperative runtime the spin lasts one sampled hold while the holds
// average between the floor and 2 us (hot-handover's 1.2 us holds: the
// waiter sees the release within a pause instead of after a yield,
// docs/ADAPTIVE.md, finding 54); no hold timed, shorter holds and longer
// ones keep the floor, and OS threads keep it whatever the holds.
TEST(adaptive_mutex, the_unannounced_spin_covers_one_sampled_hold_of_up_to_2_us_on_a_cooperative_runtime) {
  using fibers_mutex = adaptive_mutex<boost_fiber_runtime>;
  using threads_mutex = adaptive_mutex<os_thread_runtime>;
  using ns = std::chrono::duration<double, std::nano>;
  const wait_policy fibers = fiber_wait_policy();
  const wait_policy os_threads = wait_policy{};
  EXPECT_EQ(fibers_mutex::unannounced_pauses(fibers, ns(13), 1200), 93u);  // ceil(1200 / 13)
  EXPECT_EQ(fibers_mutex::unannounced_pauses(fibers, ns(10), 2000), 200u);
  EXPECT_EQ(fibers_mutex::unannounced_pauses(fibers, ns(10), 2001), 40u);   // beyond the ceiling: the floor
  EXPECT_EQ(fibers_mutex::unannounced_pauses(fibers, ns(10), 300'000), 40u);
  EXPECT_EQ(fibers_mutex::unannounced_pauses(fibers, ns(10), 250), 40u);    // under the floor: the floor
  EXPECT_EQ(fibers_mutex::unannounced_pauses(fibers, ns(10), 0), 40u);      // none timed
  EXPECT_EQ(fibers_mutex::unannounced_pauses(fibers, ns(400), 1200), 8u);   // 2 x 4 pauses already last longer
  EXPECT_EQ(fibers_mutex::unannounced_pauses(wait_policy{fibers}.with_max_backoff(0), ns(10), 1200), 0u);
  EXPECT_EQ(threads_mutex::unannounced_pauses(fibers, ns(10), 1200), 40u);
  EXPECT_EQ(threads_mutex::unannounced_pauses(os_threads, ns(1), 1200), 400u);
  for (const std::int64_t hold : {401, 800, 1200, 1999, 2000}) {
    const std::uint32_t pauses = fibers_mutex::unannounced_pauses(fibers, ns(7), hold);
    EXPECT_GE(pauses * 7.0, static_cast<double>(hold)) << hold << " ns holds";
    EXPECT_LT((pauses - 1) * 7.0, static_cast<double>(hold)) << hold << " ns holds";
  }
}

// A second competing waiter parks at its first failed check, not after the
// policy's suspend_after (4 here), and on its node it suspends at its first
// failed check too. One carrier: LT 0 holds the lock across `holder_yields`
// yields; LT 1 fails first and, the only competing waiter, keeps competing
// (it never suspends); LT 2 then fails while LT 1 competes, parks at once and
// suspends in the same turn. Had it competed for 4 checks first (session 9),
// or waited on its node for the policy's 4 checks (session 10), it would
// suspend only in its 4th turn: with 2 holder yields, not before the unlock.
// Returns the suspends made before LT 0's unlock.
std::uint64_t suspends_while_two_lts_compete(std::uint32_t suspend_after, int holder_yields) {
  using counted = counting_runtime<boost_fiber_runtime>;
  adaptive_mutex<counted> m(wait_policy{}.with_yield_every(1).with_suspend_after(suspend_after));
  std::atomic<bool> held{false};
  std::uint64_t before_unlock = 0;
  watchdog dog("adaptive second competing waiter", 60s);
  counted::reset();
  run_on_one_carrier(3, [&](unsigned lt) {
    if (lt == 0) {
      lock_counted(m);
      held.store(true, std::memory_order_relaxed);
      for (int i = 0; i < holder_yields; ++i) boost_fiber_runtime::yield();  // LTs 1 and 2 fail each time
      before_unlock = counted::totals().suspends;
      m.unlock();
      return;
    }
    while (!held.load(std::memory_order_relaxed)) boost_fiber_runtime::yield();
    m.lock();
    m.unlock();
  });
  return before_unlock;
}

TEST(adaptive_mutex, a_second_competing_waiter_parks_and_suspends_at_its_first_failed_check) {
  EXPECT_EQ(suspends_while_two_lts_compete(4, /*holder_yields=*/2), 1u);  // LT 2, in its first turn
  EXPECT_EQ(suspends_while_two_lts_compete(4, /*holder_yields=*/5), 1u);  // LT 1, the last competing waiter, never
  EXPECT_EQ(suspends_while_two_lts_compete(0, /*holder_yields=*/2), 0u);  // a policy that never suspends
  EXPECT_EQ(suspends_while_two_lts_compete(0, /*holder_yields=*/5), 0u);
}

// Which adapters keep an awake waiter per carrier (counting_runtime forwards).
static_assert(idle_carriers_steal_v<os_thread_runtime>);
static_assert(idle_carriers_steal_v<counting_runtime<os_thread_runtime>>);
static_assert(!idle_carriers_steal_v<boost_fiber_runtime>);
static_assert(!idle_carriers_steal_v<counting_runtime<boost_fiber_runtime>>);

// Boost.Fiber on one real carrier, where each LT reports the carrier the
// test assigns it: a deterministic stand-in for LTs spread over carriers that
// do not take work from each other. Counts suspends per assigned carrier.
// Preemptive only changes what the runtime tells the mutex (the fibers still
// switch only when they yield or suspend), and so does BusyCarriersSteal.
// Counts yields and resumes too.
template <bool IdleCarriersSteal, bool Preemptive = false, bool BusyCarriersSteal = false>
struct assigned_carriers_runtime {
  using base = boost_fiber_runtime;
  using handle = base::handle;
  static constexpr std::string_view name = "assigned_carriers";
  static constexpr bool idle_carriers_steal = IdleCarriersSteal;
  static constexpr bool preemptive = Preemptive;
  static constexpr bool busy_carriers_steal = BusyCarriersSteal;
  static inline std::map<handle, unsigned> carrier_of;  // one OS thread: no lock needed
  static inline std::map<unsigned, unsigned> suspends;
  static inline unsigned resumes = 0;
  static inline unsigned yields = 0;
  static inline std::map<handle, bool> suspended;  // LTs now in suspend()
  static inline std::vector<handle> resumed;        // in the order resume() was called
  static void reset() {
    carrier_of.clear();
    suspends.clear();
    resumes = 0;
    yields = 0;
    suspended.clear();
    resumed.clear();
  }
  static handle current() { return base::current(); }
  static void yield() {
    ++yields;
    base::yield();
  }
  static void suspend() {
    ++suspends[carrier()];
    suspended[current()] = true;
    base::suspend();
    suspended[current()] = false;
  }
  // A wake-up that takes long: resume() first blocks the caller, a releaser
  // in unlock(), for this long (with one carrier, all LTs with it). The
  // releaser's hold has ended and the next one cannot begin meanwhile, so
  // the delay is in the woken waiter's wake-up and in no hold.
  static inline std::chrono::microseconds resume_delay{0};
  static void resume(handle h) {
    ++resumes;
    resumed.push_back(h);
    if (resume_delay.count() != 0) std::this_thread::sleep_for(resume_delay);
    base::resume(h);
  }
  static unsigned carrier() { return carrier_of[current()]; }
  // Runs `lts` LTs on one real carrier; LT i counts as running on carrier
  // carrier_of_lt(i), or on carrier 0.
  template <class CarrierOf, class Body>
  static void run_lts(unsigned lts, CarrierOf carrier_of_lt, Body body) {
    run_on_one_carrier(lts, [&](unsigned lt) {
      carrier_of[current()] = carrier_of_lt(lt);
      body(lt);
    });
  }
  template <class Body>
  static void run_lts(unsigned lts, Body body) {
    run_lts(lts, [](unsigned) { return 0u; }, body);
  }
};

// The holds that waiters compete uncounted behind are timed, one in
// sample_every (the uncounted competition depends on the averages): three
// LTs, each on a carrier of its own (so no waiter runs beside a holder),
// hold for 50 us each, yielding first so that the others wait, from
// averages that say holds last 1 us.
TEST(adaptive_mutex, the_holds_waiters_compete_uncounted_behind_are_timed) {
  using R = assigned_carriers_runtime</*IdleCarriersSteal=*/false>;
  using access = detail::adaptive_mutex_access;
  R::reset();
  adaptive_mutex<R> m(wait_policy{}.with_yield_every(1).with_suspend_after(4));
  static_assert(adaptive_mutex<R>::competes_uncounted);
  access::set_sampled_averages(m, 1'000, 1'000'000);
  unsigned uncounted_seen = 0;  // one OS thread: a plain variable
  watchdog dog("adaptive uncounted holds timed", 60s);
  R::run_lts(3, [](unsigned lt) { return lt; }, [&](unsigned) {
    for (int turn = 0; turn < 40; ++turn) {
      m.lock();
      R::yield();  // the others fail a check
      uncounted_seen += access::uncounted_waiters(m) != 0 ? 1 : 0;
      const auto until = std::chrono::steady_clock::now() + 50us;
      while (std::chrono::steady_clock::now() < until) {
      }
      m.unlock();
      R::yield();
    }
  });
  // The scenario: waiters competed uncounted in most of the 120 holds, and
  // nobody parked.
  ASSERT_GE(uncounted_seen, 80u);
  EXPECT_EQ(R::suspends[0] + R::suspends[1] + R::suspends[2], 0u);
  EXPECT_GT(access::sampled_hold_ns(m), 5'000);
}

// LT 0 holds the lock across `holder_yields` yields, on one real carrier;
// LTs 1..lts-1 wait, each failing once per yield, on the carrier
// `carrier_of_lt` assigns. Returns the suspends per assigned carrier.
template <bool IdleCarriersSteal, class CarrierOf>
std::map<unsigned, unsigned> suspends_on_assigned_carriers(unsigned lts, int holder_yields, CarrierOf carrier_of_lt) {
  using R = assigned_carriers_runtime<IdleCarriersSteal>;
  R::reset();
  adaptive_mutex<R> m(wait_policy{}.with_yield_every(1).with_suspend_after(4));
  watchdog dog("adaptive waiters on assigned carriers", 60s);
  R::run_lts(lts, carrier_of_lt, [&](unsigned lt) {
    if (lt == 0) {
      lock_counted(m);
      for (int i = 0; i < holder_yields; ++i) R::yield();
      m.unlock();
      return;
    }
    m.lock();
    m.unlock();
  });
  return R::suspends;
}

// Three waiters fail 40 times each, long enough to park: LTs 1 and 2
// together on carrier 0, LT 3 alone on carrier 1. LT 1, the first, is the
// only competing waiter when it fails, so it never parks.
template <bool IdleCarriersSteal>
std::map<unsigned, unsigned> park_waiters_on_assigned_carriers() {
  return suspends_on_assigned_carriers<IdleCarriersSteal>(4, 40, [](unsigned lt) { return lt == 3 ? 1u : 0u; });
}

TEST(adaptive_mutex, the_last_awake_waiter_of_a_carrier_does_not_park_where_idle_carriers_do_not_steal) {
  // LT 3 is the only waiter of carrier 1: parked, it would leave that carrier
  // with nothing to run, so it does not park although LT 1 competes. Of
  // carrier 0's two waiters LT 2 parks.
  auto suspends = park_waiters_on_assigned_carriers</*IdleCarriersSteal=*/false>();
  EXPECT_EQ(suspends[1], 0u);
  EXPECT_EQ(suspends[0], 1u);
}

TEST(adaptive_mutex, carriers_share_an_awake_count_only_modulo_its_slots) {
  // The awake counts have a fixed number of slots (carrier index modulo
  // that number): carriers that many apart count as one, nearer ones apart
  // (their slots lie on different lines or at different places of one).
  using R = assigned_carriers_runtime</*IdleCarriersSteal=*/false>;
  constexpr unsigned slots = detail::adaptive_mutex_access::awake_carrier_slots<adaptive_mutex<R>>;
  static_assert(slots >= 2);
  // LT 3 on the last carrier of its own slot: alone there, it stays awake.
  auto apart = suspends_on_assigned_carriers<false>(4, 40, [](unsigned lt) { return lt == 3 ? slots - 1 : 0u; });
  EXPECT_EQ(apart[slots - 1], 0u);
  EXPECT_EQ(apart[0], 1u);
  // LT 3 on carrier `slots`: it shares carrier 0's count, where LTs 1 and 2
  // are awake, so it parks like LT 2.
  auto shared = suspends_on_assigned_carriers<false>(4, 40, [](unsigned lt) { return lt == 3 ? slots : 0u; });
  EXPECT_EQ(shared[slots], 1u);
  EXPECT_EQ(shared[0], 1u);
}

TEST(adaptive_mutex, where_idle_carriers_steal_only_the_last_competing_waiter_stays_awake) {
  // The control: the same schedule, where parking never idles a carrier.
  // LTs 2 and 3 park; LT 1, the last competing waiter, does not (it fails
  // 40 times, fewer than long_wait_checks).
  auto suspends = park_waiters_on_assigned_carriers</*IdleCarriersSteal=*/true>();
  EXPECT_EQ(suspends[1], 1u);
  EXPECT_EQ(suspends[0], 1u);
}

// assigned_carriers_runtime where idle carriers do not steal, with two more
// tools for scripting a schedule step by step. The test can hold an LT back
// in its next yield: it stays there, still counted as a competing and awake
// waiter of its carrier, like an LT in a ready queue that does not get to
// run, and takes no word. And it counts each LT's yields and suspends made
// through the runtime, that is, the mutex's (the scripts below wait for
// their start on boost_fiber_runtime::yield(), uncounted).
struct scripted_carriers_runtime : assigned_carriers_runtime</*IdleCarriersSteal=*/false> {
  using assigned = assigned_carriers_runtime<false>;
  static inline std::set<handle> held_back;  // one OS thread: no lock needed
  static inline std::map<handle, unsigned> yields_of;
  static inline std::map<handle, unsigned> suspends_of;
  static void reset() {
    assigned::reset();
    held_back.clear();
    yields_of.clear();
    suspends_of.clear();
  }
  static void yield() {
    ++yields_of[current()];
    do {
      assigned::yield();
    } while (held_back.count(current()) != 0);
  }
  static void suspend() {
    ++suspends_of[current()];
    assigned::suspend();
  }
};

// Seven LTs on one real carrier, LT i on carrier carriers[i] (LT 0 on
// carrier 0), around one mutex with barge limit `barge_limit`. LT 0 takes the
// lock (a counted hold) and runs a director, the test's script: it starts
// the other LTs one at a time (each then calls lock() once, and unlock()
// right after its acquisition), moves them to other carriers, holds them
// back, and releases and re-takes the lock, checking the mutex's state
// between its own yields, when nothing else runs. After the director, LT 0
// lets the held-back LTs go and releases the lock if it holds it; the LTs
// never started do not lock. Records the order of the acquisitions, the
// mutex's barge count right after each, and which LT each of the director's
// unlock() calls resumed first.
class idle_carrier_script {
 public:
  using R = scripted_carriers_runtime;
  using access = detail::adaptive_mutex_access;
  static constexpr unsigned lts = 7;

  idle_carrier_script(std::array<unsigned, lts> carriers, std::uint32_t barge_limit)
      : carriers_(carriers), m_((R::reset(), wait_policy{}.with_yield_every(1).with_suspend_after(4)), barge_limit) {}

  template <class Director>
  void run(Director director) {
    watchdog dog("adaptive idle-carrier script", 60s);
    R::run_lts(lts, [this](unsigned lt) { return carriers_[lt]; }, [&](unsigned lt) {
      handle_of_[lt] = R::current();
      lt_of_[R::current()] = lt;
      ++registered_;
      if (lt == 0) {
        while (registered_ != lts) boost_fiber_runtime::yield();
        lock_counted(m_);
        holding_ = true;
        director(*this);
        finishing_ = true;
        R::held_back.clear();
        if (holding_) unlock();
        return;
      }
      while (!started_[lt] && !finishing_) boost_fiber_runtime::yield();
      if (!started_[lt]) return;
      m_.lock();
      acquired_by.push_back(lt);
      barges_at_acquisition[lt] = static_cast<long>(access::barges(m_));
      m_.unlock();
    });
  }

  // Director only. Starts LT `lt` and yields until it has failed a check:
  // it then competes (it yielded) or has parked; `parks` says which.
  void start(unsigned lt, bool parks) {
    const R::handle h = handle_of_[lt];
    const unsigned yields = R::yields_of[h];
    started_[lt] = true;
    EXPECT_TRUE(yield_until([&] { return R::suspended[h] || R::yields_of[h] != yields; }))
        << "LT " << lt << " never failed a check";
    EXPECT_EQ(R::suspended[h], parks) << "LT " << lt;
  }
  // Moves competing LT `lt` to `carrier` and yields until its awake count
  // has moved there, at its next failed check (where another waiter
  // competes: see lock_slow()). Alone there, it keeps competing.
  void move(unsigned lt, unsigned carrier) {
    const R::handle h = handle_of_[lt];
    const unsigned from = R::carrier_of[h];
    const std::uint32_t awake_before = access::awake_on_carrier(m_, from);
    R::carrier_of[h] = carrier;
    EXPECT_TRUE(yield_until([&] { return access::awake_on_carrier(m_, from) < awake_before; }))
        << "LT " << lt << " did not move";
    EXPECT_FALSE(R::suspended[h]) << "LT " << lt;
  }
  void hold_back(std::initializer_list<unsigned> held) {
    for (const unsigned lt : held) R::held_back.insert(handle_of_[lt]);
  }
  void lock() {
    m_.lock();
    holding_ = true;
  }
  // Releases the lock; returns the LT that this unlock() resumed first, or
  // -1 if it resumed none.
  int unlock() {
    const std::size_t before = R::resumed.size();
    holding_ = false;
    m_.unlock();
    return R::resumed.size() > before ? static_cast<int>(lt_of_[R::resumed[before]]) : -1;
  }
  template <class Pred>
  static bool yield_until(Pred done, int limit = 1000) {
    for (int i = 0; i < limit && !done(); ++i) boost_fiber_runtime::yield();
    return done();
  }
  bool parked(unsigned lt) { return R::suspended[handle_of_[lt]]; }
  unsigned suspends_of(unsigned lt) { return R::suspends_of[handle_of_[lt]]; }
  unsigned yields_of(unsigned lt) { return R::yields_of[handle_of_[lt]]; }
  void hold_queue_guard() { access::hold_queue_guard(m_); }
  void release_queue_guard() { access::release_queue_guard(m_); }
  bool reserved_for_woken() const { return access::reserved_for_woken(m_); }
  access::waiter_counts counted_waiters() const { return access::counted_waiters(m_); }
  std::uint32_t uncounted_waiters() const { return access::uncounted_waiters(m_); }
  void set_sampled_averages(std::int64_t hold_ns, std::int64_t wake_up_ns) {
    access::set_sampled_averages(m_, hold_ns, wake_up_ns);
  }
  std::uint32_t barges() const { return access::barges(m_); }
  std::uint32_t awake_on_carrier(unsigned carrier) { return access::awake_on_carrier(m_, carrier); }
  std::vector<unsigned> queue_carriers() const { return access::queue_carriers(m_); }
  bool queue_is_whole() const { return access::queue_is_whole(m_); }
  // After run(): every LT the director started acquired, once.
  bool every_started_lt_acquired() const {
    std::vector<unsigned> started, acquired = acquired_by;
    for (unsigned lt = 1; lt < lts; ++lt)
      if (started_[lt]) started.push_back(lt);
    std::sort(acquired.begin(), acquired.end());
    return acquired == started;
  }
  // After run(): where LT `lt` came in acquired_by (-1: it did not acquire).
  long acquisition_index(unsigned lt) const {
    const auto at = std::find(acquired_by.begin(), acquired_by.end(), lt);
    return at == acquired_by.end() ? -1 : at - acquired_by.begin();
  }

  std::vector<unsigned> acquired_by;                 // LTs 1-6, in the order they acquired
  std::array<long, lts> barges_at_acquisition{-1, -1, -1, -1, -1, -1, -1};  // access::barges() right after

 private:
  std::array<unsigned, lts> carriers_;
  adaptive_mutex<R> m_;
  std::array<R::handle, lts> handle_of_{};
  std::map<R::handle, unsigned> lt_of_;
  std::array<bool, lts> started_{};
  unsigned registered_ = 0;
  bool holding_ = false;
  bool finishing_ = false;
};

// The schedule the tests of the out-of-turn wake below start from, on one
// real carrier. LT 0 holds the lock on carrier 0. LT 1, on the head's
// carrier, waits first and competes (the only competing waiter never
// parks); LT 3, on carrier 2, competes too (the last awake waiter of its
// carrier). `barges_first` times LT 0 then releases the word and re-takes it
// before they run: nobody is parked, so nobody is woken, and each re-lock
// passes LTs 1 and 3, a barge (so barge_limit must be at least
// barges_first: an unlock() due a hand-off yields while waiters are awake,
// and they would take the word). Then LT 2 (the head's carrier) parks, the oldest, LT 4 (carrier
// 2) parks behind it, and, if `third_waiter`, LT 5 (the head's carrier)
// behind LT 4: each has an awake waiter on its carrier while another
// competes. If `leave_carrier_2_idle`, LT 3 then moves to carrier 1: carrier
// 2 has only LT 4 left, parked. If `leave_head_carrier_idle`, LT 1 likewise
// moves to carrier 4. Last, LTs 1 and 3 are held back in their yields: still
// counted awake on their carriers, but they take no word, so what the next
// unlock() does, and what the LT it wakes does, are the script's alone.
// LT 6 (carrier 2) is left for the script.
struct idle_carrier_schedule {
  unsigned head_carrier = 0;  // 0: the holder's
  bool third_waiter = false;
  bool leave_carrier_2_idle = true;
  bool leave_head_carrier_idle = false;
  unsigned barges_first = 0;
  std::uint32_t barge_limit = adaptive_mutex<scripted_carriers_runtime>::default_barge_limit;

  std::array<unsigned, idle_carrier_script::lts> carriers() const {
    return {0, head_carrier, head_carrier, 2, 2, head_carrier, 2};
  }
  void build(idle_carrier_script& s) const {
    s.start(1, /*parks=*/false);
    s.start(3, /*parks=*/false);
    for (unsigned i = 0; i < barges_first; ++i) {
      EXPECT_EQ(s.unlock(), -1);
      s.lock();
    }
    s.start(2, /*parks=*/true);
    s.start(4, /*parks=*/true);
    if (third_waiter) s.start(5, /*parks=*/true);
    if (leave_carrier_2_idle) s.move(3, 1);
    if (leave_head_carrier_idle) s.move(1, 4);
    s.hold_back({1, 3});
    const std::vector<unsigned> queue = third_waiter ? std::vector<unsigned>{head_carrier, 2, head_carrier}
                                                     : std::vector<unsigned>{head_carrier, 2};
    EXPECT_EQ(s.queue_carriers(), queue);
    EXPECT_TRUE(s.queue_is_whole());
    EXPECT_EQ(s.awake_on_carrier(2), leave_carrier_2_idle ? 0u : 1u);
    EXPECT_EQ(s.barges(), barges_first);
  }
};

// Where idle carriers do not steal, unlock() may wake a waiter of a carrier
// left without an awake waiter ahead of the oldest one. The schedule above:
// LT 2, the oldest, parked on the holder's carrier, LT 4 behind it on
// carrier 2; LT 3, carrier 2's awake waiter, has moved to carrier 1, so
// carrier 2 has only LT 4, parked. Returns the LT that LT 0's unlock() then
// resumes, once every LT has acquired (the test checks that they did).
int woken_after(const idle_carrier_schedule& schedule) {
  idle_carrier_script s(schedule.carriers(), schedule.barge_limit);
  int woken = -1;
  s.run([&](idle_carrier_script& d) {
    schedule.build(d);
    woken = d.unlock();
  });
  EXPECT_TRUE(s.every_started_lt_acquired());
  return woken;
}

TEST(adaptive_mutex, unlock_wakes_a_waiter_of_a_carrier_left_without_awake_waiters_before_the_oldest) {
  EXPECT_EQ(woken_after(idle_carrier_schedule{}), 4);  // not the oldest, LT 2
}

TEST(adaptive_mutex, unlock_wakes_the_oldest_waiter_while_every_carrier_has_an_awake_one) {
  // The control: LT 3 stays on carrier 2, awake, so the oldest is woken.
  idle_carrier_schedule schedule;
  schedule.leave_carrier_2_idle = false;
  EXPECT_EQ(woken_after(schedule), 2);
}

// The out-of-turn waiter is the queue's last node (queue: LT 2 on the
// holder's carrier, then LT 4 on carrier 2, left idle). LT 0's unlock()
// wakes LT 4 and unlinks it from the tail, so the tail must move back to LT
// 2's node: the queue is LT 2 alone and whole right after. LT 0 then
// re-takes the word (past the woken LT 4, which runs, fails and, the last
// awake waiter of carrier 2, keeps competing), and LT 5 arrives on carrier 0
// and parks: it must be linked behind LT 2. With the tail left on LT 4's
// node (checked by deleting `if (tail_ == m) tail_ = before;`), the queue
// is not whole after the unlock, LT 5 is linked behind the node out of the
// queue, unreachable, and once LT 2 is gone unlock() loops over an empty
// queue that counts one parked waiter: the watchdog fires. Whole, LT 2 gets
// the lock before LT 5 (both on carrier 0: no out-of-turn wake passes one
// for the other), and every LT gets it.
TEST(adaptive_mutex, an_out_of_turn_wake_of_the_last_parked_waiter_leaves_the_queue_whole_for_the_next) {
  const idle_carrier_schedule schedule;  // head on carrier 0, LT 4 at the tail, carrier 2 idle
  idle_carrier_script s(schedule.carriers(), schedule.barge_limit);
  s.run([&](idle_carrier_script& d) {
    schedule.build(d);
    // Checked here, not after run(): with a broken queue run() never ends.
    EXPECT_EQ(d.unlock(), 4);
    EXPECT_EQ(d.queue_carriers(), (std::vector<unsigned>{0}));
    EXPECT_TRUE(d.queue_is_whole()) << "the tail is not the last node after the unlink";
    d.lock();
    d.start(5, /*parks=*/true);
    EXPECT_EQ(d.queue_carriers(), (std::vector<unsigned>{0, 0}));  // LT 2, then LT 5
    EXPECT_TRUE(d.queue_is_whole()) << "LT 5 was not linked behind LT 2";
  });
  EXPECT_TRUE(s.every_started_lt_acquired());
  EXPECT_LT(s.acquisition_index(2), s.acquisition_index(5));
}

// The hand-off rule's count: a waiter woken out of turn passes the queue's
// head, so its acquisition is a barge (the count goes on), where the oldest
// woken in its turn ends the run of barges (the count restarts at 0). The
// schedule with one barge first (LT 0's re-lock past LTs 1 and 3), so a
// restart shows; LTs 1 and 3 are held back, so the woken LT takes the word
// as soon as it runs, first. With carrier 2 idle LT 0's unlock() wakes LT 4
// out of turn: the count goes from 1 to 2. The control: carrier 2 keeps LT
// 3 awake, LT 0's unlock() wakes LT 2, the oldest: 1 to 0. (With
// `after_waiting_our_turn` true for an out-of-turn waiter in lock_slow()'s
// CAS path, the first went to 0.)
struct woken_acquisition {
  int woken = -1;
  int first_to_acquire = -1;
  std::uint32_t barges_before = 0;  // when LT 0 released
  long barges_after = -1;           // right after the woken LT acquired
};
woken_acquisition barges_after_the_woken_lt_acquires(bool leave_carrier_2_idle) {
  idle_carrier_schedule schedule;
  schedule.barges_first = 1;
  schedule.leave_carrier_2_idle = leave_carrier_2_idle;
  idle_carrier_script s(schedule.carriers(), schedule.barge_limit);
  woken_acquisition r;
  s.run([&](idle_carrier_script& d) {
    schedule.build(d);
    r.barges_before = d.barges();
    r.woken = d.unlock();
    EXPECT_TRUE(d.yield_until([&] { return !d.acquired_by.empty(); }));
  });
  EXPECT_TRUE(s.every_started_lt_acquired());
  if (!s.acquired_by.empty()) {
    r.first_to_acquire = static_cast<int>(s.acquired_by.front());
    r.barges_after = s.barges_at_acquisition[s.acquired_by.front()];
  }
  return r;
}

TEST(adaptive_mutex, an_acquisition_by_a_waiter_woken_out_of_turn_counts_as_a_barge) {
  const woken_acquisition r = barges_after_the_woken_lt_acquires(/*leave_carrier_2_idle=*/true);
  EXPECT_EQ(r.woken, 4);
  EXPECT_EQ(r.first_to_acquire, 4);
  EXPECT_EQ(r.barges_before, 1u);
  EXPECT_EQ(r.barges_after, 2);
}

TEST(adaptive_mutex, an_acquisition_by_the_oldest_waiter_woken_in_its_turn_restarts_the_barge_count) {
  const woken_acquisition r = barges_after_the_woken_lt_acquires(/*leave_carrier_2_idle=*/false);
  EXPECT_EQ(r.woken, 2);
  EXPECT_EQ(r.first_to_acquire, 2);
  EXPECT_EQ(r.barges_before, 1u);
  EXPECT_EQ(r.barges_after, 0);
}

// The same count where a hand-off comes due while the waiter woken out of
// turn holds WOKEN: the word is reserved for it, and its acquisition is
// still a pass of the queue. The schedule with barge limit 1 and no barge
// first: LT 0's unlock() is not due and wakes LT 4 out of turn; LT 0
// re-takes the word at once (a barge: the count is 1, due), LT 4 runs,
// fails (it has run: WOKEN_LOST) and, the last awake waiter of carrier 2,
// keeps competing; LT 0's next unlock() keeps the word reserved for it
// (nobody else is woken or handed it), and LT 4 takes it: 1 to 2. (With
// `after_waiting_our_turn` true for every waiter that finds the word
// reserved, it went to 0.)
TEST(adaptive_mutex, a_waiter_woken_out_of_turn_that_takes_a_word_reserved_for_it_counts_it_as_a_barge) {
  idle_carrier_schedule schedule;
  schedule.barge_limit = 1;
  idle_carrier_script s(schedule.carriers(), schedule.barge_limit);
  std::uint32_t barges_before = 0;
  s.run([&](idle_carrier_script& d) {
    schedule.build(d);
    EXPECT_EQ(d.unlock(), 4);
    d.lock();
    EXPECT_TRUE(d.yield_until([&] { return d.awake_on_carrier(2) == 1; }));  // LT 4 ran and failed
    barges_before = d.barges();
    EXPECT_EQ(d.unlock(), -1);  // reserved for LT 4, which is awake: nobody to resume
    EXPECT_TRUE(d.yield_until([&] { return !d.acquired_by.empty(); }));
  });
  EXPECT_TRUE(s.every_started_lt_acquired());
  ASSERT_FALSE(s.acquired_by.empty());
  EXPECT_EQ(s.acquired_by.front(), 4u);
  EXPECT_EQ(barges_before, 1u);
  EXPECT_EQ(s.barges_at_acquisition[4], 2);
}

// A woken waiter that loses the word re-parks: at the front if it was woken
// in its turn (it keeps its turn), at the back if it was woken out of turn
// (it had none). The schedule with a third waiter: LT 2 (carrier 0), LT 4
// (carrier 2), LT 5 (carrier 0). LT 0 releases, which wakes a waiter, and
// re-takes the word at once, past it. Out of turn (carrier 2 idle) the
// woken LT is LT 4, in the middle: before it runs, LT 6 arrives on carrier
// 2 and competes there, its only awake waiter (LT 6, waiting for its start,
// is ahead of the just resumed LT 4 in the real carrier's ready queue), so
// when LT 4 runs and fails it is not the last awake waiter of its carrier,
// and parks again: behind LT 5, the queue 0, 0, 2. In turn (the control: carrier 2 keeps LT 3 awake) the woken LT is
// LT 2, the head, which finds LT 1 awake on carrier 0 and parks again at
// the front: 0, 2, 0. (With park() putting every woken waiter at the front,
// the first queue was 2, 0, 0.)
struct reparked_waiter {
  int woken = -1;
  unsigned suspends_of_woken = 0;
  bool lt_6_parked = true;
  std::vector<unsigned> queue_carriers;
  bool queue_whole = false;
};
reparked_waiter where_a_woken_waiter_that_loses_parks_again(bool leave_carrier_2_idle) {
  idle_carrier_schedule schedule;
  schedule.third_waiter = true;
  schedule.leave_carrier_2_idle = leave_carrier_2_idle;
  idle_carrier_script s(schedule.carriers(), schedule.barge_limit);
  reparked_waiter r;
  s.run([&](idle_carrier_script& d) {
    schedule.build(d);
    r.woken = d.unlock();
    ASSERT_GE(r.woken, 1);
    d.lock();
    const auto woken = static_cast<unsigned>(r.woken);
    if (leave_carrier_2_idle) {
      d.start(6, /*parks=*/false);
      r.lt_6_parked = d.parked(6);
    }
    EXPECT_TRUE(d.yield_until([&] { return d.suspends_of(woken) == 2 && d.parked(woken); }));
    r.suspends_of_woken = d.suspends_of(woken);
    r.queue_carriers = d.queue_carriers();
    r.queue_whole = d.queue_is_whole();
  });
  EXPECT_TRUE(s.every_started_lt_acquired());
  return r;
}

TEST(adaptive_mutex, a_waiter_woken_out_of_turn_that_loses_parks_again_at_the_back) {
  const reparked_waiter r = where_a_woken_waiter_that_loses_parks_again(/*leave_carrier_2_idle=*/true);
  EXPECT_EQ(r.woken, 4);
  EXPECT_EQ(r.suspends_of_woken, 2u);
  EXPECT_FALSE(r.lt_6_parked);  // so the carrier-2 waiter at the back is LT 4
  EXPECT_EQ(r.queue_carriers, (std::vector<unsigned>{0, 0, 2}));  // LT 2, LT 5, LT 4
  EXPECT_TRUE(r.queue_whole);
}

TEST(adaptive_mutex, the_oldest_waiter_woken_in_its_turn_that_loses_parks_again_at_the_front) {
  const reparked_waiter r = where_a_woken_waiter_that_loses_parks_again(/*leave_carrier_2_idle=*/false);
  EXPECT_EQ(r.woken, 2);
  EXPECT_EQ(r.suspends_of_woken, 2u);
  EXPECT_EQ(r.queue_carriers, (std::vector<unsigned>{0, 2, 0}));  // LT 2, LT 4, LT 5
  EXPECT_TRUE(r.queue_whole);
}

// No out-of-turn wake while a hand-off is due. The schedule with carrier 2
// idle (so an unlock() not due wakes LT 4 out of turn) and one barge first:
// with barge limit 1 LT 0's unlock() is due, and wakes the oldest, LT 2
// (not overdue, and LT 2 has not lost since a wake: woken, not handed the
// lock); with barge limit 0 it is overdue too, and hands the lock to LT 2
// (no barge first there: every unlock() is due, and would yield to the
// competing LTs). The control, barge limit 2: not due, LT 4. (With
// unlink_waiter_of_idle_carrier() called whether due or not, the first two
// woke LT 4.)
int woken_by_an_unlock_with_barges(std::uint32_t barge_limit, unsigned barges_first) {
  idle_carrier_schedule schedule;
  schedule.barges_first = barges_first;
  schedule.barge_limit = barge_limit;
  return woken_after(schedule);
}

TEST(adaptive_mutex, unlock_wakes_or_hands_the_lock_to_the_oldest_waiter_while_a_hand_off_is_due) {
  EXPECT_EQ(woken_by_an_unlock_with_barges(/*barge_limit=*/1, /*barges_first=*/1), 2);
  EXPECT_EQ(woken_by_an_unlock_with_barges(/*barge_limit=*/0, /*barges_first=*/0), 2);
  // The control.
  EXPECT_EQ(woken_by_an_unlock_with_barges(/*barge_limit=*/2, /*barges_first=*/1), 4);
}

// A woken waiter that loses re-parks, and a hand-off may come due while it
// is on its way into the queue: then park() finds the word reserved for it
// and takes the lock instead of suspending (nobody would wake it: the word
// stays locked for the woken waiter, which alone may take it). The schedule
// with barge limit 1 and every carrier awake: LT 0's unlock() wakes LT 2, the
// oldest (not due: no barge yet), and LT 0 re-takes the word at once, a
// barge, and takes the queue's guard. LT 2 runs, fails (WOKEN_LOST), finds
// LT 1 awake on its carrier and re-parks; in park() it waits for the guard,
// yielding. LT 0 releases and re-takes the word until the barges reach the
// patience limit (barge limit x patience_factor), each unlock() freeing the
// word (WOKEN_LOST is gone, so the woken waiter has not "run" for the
// hand-off rule until then), and the next one reserves it for LT 2. LT 0
// releases the guard: LT 2 must take the lock there, in its turn (the barge
// count restarts), with no second suspend. (With park()'s reserved-word
// branch deleted, LT 2 parks at the front under a word reserved for it,
// nobody wakes it, the competing LTs never get the word, and the watchdog
// fires.)
TEST(adaptive_mutex, a_woken_waiter_re_parking_takes_the_lock_when_it_finds_the_word_reserved_for_it) {
  idle_carrier_schedule schedule;
  schedule.leave_carrier_2_idle = false;
  schedule.barge_limit = 1;
  const std::uint32_t patience = schedule.barge_limit * adaptive_mutex<scripted_carriers_runtime>::patience_factor;
  idle_carrier_script s(schedule.carriers(), schedule.barge_limit);
  bool reserved = false;
  s.run([&](idle_carrier_script& d) {
    schedule.build(d);
    EXPECT_EQ(d.unlock(), 2);
    d.lock();
    d.hold_queue_guard();
    const unsigned yields = d.yields_of(2);
    EXPECT_TRUE(d.yield_until([&] { return d.yields_of(2) > yields; })) << "LT 2 never reached the guard";
    EXPECT_FALSE(d.parked(2));
    while (d.barges() < patience) {
      EXPECT_EQ(d.unlock(), -1);
      EXPECT_FALSE(d.reserved_for_woken());
      d.lock();
    }
    EXPECT_EQ(d.unlock(), -1);  // reserves the word for LT 2, resumes nobody
    reserved = d.reserved_for_woken();
    d.release_queue_guard();
    EXPECT_TRUE(d.yield_until([&] { return !d.acquired_by.empty(); }));
  });
  EXPECT_TRUE(reserved);
  EXPECT_TRUE(s.every_started_lt_acquired());
  ASSERT_FALSE(s.acquired_by.empty());
  EXPECT_EQ(s.acquired_by.front(), 2u);
  EXPECT_EQ(s.barges_at_acquisition[2], 0);  // in its turn
  EXPECT_EQ(s.suspends_of(2), 1u);           // its first park only
}

// Where idle carriers do not steal, a waiter that the competition bound
// parked (its checks were slow: a ready-queue round of other LTs' work) is
// woken beside a woken waiter that has not run yet, as a competing waiter.
// LTs 2, 4 and 5 on carrier 0, beside the holder LT 0. LT 5 fails once and
// is held back: counted competing and awake on carrier 0, it keeps LTs 2
// and 4 from being its last awake waiter. With holds timed shorter than
// wake-ups, LT 2 and then LT 4 compete while LT 0 sleeps 400 us before each
// of its yields, so each has competed over 1 ms by its 6th failed check
// (the bound's clock started at its 2nd and read again 4 checks later),
// and parks there (queue: 2, 4). LT 0's unlock() wakes LT 2, the oldest
// (WOKEN); LT 0 re-takes the word at once, before LT 2 runs, and its next
// unlock() also wakes LT 4, counted competing. LT 2 acquires in its turn
// (the barge count restarts), and LT 4 right after it, a barge past LT 5.
// The control: with no holds timed, LTs 2 and 4 park at their first failed
// check behind LT 5, not by the bound, and the second unlock() wakes
// nobody; LT 4 is woken by LT 2's unlock(), in its turn. (With the wake
// beside the woken waiter deleted from unlock_slow(), the first case's
// second unlock() woke nobody either.)
//
// Two exclusions, each from the first case. If LT 2 runs and fails once
// before the second unlock() (it sets WOKEN_LOST: it is running, and will
// see the word free within a round of its carrier), that unlock() wakes
// nobody. With barge limit 1 LT 0's re-take is the barge that makes the
// second unlock() due a hand-off: it wakes nobody either (the woken waiter
// is the one to serve), and yields, so that LT 2 acquires in its turn and
// its unlock() wakes LT 4 in its turn too. (With either exclusion deleted
// from unlock_slow(), LT 4 was woken beside LT 2, and its acquisition was
// a barge; WOKEN_LOST is checked twice, before the guard and under it, and
// the test fails with both checks deleted.)
struct beside_the_woken_schedule {
  bool by_the_competition_bound = true;
  bool woken_runs_first = false;  // LT 2 fails a check between the two unlock() calls
  std::uint32_t barge_limit = adaptive_mutex<scripted_carriers_runtime>::default_barge_limit;
};
struct wake_beside_the_woken {
  int first_woken = -1;
  int second_woken = -1;
  std::vector<unsigned> acquired_by;
  long barges_of_lt_4 = -1;  // the barge count right after LT 4 acquired
  unsigned suspends_of_lt_4 = 0;
  detail::adaptive_mutex_access::waiter_counts counts_after_second_unlock;
  std::uint32_t uncounted_after_second_unlock = 0;
  std::uint32_t barges_before_second_unlock = 0;  // LT 0's re-take: 1
};
constexpr std::array<unsigned, idle_carrier_script::lts> beside_the_woken_carriers{0, 1, 0, 1, 0, 0, 1};
// Director only: starts each of `lts` and yields, sleeping 400 us before each
// yield, until it has parked (by the competition bound, where the sampled
// holds are shorter than the wake-ups; else at its first failed check).
void start_until_parked(idle_carrier_script& d, std::initializer_list<unsigned> lts, bool by_the_competition_bound) {
  for (const unsigned lt : lts) {
    d.start(lt, /*parks=*/!by_the_competition_bound);
    for (int i = 0; i < 64 && !d.parked(lt); ++i) {
      std::this_thread::sleep_for(400us);  // the waiter's next check comes 400 us later
      idle_carrier_script::yield_until([] { return false; }, 1);
    }
    EXPECT_TRUE(d.parked(lt)) << "LT " << lt;
  }
}
wake_beside_the_woken wakes_when_the_oldest_waiter_was_parked(const beside_the_woken_schedule& schedule) {
  idle_carrier_script s(beside_the_woken_carriers, schedule.barge_limit);
  wake_beside_the_woken r;
  s.run([&](idle_carrier_script& d) {
    if (schedule.by_the_competition_bound) d.set_sampled_averages(/*hold_ns=*/1'000, /*wake_up_ns=*/1'000'000'000);
    d.start(5, /*parks=*/false);
    d.hold_back({5});
    start_until_parked(d, {2, 4}, schedule.by_the_competition_bound);
    EXPECT_EQ(d.queue_carriers(), (std::vector<unsigned>{0, 0}));
    r.first_woken = d.unlock();
    d.lock();
    if (schedule.woken_runs_first) {
      const unsigned yields = d.yields_of(2);
      EXPECT_TRUE(d.yield_until([&] { return d.yields_of(2) > yields; })) << "LT 2 never failed a check";
      EXPECT_FALSE(d.parked(2));
    }
    r.barges_before_second_unlock = d.barges();
    r.second_woken = d.unlock();
    r.counts_after_second_unlock = d.counted_waiters();
    r.uncounted_after_second_unlock = d.uncounted_waiters();
    EXPECT_TRUE(d.yield_until([&] { return d.acquired_by.size() >= 2; }));
  });
  EXPECT_TRUE(s.every_started_lt_acquired());
  r.acquired_by = s.acquired_by;
  r.barges_of_lt_4 = s.barges_at_acquisition[4];
  r.suspends_of_lt_4 = s.suspends_of(4);
  return r;
}

TEST(adaptive_mutex, unlock_wakes_a_waiter_parked_by_the_competition_bound_beside_a_woken_one_that_has_not_run) {
  const wake_beside_the_woken r = wakes_when_the_oldest_waiter_was_parked({});
  EXPECT_EQ(r.first_woken, 2);
  EXPECT_EQ(r.second_woken, 4);
  ASSERT_GE(r.acquired_by.size(), 2u);
  EXPECT_EQ(r.acquired_by[0], 2u);
  EXPECT_EQ(r.acquired_by[1], 4u);
  EXPECT_EQ(r.barges_of_lt_4, 1);  // a barge: it was woken as a competing waiter
  EXPECT_EQ(r.suspends_of_lt_4, 1u);
  // LT 4 counted competing beside LT 5, nobody parked, LT 2 still WOKEN.
  // LT 5 competes uncounted (competes_uncounted: the holds are timed short
  // next to the wake-ups), or counted once it has competed that way 1 ms.
  EXPECT_EQ(r.counts_after_second_unlock.competing + r.uncounted_after_second_unlock, 2u);
  EXPECT_EQ(r.counts_after_second_unlock.parked, 0u);
  EXPECT_TRUE(r.counts_after_second_unlock.woken);
}

// The second unlock() woke nobody: LT 4 stayed parked (LT 5 competing,
// LT 2 WOKEN) and was woken by LT 2's unlock(), in its turn.
void expect_nobody_woken_beside(const beside_the_woken_schedule& schedule) {
  const wake_beside_the_woken r = wakes_when_the_oldest_waiter_was_parked(schedule);
  EXPECT_EQ(r.first_woken, 2);
  EXPECT_EQ(r.second_woken, -1);
  ASSERT_GE(r.acquired_by.size(), 2u);
  EXPECT_EQ(r.acquired_by[0], 2u);
  EXPECT_EQ(r.acquired_by[1], 4u);
  EXPECT_EQ(r.barges_of_lt_4, 0);
  EXPECT_EQ(r.suspends_of_lt_4, 1u);
  // LT 5 competes, counted or (holds timed short) uncounted.
  EXPECT_EQ(r.counts_after_second_unlock.competing + r.uncounted_after_second_unlock, 1u);
  EXPECT_EQ(r.counts_after_second_unlock.parked, 1u);
  EXPECT_TRUE(r.counts_after_second_unlock.woken);
}

TEST(adaptive_mutex, unlock_wakes_nobody_beside_a_woken_waiter_when_the_oldest_parked_behind_another) {
  expect_nobody_woken_beside({.by_the_competition_bound = false});
}

TEST(adaptive_mutex, unlock_wakes_nobody_beside_a_woken_waiter_that_has_run) {
  expect_nobody_woken_beside({.woken_runs_first = true});
}

TEST(adaptive_mutex, unlock_wakes_nobody_beside_a_woken_waiter_while_a_hand_off_is_due) {
  const wake_beside_the_woken r = wakes_when_the_oldest_waiter_was_parked({.barge_limit = 1});
  EXPECT_EQ(r.first_woken, 2);
  EXPECT_EQ(r.barges_before_second_unlock, 1u);  // so the second unlock() is due
  ASSERT_GE(r.acquired_by.size(), 2u);
  EXPECT_EQ(r.acquired_by[0], 2u);
  EXPECT_EQ(r.acquired_by[1], 4u);
  // Woken by LT 2's unlock() (inside the second unlock()'s yield, so that
  // call may report it), in its turn.
  EXPECT_EQ(r.barges_of_lt_4, 0);
  EXPECT_EQ(r.suspends_of_lt_4, 1u);
}

// A waiter woken beside the woken one that loses re-parks at the back: it
// had no turn to keep, and at the front several such waiters would re-park
// ahead of the woken one, in reverse order. The first case above with each
// parked waiter on a carrier of its own, so that the queue's carriers name
// them: LT 2 on carrier 0, LT 4 on carrier 2, LT 6 on carrier 1, each
// parked by the bound, and LTs 5, 1 and 3, held back, keep each from being
// its carrier's last awake waiter (and make every unlock() wake the oldest,
// not a waiter of an idle carrier): queue 2, 4, 6 as carriers 0, 2, 1.
// After the second unlock() (which wakes LT 4 beside LT 2) LT 0 re-takes
// the word and keeps it; LTs 2 and 4 compete, each past 1 ms by its 6th
// failed check (LT 0 sleeps before its yields), and park again: LT 2,
// woken in its turn, at the front, LT 4 at the back, behind LT 6 (carriers
// 0, 1, 2). (With park() re-parking every woken waiter at the front, the
// queue was 0, 2, 1 or 2, 0, 1; with the waiter woken beside at the front
// and the one in its turn at the back, 2, 1, 0.)
TEST(adaptive_mutex, a_waiter_woken_beside_the_woken_one_that_loses_parks_again_at_the_back) {
  idle_carrier_script s({0, 2, 0, 1, 2, 0, 1}, adaptive_mutex<scripted_carriers_runtime>::default_barge_limit);
  int second_woken = -1;
  std::vector<unsigned> queue;
  bool queue_whole = false;
  s.run([&](idle_carrier_script& d) {
    d.set_sampled_averages(/*hold_ns=*/1'000, /*wake_up_ns=*/1'000'000'000);
    d.start(5, /*parks=*/false);
    d.start(1, /*parks=*/false);
    d.start(3, /*parks=*/false);
    d.hold_back({1, 3, 5});
    start_until_parked(d, {2, 4, 6}, /*by_the_competition_bound=*/true);
    EXPECT_EQ(d.queue_carriers(), (std::vector<unsigned>{0, 2, 1}));
    EXPECT_EQ(d.unlock(), 2);
    d.lock();
    second_woken = d.unlock();
    d.lock();
    const auto both_parked_again = [&] { return d.suspends_of(2) == 2 && d.suspends_of(4) == 2; };
    for (int i = 0; i < 64 && !both_parked_again(); ++i) {
      std::this_thread::sleep_for(400us);
      idle_carrier_script::yield_until([] { return false; }, 1);
    }
    EXPECT_TRUE(both_parked_again());
    queue = d.queue_carriers();
    queue_whole = d.queue_is_whole();
  });
  EXPECT_TRUE(s.every_started_lt_acquired());
  EXPECT_EQ(second_woken, 4);
  EXPECT_EQ(s.suspends_of(4), 2u);
  EXPECT_EQ(queue, (std::vector<unsigned>{0, 1, 2}));  // LT 2, LT 6, LT 4
  EXPECT_TRUE(queue_whole);
}

// The head on another carrier than the holder's: the schedule with LTs 1
// and 2 on carrier 3 (LT 0 holds on carrier 0), carrier 2 idle. While LT 1
// keeps carrier 3 awake, the oldest's carrier runs anyway and LT 0's
// unlock() wakes LT 4 out of turn; with LT 1 moved to carrier 4, carrier 3
// has only the oldest, parked, and unlock() wakes it. (With
// unlink_waiter_of_idle_carrier() returning nullptr for every head on
// another carrier than the holder's, the first woke LT 2; without that
// return for an idle one, the second woke LT 4.)
int woken_with_the_head_on_another_carrier(bool leave_head_carrier_idle) {
  idle_carrier_schedule schedule;
  schedule.head_carrier = 3;
  schedule.leave_head_carrier_idle = leave_head_carrier_idle;
  idle_carrier_script s(schedule.carriers(), schedule.barge_limit);
  int woken = -1;
  s.run([&](idle_carrier_script& d) {
    schedule.build(d);
    EXPECT_EQ(d.awake_on_carrier(3), leave_head_carrier_idle ? 0u : 1u);
    woken = d.unlock();
  });
  EXPECT_TRUE(s.every_started_lt_acquired());
  return woken;
}

TEST(adaptive_mutex, unlock_wakes_out_of_turn_while_the_oldest_waiters_carrier_has_an_awake_one) {
  EXPECT_EQ(woken_with_the_head_on_another_carrier(/*leave_head_carrier_idle=*/false), 4);
}

TEST(adaptive_mutex, unlock_wakes_the_oldest_waiter_when_its_carrier_other_than_the_holders_is_idle) {
  EXPECT_EQ(woken_with_the_head_on_another_carrier(/*leave_head_carrier_idle=*/true), 2);
}

// Which adapters say their LTs are time-sliced (counting_runtime forwards).
static_assert(preemptive_v<os_thread_runtime>);
static_assert(preemptive_v<counting_runtime<os_thread_runtime>>);
static_assert(!preemptive_v<boost_fiber_runtime>);
static_assert(!preemptive_v<counting_runtime<boost_fiber_runtime>>);
// The barge limit: 256 where the kernel time-slices LTs, 32 elsewhere
// (docs/ADAPTIVE.md, finding 47).
static_assert(adaptive_mutex<os_thread_runtime>::default_barge_limit == 256);
static_assert(adaptive_mutex<boost_fiber_runtime>::default_barge_limit == 32);

struct unlock_while_one_competes {
  unsigned resumes_by_unlock = 0;  // made by the holder's unlock()
  unsigned resumes_by_second_unlock = 0;  // with relock: made by its second unlock()
  unsigned suspends_before_unlock = 0;
  unsigned suspends = 0;
  unsigned acquisitions = 0;
};
// One carrier. LT 0 holds the lock across 4 yields; LT 1 fails first and,
// the only competing waiter, keeps competing; LT 2 fails while LT 1
// competes and parks. What did LT 0's unlock() wake? With relock, LT 0
// then takes the lock again at once, past both, and releases it before
// either runs: a hold during which the competing LT 1 made no check.
template <bool IdleCarriersSteal, bool Preemptive>
unlock_while_one_competes unlock_while_a_waiter_competes(bool relock = false) {
  using R = assigned_carriers_runtime<IdleCarriersSteal, Preemptive>;
  R::reset();
  adaptive_mutex<R> m(wait_policy{}.with_yield_every(1).with_suspend_after(4));
  bool held = false;  // one OS thread: plain variables
  unlock_while_one_competes r;
  watchdog dog("adaptive unlock while a waiter competes", 60s);
  R::run_lts(3, [&](unsigned lt) {
    if (lt == 0) {
      lock_counted(m);
      held = true;
      for (int i = 0; i < 4; ++i) R::yield();
      r.suspends_before_unlock = R::suspends[0];
      const unsigned before = R::resumes;
      m.unlock();
      r.resumes_by_unlock = R::resumes - before;
      ++r.acquisitions;
      if (relock && r.resumes_by_unlock == 0) {
        EXPECT_TRUE(m.try_lock());
        const unsigned before_second = R::resumes;
        m.unlock();
        r.resumes_by_second_unlock = R::resumes - before_second;
        ++r.acquisitions;
      }
      return;
    }
    while (!held) R::yield();
    m.lock();
    ++r.acquisitions;
    m.unlock();
  });
  r.suspends = R::suspends[0];
  return r;
}

TEST(adaptive_mutex, unlock_does_not_wake_a_parked_waiter_while_another_competes_where_idle_carriers_steal) {
  // A cooperative runtime whose idle carriers steal (our scheduler). LT 1,
  // competing, takes the word when it runs next; waking LT 2 would only
  // make it lose to LT 1 and park again. LT 1's own unlock(), with nobody
  // competing, wakes LT 2.
  const auto r = unlock_while_a_waiter_competes</*IdleCarriersSteal=*/true, /*Preemptive=*/false>();
  EXPECT_EQ(r.suspends_before_unlock, 1u);  // LT 2 parked
  EXPECT_EQ(r.resumes_by_unlock, 0u);
  EXPECT_EQ(r.suspends, 1u);  // LT 2 did not park again
  EXPECT_EQ(r.acquisitions, 3u);
}

TEST(adaptive_mutex, unlock_wakes_a_parked_waiter_while_another_competes_where_carriers_do_not_steal) {
  // The control. Where idle carriers do not steal (Boost.Fiber, Argobots),
  // LT 2's work can run only on its own carrier: unlock() wakes LT 2.
  const auto r = unlock_while_a_waiter_competes</*IdleCarriersSteal=*/false, /*Preemptive=*/false>();
  EXPECT_EQ(r.suspends_before_unlock, 1u);
  EXPECT_EQ(r.resumes_by_unlock, 1u);
  EXPECT_EQ(r.acquisitions, 3u);
}

TEST(adaptive_mutex, where_lts_are_time_sliced_unlock_does_not_wake_while_a_waiter_competes_that_checked_during_the_hold) {
  // OS threads: LT 1 failed its checks while LT 0 held, so it runs and
  // will take the word; waking LT 2 would make it lose and park again (in
  // high-contention 92% of such wake-ups did: docs/ADAPTIVE.md, finding 47).
  static_assert(adaptive_mutex<assigned_carriers_runtime<true, true>>::watched_holds_skip_wake_ups);
  static_assert(!adaptive_mutex<assigned_carriers_runtime<true, false>>::watched_holds_skip_wake_ups);
  static_assert(!adaptive_mutex<assigned_carriers_runtime<false, false>>::watched_holds_skip_wake_ups);
  const auto r = unlock_while_a_waiter_competes</*IdleCarriersSteal=*/true, /*Preemptive=*/true>();
  EXPECT_EQ(r.suspends_before_unlock, 1u);
  EXPECT_EQ(r.resumes_by_unlock, 0u);
  EXPECT_EQ(r.suspends, 1u);  // LT 2 did not park again
  EXPECT_EQ(r.acquisitions, 3u);
}

TEST(adaptive_mutex, where_lts_are_time_sliced_unlock_wakes_if_no_competing_waiter_checked_during_the_hold) {
  // The same, then LT 0 takes the lock again and releases it before LT 1
  // runs: LT 1 still counts as competing, but it made no check during that
  // hold, and a yielding thread may be waiting out others' time slices
  // while the word stays free, so that unlock() wakes LT 2. On our
  // scheduler (the control) a competing waiter is trusted either way.
  const auto sliced = unlock_while_a_waiter_competes</*IdleCarriersSteal=*/true, /*Preemptive=*/true>(true);
  EXPECT_EQ(sliced.resumes_by_unlock, 0u);
  EXPECT_EQ(sliced.resumes_by_second_unlock, 1u);
  EXPECT_EQ(sliced.acquisitions, 4u);
  const auto cooperative = unlock_while_a_waiter_competes</*IdleCarriersSteal=*/true, /*Preemptive=*/false>(true);
  EXPECT_EQ(cooperative.resumes_by_unlock, 0u);
  EXPECT_EQ(cooperative.resumes_by_second_unlock, 0u);
  EXPECT_EQ(cooperative.acquisitions, 4u);
}

// The same first turn (LT 0 holds, LT 1 competes, LT 2 parks; LT 0's
// unlock() does not wake LT 2), then LT 1's unlock(), with nobody
// competing, wakes LT 2, which wins the word: a wake-up paid off. LT 2
// then holds across 4 yields while LT 3 competes and LT 4 parks. Returns
// the resumes made by LT 2's unlock().
unsigned resumes_by_an_unlock_after_a_woken_waiter_won() {
  using R = assigned_carriers_runtime</*IdleCarriersSteal=*/true>;
  R::reset();
  adaptive_mutex<R> m(wait_policy{}.with_yield_every(1).with_suspend_after(4));
  bool first_held = false;   // one OS thread: plain variables
  bool second_held = false;
  unsigned by_second_unlock = 0;
  int acquisitions = 0;
  watchdog dog("adaptive unlock after a woken waiter won", 60s);
  R::run_lts(5, [&](unsigned lt) {
    if (lt == 0 || lt == 2) {
      if (lt == 2) {
        while (!first_held) R::yield();
        m.lock();
      } else {
        lock_counted(m);
      }
      ++acquisitions;
      bool& held = lt == 0 ? first_held : second_held;
      held = true;
      for (int i = 0; i < 4; ++i) R::yield();
      const unsigned before = R::resumes;
      m.unlock();
      if (lt == 2) by_second_unlock = R::resumes - before;
      return;
    }
    const bool& held = lt == 1 ? first_held : second_held;
    while (!held) R::yield();
    m.lock();
    ++acquisitions;
    m.unlock();
  });
  EXPECT_EQ(acquisitions, 5);
  EXPECT_EQ(R::suspends[0], 2u);  // LT 2 and LT 4, once each
  return by_second_unlock;
}

TEST(adaptive_mutex, unlock_wakes_again_while_another_competes_once_a_woken_waiter_won) {
  // LT 2's wake-up paid off, so LT 2's unlock() wakes LT 4 although LT 3
  // competes. (The first turn is the test above.)
  EXPECT_EQ(resumes_by_an_unlock_after_a_woken_waiter_won(), 1u);
}

// A lone waiter: LT 1, the only one, fails once per yield of the holder.
// Returns its suspends.
template <bool IdleCarriersSteal>
unsigned suspends_of_a_lone_waiter(int holder_yields) {
  return suspends_on_assigned_carriers<IdleCarriersSteal>(2, holder_yields, [](unsigned) { return 0u; })[0];
}

TEST(adaptive_mutex, where_idle_carriers_steal_the_last_competing_waiter_parks_after_a_long_wait) {
  using M = adaptive_mutex<assigned_carriers_runtime<true>>;
  // Its failed checks: one per holder yield, give or take the first.
  EXPECT_EQ(suspends_of_a_lone_waiter<true>(static_cast<int>(M::long_wait_checks) - 16), 0u);
  EXPECT_EQ(suspends_of_a_lone_waiter<true>(static_cast<int>(M::long_wait_checks) + 16), 1u);
  // The control: where a parked waiter may leave its carrier idle, the
  // last awake waiter of a carrier never parks, however long it waits.
  EXPECT_EQ(suspends_of_a_lone_waiter<false>(static_cast<int>(M::long_wait_checks) * 4), 0u);
}

// Which adapters report the CPU that runs the caller (counting_runtime
// forwards), and so where a waiter parks beside its holder.
static_assert(reports_cpu_v<os_thread_runtime>);
static_assert(reports_cpu_v<counting_runtime<os_thread_runtime>>);
static_assert(!reports_cpu_v<boost_fiber_runtime>);
static_assert(!reports_cpu_v<counting_runtime<boost_fiber_runtime>>);
static_assert(adaptive_mutex<os_thread_runtime>::parks_beside_its_holder);
static_assert(!adaptive_mutex<boost_fiber_runtime>::parks_beside_its_holder);
static_assert(adaptive_mutex<boost_fiber_runtime>::ends_spin_beside_its_holder);
static_assert(!adaptive_mutex<os_thread_runtime>::ends_spin_beside_its_holder);

// assigned_carriers_runtime (idle carriers steal) that also reports, for
// each LT, the CPU the test assigns it.
template <bool Preemptive>
struct assigned_cpus_runtime : assigned_carriers_runtime</*IdleCarriersSteal=*/true, Preemptive> {
  using base_runtime = assigned_carriers_runtime<true, Preemptive>;
  static inline std::map<typename base_runtime::handle, int> cpu_of;  // one OS thread: no lock needed
  static int cpu() noexcept { return cpu_of[base_runtime::current()]; }
};

// LTs take `turns` turns to hold m, each hold across `holder_yields` of
// R's yields, calling before_yield() before each; run_lts(body) runs the
// LTs, each calling body(). Returns the yields R counted (R::yields) from
// the start of turn `from` to the end, less the holders' (a yield inside
// unlock() counts as a waiter's).
template <class R, class M, class RunLts, class BeforeYield>
unsigned waiter_yields_in_turns(M& m, RunLts run_lts, int turns, int from, int holder_yields, BeforeYield before_yield) {
  int turn = 0;  // one OS thread: plain variables
  unsigned yields_at_from = 0;
  unsigned holder_yields_since_from = 0;
  run_lts([&] {
    while (turn < turns) {
      m.lock();
      if (turn >= turns) {
        m.unlock();
        break;
      }
      if (turn == from) yields_at_from = R::yields;
      ++turn;
      for (int i = 0; i < holder_yields; ++i) {
        before_yield();
        if (turn > from) ++holder_yields_since_from;
        R::yield();
      }
      m.unlock();
    }
  });
  return R::yields - yields_at_from - holder_yields_since_from;
}

// Three LTs on one real carrier, each "on" the CPU the test gives it, take
// `turns` turns to hold the lock across 40 yields. While one holds, the
// others wait: until one parks, one competes (yielding at each failed
// check) and the other parks behind it. Barge limit 0: every release hands
// the lock to a parked waiter, so there is a wake-up in every turn (one in
// sample_every is timed; until one is, the mutex does not weigh holds
// against wake-ups and the rule is off). Returns the yields made from the
// start of turn `from` to the end, less the holders' 40 a turn (a yield
// inside unlock() counts as a waiter's).
template <bool Preemptive>
unsigned waiter_yields_of_three_lts_on_cpus(std::array<int, 3> cpus, int turns, int from) {
  using R = assigned_cpus_runtime<Preemptive>;
  R::reset();
  R::cpu_of.clear();
  adaptive_mutex<R> m(wait_policy{}.with_yield_every(1).with_suspend_after(4), /*barge_limit=*/0);
  watchdog dog("adaptive waiters on assigned CPUs", 60s);
  const auto run_lts = [&](auto body) {
    R::run_lts(3, [&](unsigned lt) {
      R::cpu_of[R::current()] = cpus[lt];
      body();
    });
  };
  return waiter_yields_in_turns<R>(m, run_lts, turns, from, /*holder_yields=*/40, [] {});
}

TEST(adaptive_mutex, where_lts_are_time_sliced_a_waiter_beside_its_holder_parks_at_once) {
  // All three on one CPU: once a wake-up is timed, the competing waiter
  // finds its holder on its own CPU and parks at its next check, and so
  // does every later one: running, it would only keep the holder off that
  // CPU. In the last 30 turns the waiters yielded 29 times in all (about
  // once a turn), against 1103 in either control.
  EXPECT_LE(waiter_yields_of_three_lts_on_cpus</*Preemptive=*/true>({3, 3, 3}, 60, 30), 150u);
}

TEST(adaptive_mutex, a_waiter_on_another_cpu_than_its_holder_or_not_time_sliced_keeps_competing) {
  // The controls: on three CPUs, the holder runs meanwhile; on a
  // cooperative runtime, the "same CPU" is the waiter's own carrier, where
  // the holder runs when the waiter yields. One waiter competes through
  // every hold, failing about 40 checks.
  EXPECT_GE(waiter_yields_of_three_lts_on_cpus</*Preemptive=*/true>({3, 4, 5}, 60, 30), 900u);
  EXPECT_GE(waiter_yields_of_three_lts_on_cpus</*Preemptive=*/false>({3, 3, 3}, 60, 30), 900u);
}

// Where LTs are time-sliced, a waiter on its holder's CPU parks unless
// holds are under a quarter of a wake-up (wake_up_to_hold_beside), though
// the rule for parking behind another competing waiter takes two wake-ups
// there (short_hold_wake_ups).
// LT 0 (CPU 3) takes the lock in lock_slow(), from LT 2 (CPU 5), so that
// the word notes its CPU, and holds it with the sampled averages set (no
// sample is taken before it releases); LT 1, the only waiter, fails 20
// checks' worth of LT 0's yields on the CPU `waiter_cpu`. Returns the
// waiters the word counts then.
detail::adaptive_mutex_access::waiter_counts lone_waiter_on_cpu(int waiter_cpu, std::int64_t hold_ns,
                                                                std::int64_t wake_up_ns) {
  using R = assigned_cpus_runtime</*Preemptive=*/true>;
  using access = detail::adaptive_mutex_access;
  R::reset();
  R::cpu_of.clear();
  adaptive_mutex<R> m(wait_policy{}.with_yield_every(1).with_suspend_after(4));
  access::waiter_counts counts;
  int stage = 0;  // one OS thread: plain variables
  watchdog dog("adaptive lone waiter beside its holder", 60s);
  R::run_lts(3, [&](unsigned lt) {
    R::cpu_of[R::current()] = lt == 0 ? 3 : lt == 1 ? waiter_cpu : 5;
    if (lt == 2) {
      lock_counted(m);
      stage = 1;
      for (int i = 0; i < 1000 && access::counted_waiters(m).competing == 0; ++i) R::yield();
      EXPECT_EQ(access::counted_waiters(m), (access::waiter_counts{1, 0, false}));
      m.unlock();
      return;
    }
    if (lt == 0) {
      while (stage < 1) R::yield();
      m.lock();
      access::set_sampled_averages(m, hold_ns, wake_up_ns);
      stage = 2;
      for (int i = 0; i < 20; ++i) R::yield();
      counts = access::counted_waiters(m);
      m.unlock();
      return;
    }
    while (stage < 2) R::yield();
    m.lock();
    m.unlock();
  });
  return counts;
}

TEST(adaptive_mutex, where_lts_are_time_sliced_a_waiter_beside_its_holder_parks_unless_holds_are_under_a_quarter_of_a_wake_up) {
  using M = adaptive_mutex<assigned_cpus_runtime<true>>;
  static_assert(M::wake_up_to_hold_beside == 4 && M::short_hold_wake_ups == 2);
  using counts = detail::adaptive_mutex_access::waiter_counts;
  // Holds a third of a wake-up: beside its holder it parks (with the bound
  // for parking behind another waiter it would compete: finding 47).
  EXPECT_EQ(lone_waiter_on_cpu(3, 1'000'000, 3'000'000), (counts{0, 1, false}));
  // A sixth: it competes, yielding to the holder.
  EXPECT_EQ(lone_waiter_on_cpu(3, 500'000, 3'000'000), (counts{1, 0, false}));
  // The control: on another CPU the lone waiter competes, holds a third.
  EXPECT_EQ(lone_waiter_on_cpu(4, 1'000'000, 3'000'000), (counts{1, 0, false}));
}

// Two LTs on one real carrier take `rounds` turns to hold the lock across
// two yields; LT i counts as running on carrier carriers[i]. The waiter's
// unannounced spin is as long as the policy allows (2 x 2^16 pauses): a
// waiter beside its holder ends it at its first poll, any other spins it
// all, since on one real carrier the holder cannot run meanwhile. Every
// hold after the first is taken in lock_slow(), by the LT that waited, and
// every acquisition there notes the holder's carrier. Returns the median
// time of a lock() call that did not acquire at once (its spin, if any, and
// the rest of the holder's hold).
std::chrono::nanoseconds median_contended_lock(std::array<unsigned, 2> carriers, int rounds) {
  using R = assigned_carriers_runtime</*IdleCarriersSteal=*/false>;
  R::reset();
  adaptive_mutex<R> m(wait_policy{}.with_max_backoff(1u << 16).with_yield_every(1).with_suspend_after(4));
  std::vector<std::chrono::nanoseconds> waits;
  watchdog dog("adaptive spin beside the holder", 120s);
  R::run_lts(2, [&](unsigned lt) { return carriers[lt]; }, [&](unsigned) {
    for (int round = 0; round < rounds; ++round) {
      const auto start = std::chrono::steady_clock::now();
      if (!m.try_lock()) {
        m.lock();
        waits.push_back(std::chrono::steady_clock::now() - start);
      }
      R::yield();
      R::yield();
      m.unlock();
      R::yield();
    }
  });
  EXPECT_GE(waits.size(), static_cast<std::size_t>(rounds));  // the two LTs alternate
  std::sort(waits.begin(), waits.end());
  return waits.empty() ? std::chrono::nanoseconds{0} : waits[waits.size() / 2];
}

TEST(adaptive_mutex, on_a_cooperative_runtime_a_waiter_beside_its_holder_does_not_spin) {
  // Beside its holder a waiter's spin cannot end in an acquisition: the
  // holder runs only once the waiter yields. So it ends the spin at once
  // and competes (one check and a yield each time the holder yields). The
  // control, on another carrier, spins 2^17 pauses (1.7-3.3 ms on our
  // machines; 0.7 us beside) before it yields. With the rule disabled both
  // take 2.3-2.7 ms.
  const auto beside = median_contended_lock({0, 0}, 40);
  const auto elsewhere = median_contended_lock({0, 1}, 40);
  std::printf("[ info     ] median contended lock(): beside %lld ns, elsewhere %lld ns\n",
              static_cast<long long>(beside.count()), static_cast<long long>(elsewhere.count()));
  EXPECT_GT(elsewhere, 10 * beside);
}

// Which adapters gather their waiters on busy carriers (counting_runtime
// and the harness's traced runtime forward the trait).
static_assert(busy_carriers_steal_v<boost_fiber_runtime>);
static_assert(busy_carriers_steal_v<counting_runtime<boost_fiber_runtime>>);
static_assert(busy_carriers_steal_v<os_thread_runtime>);  // implied by idle_carriers_steal
static_assert(adaptive_mutex<boost_fiber_runtime>::gathers_waiters);
static_assert(adaptive_mutex<counting_runtime<boost_fiber_runtime>>::gathers_waiters);
static_assert(!adaptive_mutex<os_thread_runtime>::gathers_waiters);
static_assert(!adaptive_mutex<assigned_carriers_runtime</*IdleCarriersSteal=*/false>>::gathers_waiters);

// LTs on one real carrier, LT i on the carrier carriers[i] (idle carriers
// do not steal; busy ones as BusyCarriersSteal says), take 60 turns
// to hold the lock across 10 yields each, spinning `spin` before each
// yield. Barge limit 0: every release hands the lock to the oldest parked
// waiter. Until waiters gather, one waiter competes through every hold
// (its carrier's last awake one, or the last competing one) and the others
// park behind it. Returns the yields made from the start of turn 30 to
// the end, less the holders' 10 a turn.
template <bool BusyCarriersSteal>
unsigned waiter_yields_of_lts_on_carriers(std::vector<unsigned> carriers, std::chrono::microseconds spin = 0us) {
  using R = assigned_carriers_runtime</*IdleCarriersSteal=*/false, /*Preemptive=*/false, BusyCarriersSteal>;
  R::reset();
  adaptive_mutex<R> m(wait_policy{}.with_yield_every(1).with_suspend_after(4), /*barge_limit=*/0);
  watchdog dog("adaptive waiters gathering", 60s);
  const auto run_lts = [&](auto body) {
    R::run_lts(static_cast<unsigned>(carriers.size()), [&](unsigned lt) { return carriers[lt]; }, [&](unsigned) { body(); });
  };
  const auto spin_for = [spin] {
    const auto until = std::chrono::steady_clock::now() + spin;
    while (std::chrono::steady_clock::now() < until) {
    }
  };
  return waiter_yields_in_turns<R>(m, run_lts, /*turns=*/60, /*from=*/30, /*holder_yields=*/10, spin_for);
}

TEST(adaptive_mutex, where_busy_carriers_steal_waiters_gather_while_they_wait_beside_a_holder_that_yields) {
  // All three on one carrier: the competing waiter finds its holder noted on
  // its own carrier at every check, about 10 a turn, far more than one per
  // 8 acquisitions, and once the count reaches 16 every waiter parks, the
  // carrier's last awake one too. In the last 30 turns nobody competes
  // (each is handed the lock in its turn); in the control, whose busy
  // carriers do not steal either, one waiter fails about 10 checks a turn.
  EXPECT_LE(waiter_yields_of_lts_on_carriers</*BusyCarriersSteal=*/true>({0, 0, 0}), 30u);
  EXPECT_GE(waiter_yields_of_lts_on_carriers</*BusyCarriersSteal=*/false>({0, 0, 0}), 250u);
}

// A waiter that unlock() handed the lock to is noted as the holder, on its
// carrier, before it runs; a check there is not one beside a holder that
// yields inside its critical section, and does not count towards gathering
// or against the uncounted competition (docs/ADAPTIVE.md, finding 53). The
// schedule, on one real carrier, with holds timed at 1 ms and wake-ups at
// 1 us (so nobody competes uncounted, and a lone waiter parks at its second
// failed check) and barge limit 0 (every release hands the lock to the
// oldest parked waiter): LT 0, on carrier 1, holds; LT 1, on carrier 0,
// waits and parks; LT 0 releases, which hands the lock to LT 1. Then LT 2,
// on carrier 0, calls lock() before LT 1 has run (every check it fails
// until LT 1 runs is beside LT 1, handed), and LT 1 releases at once. In
// the control LT 2 calls lock() only once LT 1 holds, and LT 1 yields 3
// times in its hold: those checks beside it count. Returns the count.
std::int32_t checks_counted_beside_a_handed_waiter(bool after_it_ran) {
  using R = assigned_carriers_runtime</*IdleCarriersSteal=*/true>;
  using M = adaptive_mutex<R>;
  using access = detail::adaptive_mutex_access;
  static_assert(M::counts_checks_beside_holder);
  R::reset();
  M m(wait_policy{}.with_yield_every(1).with_suspend_after(4), /*barge_limit=*/0);
  access::set_sampled_averages(m, 1'000'000, 1'000);
  R::handle parked_lt{};
  bool lt0_holds = false;  // one OS thread: plain variables
  bool handed = false;
  bool lt1_holds = false;
  bool lt2_came_first = false;
  watchdog dog("adaptive checks beside a handed waiter", 60s);
  R::run_lts(3, [](unsigned lt) { return lt == 0 ? 1u : 0u; }, [&](unsigned lt) {
    if (lt == 0) {
      access::lock_not_fast(m);
      lt0_holds = true;
      while (parked_lt == R::handle{} || !R::suspended[parked_lt]) R::yield();
      m.unlock();
      handed = true;
    } else if (lt == 1) {
      while (!lt0_holds) R::yield();
      parked_lt = R::current();
      m.lock();
      lt1_holds = true;
      if (after_it_ran) {
        for (int i = 0; i < 3; ++i) R::yield();
      }
      m.unlock();
    } else {
      while (!handed || (after_it_ran && !lt1_holds)) R::yield();
      lt2_came_first = !lt1_holds;
      // Held: handed to LT 1 (not woken, which would have freed the word),
      // or LT 1's own hold. A failed try_lock() counts nothing.
      EXPECT_FALSE(m.try_lock());
      m.lock();
      m.unlock();
    }
  });
  EXPECT_EQ(lt2_came_first, !after_it_ran);
  if (!after_it_ran) {
    EXPECT_EQ(R::suspends[0], 1u);  // LT 1 parked once, LT 2 never
  }
  return access::checks_beside_holder(m);
}

TEST(adaptive_mutex, checks_beside_a_waiter_handed_the_lock_that_has_not_run_do_not_count) {
  EXPECT_EQ(checks_counted_beside_a_handed_waiter(/*after_it_ran=*/false), 0);
  // The control: beside a holder that yields, they do.
  EXPECT_GE(checks_counted_beside_a_handed_waiter(/*after_it_ran=*/true), 1);
}

TEST(adaptive_mutex, waiters_gather_only_while_fewer_than_24_wait) {
  using M = adaptive_mutex<assigned_carriers_runtime<false, false, true>>;
  static_assert(M::gather_waiters_max == 24);
  // 24 LTs on one carrier: 23 wait, and they gather as three do. 25: 24
  // wait, and one competes through every hold, as without the rule.
  EXPECT_LE(waiter_yields_of_lts_on_carriers</*BusyCarriersSteal=*/true>(std::vector<unsigned>(24, 0)), 30u);
  EXPECT_GE(waiter_yields_of_lts_on_carriers</*BusyCarriersSteal=*/true>(std::vector<unsigned>(25, 0)), 250u);
}

TEST(adaptive_mutex, waiters_do_not_gather_behind_a_holder_on_other_carriers_or_with_long_holds) {
  // The same three LTs on three assigned carriers: no check is made beside
  // the holder, so the count stays 0 and both waiters compete through every
  // hold, each its carrier's last awake one (about 620 yields). On one
  // carrier with holds of 10 x 20 us the checks beside the holder count,
  // but by turn 24 the sampled holds (one in 8 acquisitions, each moving
  // the average 1/8 of the way) are over the 50 us floor and the waiters
  // compete again: about 330, as in the control (with 10 x 6 us the
  // average is still under the floor at turn 60, and nobody competes).
  EXPECT_GE(waiter_yields_of_lts_on_carriers</*BusyCarriersSteal=*/true>({0, 1, 2}), 250u);
  EXPECT_GE(waiter_yields_of_lts_on_carriers</*BusyCarriersSteal=*/true>({0, 0, 0}, 20us), 250u);
}

// `lts` LTs (2 unless given) on one carrier (where idle carriers steal,
// unless IdleCarriersSteal is false) take turns to hold the lock for
// `holder_yields` yields, sleeping `sleep_in_hold` before each (or, with
// `spin_in_hold`, spinning that long: a sleep overshoots by the timer's
// slack, a spin does not unless the kernel preempts it); with two,
// the other waits alone, one failed check per yield. Barge limit 0: every
// release hands the lock to a parked waiter if there is one, so every hold
// after the first began in lock_slow() (timed one in sample_every) and every
// wake-up is a hand-off (timed one in sample_every). Each resume() of a
// suspended waiter takes `resume_delay` more. (A sleep of the releaser after
// its unlock() would not do: where it had freed the word to a competing
// waiter, unlock() yields, that waiter acquires, and its hold takes in the
// sleep at its first yield: holds of 40 yields were timed at 10 ms next to
// wake-ups of 10 ms.) Returns, per hold, after how many of its yields a
// waiter had suspended (-1: none did), and the suspends counted when it
// began.
struct alternating_holds {
  std::vector<int> park_points;
  std::vector<unsigned> suspends_at_start;
  // Suspends from the start of hold `from` to the start of the last hold.
  unsigned suspends_since(std::size_t from) const { return suspends_at_start.back() - suspends_at_start.at(from); }
};
template <bool IdleCarriersSteal = true>
alternating_holds park_points_of_alternating_holds(int holds, int holder_yields, std::chrono::microseconds sleep_in_hold,
                                                   std::chrono::microseconds resume_delay, unsigned lts = 2,
                                                   bool spin_in_hold = false) {
  using R = assigned_carriers_runtime<IdleCarriersSteal>;
  R::reset();
  R::resume_delay = resume_delay;
  adaptive_mutex<R> m(wait_policy{}.with_yield_every(1).with_suspend_after(4), /*barge_limit=*/0);
  alternating_holds result;
  std::vector<int>& points = result.park_points;
  watchdog dog("adaptive alternating holds", 120s);
  R::run_lts(lts, [&](unsigned) {
    while (static_cast<int>(points.size()) < holds) {
      m.lock();
      if (static_cast<int>(points.size()) >= holds) {
        m.unlock();
        break;
      }
      const unsigned suspends_before = R::suspends[0];
      result.suspends_at_start.push_back(suspends_before);
      int point = -1;
      for (int i = 1; i <= holder_yields; ++i) {
        if (spin_in_hold) {
          const auto until = std::chrono::steady_clock::now() + sleep_in_hold;
          while (std::chrono::steady_clock::now() < until) {
          }
        } else {
          std::this_thread::sleep_for(sleep_in_hold);
        }
        R::yield();
        if (point < 0 && R::suspends[0] != suspends_before) point = i;
      }
      points.push_back(point);
      m.unlock();
    }
  });
  R::resume_delay = 0us;
  return result;
}

TEST(adaptive_mutex, a_lone_waiter_parks_early_when_holds_are_long_next_to_wake_ups) {
  using M = adaptive_mutex<assigned_carriers_runtime<true>>;
  const int long_wait = static_cast<int>(M::long_wait_checks);
  const int short_wait = static_cast<int>(M::short_wait_checks);
  // Holds of >= 5 ms (272 sleeps of 20 us) against wake-ups of a few
  // microseconds. Until the mutex has timed a hold and a wake-up (one in
  // sample_every of each), the waiter spins all of long_wait_checks; then it
  // parks after short_wait_checks (2).
  const std::vector<int> points = park_points_of_alternating_holds(40, long_wait + 16, 20us, 0us).park_points;
  ASSERT_EQ(points.size(), 40u);
  for (int i = 1; i < 4; ++i) EXPECT_NEAR(points[i], long_wait, 3) << "hold " << i;
  for (int i = 32; i < 40; ++i) {
    EXPECT_GE(points[i], 1) << "hold " << i << ": the waiter never parked";
    EXPECT_LE(points[i], short_wait + 3) << "hold " << i;
  }
}

TEST(adaptive_mutex, a_lone_waiter_keeps_spinning_when_wake_ups_are_long_next_to_holds) {
  // The control: the same turns, holds of 1.4-16 ms (272 sleeps of 5 us,
  // or of the timer's slack), but each wake-up takes a resume() of 25 ms,
  // so a hold is not hold_to_wake_up wake-ups long unless the sleeps of a
  // hold overshoot by over 1.4 ms each on average: the waiter never parks
  // early.
  using M = adaptive_mutex<assigned_carriers_runtime<true>>;
  const int long_wait = static_cast<int>(M::long_wait_checks);
  const std::vector<int> points = park_points_of_alternating_holds(24, long_wait + 16, 5us, 25000us).park_points;
  ASSERT_EQ(points.size(), 24u);
  for (int i = 1; i < 24; ++i) EXPECT_NEAR(points[i], long_wait, 3) << "hold " << i;
}

// Three LTs take turns: while the holder yields, one waiter competes and
// the other, which arrives while it competes, parks. Until the mutex has
// timed a hold and a wake-up, that is one suspend per turn.
TEST(adaptive_mutex, waiters_keep_competing_when_holds_are_short_next_to_wake_ups) {
  // Holds of 40 yields (well under a millisecond) against wake-ups of a
  // 10 ms resume(): once both are timed, nobody parks (40 failed checks are
  // far from long_wait_checks).
  const alternating_holds turns = park_points_of_alternating_holds(40, 40, 0us, 10000us, 3);
  ASSERT_EQ(turns.suspends_at_start.size(), 40u);
  EXPECT_GE(turns.suspends_since(0), 2u);
  EXPECT_EQ(turns.suspends_since(16), 0u);
}

TEST(adaptive_mutex, the_second_waiter_keeps_parking_when_holds_are_not_short_next_to_wake_ups) {
  // The control: the same turns with holds of 2 ms or more (40 sleeps of
  // 50 us) against wake-ups of 3 ms or more. A hold is then well over a
  // quarter of a wake-up, and far from the 16 wake-ups at which the lone
  // waiter would park early (finding 17): the waiter that arrives second
  // parks in every turn, also while the two averages still grow from 0.
  // (When only the hold samples were bounded, the wake-up average outran
  // the hold average there: from about the 16th turn on, some turns had no
  // park, in every run.)
  const alternating_holds turns = park_points_of_alternating_holds(40, 40, 50us, 3000us, 3);
  ASSERT_EQ(turns.suspends_at_start.size(), 40u);
  EXPECT_GE(turns.suspends_since(16), 20u);
}

// Where idle carriers steal, a waiter that fails a check while another
// competes parks unless holds are short next to wake-ups: under a quarter
// of one, or under two where the kernel time-slices LTs (a park also costs
// the releaser a system call there, and its CPU may idle: finding 51). LT 0
// holds the lock with the sampled averages set (no sample is taken before
// it releases); LT 1 fails its checks and competes, the only competing
// waiter; then LT 2 arrives and fails 20 checks' worth of LT 0's yields.
// Returns the waiters the word counts then, and those that compete
// uncounted (on a cooperative runtime, while holds are short next to
// wake-ups, a waiter competes uncounted first: competes_uncounted).
template <bool Preemptive>
waiters_seen waiters_after_a_second_arrives(std::int64_t hold_ns, std::int64_t wake_up_ns,
                                            bool holders_yield_beside_waiters = false) {
  using R = assigned_carriers_runtime</*IdleCarriersSteal=*/true, Preemptive>;
  using access = detail::adaptive_mutex_access;
  R::reset();
  adaptive_mutex<R> m(wait_policy{}.with_yield_every(1).with_suspend_after(4));
  waiters_seen counts;
  unsigned let_in = 0;  // LTs 1..let_in may lock; one OS thread: a plain variable
  watchdog dog("adaptive second waiter", 60s);
  const auto waiting = [&m] { return access::counted_waiters(m).competing + access::uncounted_waiters(m); };
  R::run_lts(3, [&](unsigned lt) {
    if (lt == 0) {
      lock_counted(m);
      access::set_sampled_averages(m, hold_ns, wake_up_ns);
      if (holders_yield_beside_waiters) access::set_checks_beside_holder(m, 64);
      let_in = 1;
      for (int i = 0; i < 1000 && waiting() == 0; ++i) R::yield();
      EXPECT_EQ(waiting(), 1u);
      EXPECT_EQ(access::counted_waiters(m).parked, 0u);
      let_in = 2;
      for (int i = 0; i < 20; ++i) R::yield();
      counts = waiters_of(m);
      m.unlock();
      return;
    }
    while (let_in < lt) R::yield();
    m.lock();
    m.unlock();
  });
  return counts;
}

TEST(adaptive_mutex, where_lts_are_time_sliced_a_waiter_does_not_park_behind_another_while_holds_are_under_two_wake_ups) {
  static_assert(adaptive_mutex<assigned_carriers_runtime<true, true>>::short_hold_wake_ups == 2);
  using counts = detail::adaptive_mutex_access::waiter_counts;
  static_assert(!adaptive_mutex<assigned_carriers_runtime<true, true>>::competes_uncounted);
  // Holds of two thirds of a wake-up, and of one and a half wake-ups (with
  // half a wake-up as the bound, finding 46, the second parked at both):
  // both compete, counted.
  EXPECT_EQ(waiters_after_a_second_arrives</*Preemptive=*/true>(2'000'000, 3'000'000),
            (waiters_seen{counts{2, 0, false}, 0}));
  EXPECT_EQ(waiters_after_a_second_arrives</*Preemptive=*/true>(4'500'000, 3'000'000),
            (waiters_seen{counts{2, 0, false}, 0}));
  // Two and a half wake-ups: the second parks.
  EXPECT_EQ(waiters_after_a_second_arrives</*Preemptive=*/true>(7'500'000, 3'000'000),
            (waiters_seen{counts{1, 1, false}, 0}));
}

TEST(adaptive_mutex, where_lts_are_not_time_sliced_a_waiter_parks_behind_another_unless_holds_are_under_a_quarter_of_a_wake_up) {
  static_assert(adaptive_mutex<assigned_carriers_runtime<true>>::wake_up_to_hold == 4);
  using counts = detail::adaptive_mutex_access::waiter_counts;
  static_assert(adaptive_mutex<assigned_carriers_runtime<true>>::competes_uncounted);
  // A third of a wake-up: the second parks.
  EXPECT_EQ(waiters_after_a_second_arrives</*Preemptive=*/false>(1'000'000, 3'000'000),
            (waiters_seen{counts{1, 1, false}, 0}));
  // A sixth: both compete, and uncounted (competes_uncounted): the word
  // counts nobody.
  EXPECT_EQ(waiters_after_a_second_arrives</*Preemptive=*/false>(500'000, 3'000'000),
            (waiters_seen{counts{0, 0, false}, 2}));
  // A sixth, with many recent checks beside the holder (no uncounted
  // competition): both compete, counted.
  EXPECT_EQ(waiters_after_a_second_arrives</*Preemptive=*/false>(500'000, 3'000'000, true),
            (waiters_seen{counts{2, 0, false}, 0}));
  // A third, likewise: the second parks.
  EXPECT_EQ(waiters_after_a_second_arrives</*Preemptive=*/false>(1'000'000, 3'000'000, true),
            (waiters_seen{counts{1, 1, false}, 0}));
}

// The same turns where idle carriers do not steal: the two waiters share
// the holder's carrier, so the second is not its carrier's last awake
// waiter, and it parks while the first competes. Holds of about 400 us (40
// spins of 10 us) against wake-ups of a 1 ms resume(): shorter than a
// wake-up. While nobody parks no wake-up is timed, so the wake-up average
// stays where it was when the parks stopped, and while both averages still
// grow from 0 the hold average catches up with it: then the waiters park
// again until a timed wake-up lifts it (docs/ADAPTIVE.md, finding 21).
// Quiet, the waiters parked in 50 of the first 150 turns and in none of the
// last 150, in each of 10 runs; with two CPU hogs on the two cores, which
// stretch some timed holds, in up to 68 of the last 150; the lock without
// the rule parks in 149 of them.
TEST(adaptive_mutex, where_idle_carriers_do_not_steal_waiters_keep_competing_while_holds_are_shorter_than_wake_ups) {
  const alternating_holds turns = park_points_of_alternating_holds</*IdleCarriersSteal=*/false>(
      300, 40, 10us, 1000us, 3, /*spin_in_hold=*/true);
  ASSERT_EQ(turns.suspends_at_start.size(), 300u);
  EXPECT_GE(turns.suspends_since(0), 8u);  // the warm-up parks
  EXPECT_LE(turns.suspends_since(150), 75u);
}

// Where idle carriers do not steal, a waiter kept competing because holds
// are shorter than wake-ups parks behind another once it has competed for
// long_competition_ns (1 ms) within long_competition_checks (32) failed
// checks. Holds of 2 ms (40 spins of 50 us, one failed check of each
// waiter per spin) against wake-ups of a 10 ms resume(): shorter, so
// without the bound the waiter that arrives second competes through all
// 40 checks, far from long_wait_checks, and once both averages are timed
// (300 turns, as in the test above) it parks seldom: in 8 of the last 150
// turns with the bound taken out. With it, a waiter has competed over 1 ms
// by its 32nd check (1.6 ms of spins, and on this one carrier also any
// resume() made meanwhile, which is a slow check too) and parks in nearly
// every turn: 149 of 150.
TEST(adaptive_mutex, where_idle_carriers_do_not_steal_a_waiter_whose_checks_are_slow_parks_after_a_millisecond) {
  using M = adaptive_mutex<assigned_carriers_runtime<false>>;
  static_assert(40 * 50us > std::chrono::nanoseconds(M::long_competition_ns) * 3 / 2);
  static_assert(M::long_competition_checks < 40);
  const alternating_holds turns =
      park_points_of_alternating_holds</*IdleCarriersSteal=*/false>(300, 40, 50us, 10000us, 3, /*spin_in_hold=*/true);
  ASSERT_EQ(turns.suspends_at_start.size(), 300u);
  std::printf("[ info     ] suspends in the last 150 turns: %u\n", turns.suspends_since(150));
  EXPECT_GE(turns.suspends_since(150), 120u);
}

// The bound's clock: started at check 1, a waiter's second failed check
// (a wait that ends at its first reads no clock), and read again 4, 8, 16
// and 32 checks later (checks 5, 9, 17 and 33; counted from 0, as
// waiter::failures()), never after: a waiter whose 32 checks took less
// than 1 ms makes quick checks (hot-handover's waits of a millisecond are
// thousands of short rounds), and is left to long_wait_checks.
TEST(adaptive_mutex, where_idle_carriers_do_not_steal_the_competition_bound_reads_the_clock_only_in_32_checks_after_its_second) {
  using M = adaptive_mutex<assigned_carriers_runtime<false>>;
  using access = detail::adaptive_mutex_access;
  const auto now = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  std::int64_t since = 0;
  EXPECT_FALSE(access::competed_long<M>(0, since));
  EXPECT_EQ(since, 0);                               // check 0 reads no clock
  EXPECT_FALSE(access::competed_long<M>(1, since));  // starts the clock
  EXPECT_GT(since, 0);
  EXPECT_LE(since, now());
  since = now() + 3'600'000'000'000;  // an hour ahead: under 1 ms at any check
  for (const std::uint32_t check : {5u, 9u, 17u, 33u}) EXPECT_FALSE(access::competed_long<M>(check, since));
  since = now() - 2 * M::long_competition_ns;        // as if it began 2 ms ago
  for (std::uint32_t check = 2; check <= 2 * M::long_wait_checks; ++check) {
    const bool read = check == 5 || check == 9 || check == 17 || check == 33;
    EXPECT_EQ(access::competed_long<M>(check, since), read) << "check " << check;
  }
}

TEST(adaptive_mutex, where_idle_carriers_do_not_steal_the_second_waiter_parks_while_holds_outlast_wake_ups) {
  // A control: holds of 4 ms or more (40 sleeps of 100 us) against
  // wake-ups of 1 ms or more (less than 4 ms unless a resume() lasts four
  // times its sleep): the waiter that arrives second parks in every turn,
  // also while the two averages still grow from 0 (bounded alike, they grow
  // at the same pace until the wake-ups' reach 1 ms).
  const alternating_holds turns =
      park_points_of_alternating_holds</*IdleCarriersSteal=*/false>(40, 40, 100us, 1000us, 3);
  ASSERT_EQ(turns.suspends_at_start.size(), 40u);
  EXPECT_GE(turns.suspends_since(16), 20u);
}

TEST(adaptive_mutex, where_idle_carriers_do_not_steal_waiters_keep_competing_while_wake_ups_last_many_holds) {
  // Holds of 40 yields (well under a millisecond) against wake-ups of a
  // 10 ms resume(), as on a runtime whose idle carriers steal
  // (waiters_keep_competing_when_holds_are_short_next_to_wake_ups): once
  // both are timed, nobody parks. Until session 27 a wake-up of more than
  // four holds made the waiter that arrives second park here in every turn
  // (it still does with that upper limit put back in the header), and in
  // text-stats such parked waiters became the hand-off rule's waiters a
  // ready-queue round away (docs/ADAPTIVE.md, finding 25).
  const alternating_holds turns =
      park_points_of_alternating_holds</*IdleCarriersSteal=*/false>(40, 40, 0us, 10000us, 3);
  ASSERT_EQ(turns.suspends_at_start.size(), 40u);
  EXPECT_GE(turns.suspends_since(0), 2u);  // the warm-up parks
  EXPECT_EQ(turns.suspends_since(16), 0u);
}

// The reservation, step by step on one carrier with barge limit 1: LT 1
// waits out a long hold and parks; LT 0's unlock() wakes it and LT 0 re-locks
// at once, a barge past the woken LT 1, which then runs and loses one check.
// LT 0's next unlock() is due a hand-off and the woken waiter has run, so it
// keeps the word locked for LT 1: LT 0's try_lock() right after it fails,
// and LT 1 acquires before LT 0 again. (With the reservation disabled,
// LT 0's try_lock() took the word back: checked by editing the header.)
TEST(adaptive_mutex, unlock_reserves_the_word_for_a_woken_waiter_that_has_run_once_a_hand_off_is_due) {
  using R = assigned_carriers_runtime<true>;
  R::reset();
  adaptive_mutex<R> m(wait_policy{}.with_yield_every(1).with_suspend_after(4), /*barge_limit=*/1);
  std::vector<unsigned> order;
  bool retaken_at_once = true;
  watchdog dog("adaptive reservation", 60s);
  R::run_lts(2, [&](unsigned lt) {
    if (lt == 0) {
      lock_counted(m);
      for (int i = 0; i < static_cast<int>(adaptive_mutex<R>::long_wait_checks) + 16; ++i) R::yield();
      m.unlock();  // not due yet (no barge): frees the word and wakes LT 1
      m.lock();    // the barge: LT 1 is woken but has not run
      order.push_back(0);
      R::yield();  // LT 1 fails once (WOKEN_LOST) and, the only waiter, stays awake
      m.unlock();  // due: reserves the word for LT 1
      retaken_at_once = m.try_lock();
      if (retaken_at_once) m.unlock();
      m.lock();
      order.push_back(0);
      m.unlock();
      return;
    }
    m.lock();
    order.push_back(1);
    m.unlock();
  });
  EXPECT_EQ(R::suspends[0], 1u);  // LT 1's long-wait park
  EXPECT_FALSE(retaken_at_once);
  EXPECT_EQ(order, (std::vector<unsigned>{0, 1, 0}));
}

// A hold begun on an idle mutex is fast: its unlock() is a store that looks
// at no waiter, so a waiter that arrives during it must not park (nothing
// would wake it, a lost wake-up). It competes uncounted, as in TTAS, and
// the holds begun while it waits are counted ones, in which it counts
// itself and may park. One carrier: LT 0 holds across 4 yields while LTs
// 1-3 fail at each, releases, re-locks at once (past them) and holds
// across 4 more; then each of LTs 1-3 acquires.
struct first_and_second_hold {
  std::uint64_t suspends_in_first = 0;   // made before LT 0's first unlock()
  std::uint64_t suspends_in_second = 0;  // made during its second hold
  int acquisitions = 0;
};
first_and_second_hold waiters_during_two_holds(bool first_hold_fast) {
  using counted = counting_runtime<boost_fiber_runtime>;
  adaptive_mutex<counted> m(wait_policy{}.with_yield_every(1).with_suspend_after(4));
  std::atomic<bool> held{false};
  first_and_second_hold r;
  watchdog dog("adaptive waiters during a fast hold", 60s);
  counted::reset();
  run_on_one_carrier(4, [&](unsigned lt) {
    if (lt == 0) {
      lock_counted_if(!first_hold_fast, m);
      ++r.acquisitions;
      held.store(true, std::memory_order_relaxed);
      for (int i = 0; i < 4; ++i) boost_fiber_runtime::yield();
      r.suspends_in_first = counted::totals().suspends;
      m.unlock();
      EXPECT_TRUE(m.try_lock());  // nobody else ran: the word is free
      ++r.acquisitions;
      for (int i = 0; i < 4; ++i) boost_fiber_runtime::yield();
      r.suspends_in_second = counted::totals().suspends - r.suspends_in_first;
      m.unlock();
      return;
    }
    while (!held.load(std::memory_order_relaxed)) boost_fiber_runtime::yield();
    m.lock();
    ++r.acquisitions;
    m.unlock();
  });
  return r;
}

TEST(adaptive_mutex, a_waiter_does_not_park_during_a_fast_hold_and_counts_itself_in_the_next) {
  const first_and_second_hold fast = waiters_during_two_holds(/*first_hold_fast=*/true);
  EXPECT_EQ(fast.suspends_in_first, 0u);
  // LT 0 took the word back past the three uncounted waiters: a counted
  // hold, in which they count themselves; LT 1 keeps competing, LTs 2 and
  // 3 park behind it.
  EXPECT_EQ(fast.suspends_in_second, 2u);
  EXPECT_EQ(fast.acquisitions, 5);
  // The control: had the first hold been counted, LTs 2 and 3 would have
  // parked in it.
  const first_and_second_hold counted_first = waiters_during_two_holds(/*first_hold_fast=*/false);
  EXPECT_EQ(counted_first.suspends_in_first, 2u);
  EXPECT_EQ(counted_first.acquisitions, 5);
}

// Behind a fast hold a waiter yields until it ends, however long, so no
// hold is fast while the mutex's sampled holds last 100 us or more. One
// carrier, three LTs. If `long_holds_first`, they first take 24 turns each
// holding for 400 us (each yields first, so the others wait and acquire
// in lock_slow(), where holds are sampled). Then LT 0 alone locks and
// unlocks the idle mutex `quiet_acquisitions` times, and then locks it and
// holds across 4 yields while LTs 1 and 2 fail at each. Returns the
// suspends made during that last hold.
std::uint64_t suspends_in_a_hold_begun_on_an_idle_mutex(bool long_holds_first, unsigned quiet_acquisitions = 0) {
  using counted = counting_runtime<boost_fiber_runtime>;
  adaptive_mutex<counted> m(wait_policy{}.with_yield_every(1).with_suspend_after(4));
  unsigned learnt = 0;  // one carrier: plain variables
  bool held = false;
  std::uint64_t during = 0;
  watchdog dog("adaptive hold begun on an idle mutex", 60s);
  counted::reset();
  run_on_one_carrier(3, [&](unsigned lt) {
    for (int turn = 0; long_holds_first && turn < 24; ++turn) {
      m.lock();
      boost_fiber_runtime::yield();
      const auto until = std::chrono::steady_clock::now() + 400us;
      while (std::chrono::steady_clock::now() < until) {
      }
      m.unlock();
      boost_fiber_runtime::yield();
    }
    ++learnt;
    if (lt == 0) {
      while (learnt != 3) boost_fiber_runtime::yield();
      for (unsigned i = 0; i < quiet_acquisitions; ++i) {
        m.lock();
        m.unlock();
      }
      m.lock();
      held = true;
      const std::uint64_t before = counted::totals().suspends;
      for (int i = 0; i < 4; ++i) boost_fiber_runtime::yield();
      during = counted::totals().suspends - before;
      m.unlock();
      return;
    }
    while (!held) boost_fiber_runtime::yield();
    m.lock();
    m.unlock();
  });
  return during;
}

TEST(adaptive_mutex, no_hold_is_fast_while_holds_are_long) {
  // A counted hold: LT 1 keeps competing, LT 2 parks.
  EXPECT_EQ(suspends_in_a_hold_begun_on_an_idle_mutex(/*long_holds_first=*/true), 1u);
  // The control: with no holds sampled the hold is fast, and nobody parks.
  EXPECT_EQ(suspends_in_a_hold_begun_on_an_idle_mutex(/*long_holds_first=*/false), 0u);
}

// Holds are sampled only under contention, so a mutex whose holds were long
// forgets them after a run of uncontended acquisitions (64 in a row with no
// unlock through its slow path), and its holds are fast again.
TEST(adaptive_mutex, holds_are_fast_again_after_a_run_of_uncontended_acquisitions) {
  const unsigned run =
      detail::adaptive_mutex_access::forget_holds_after<adaptive_mutex<counting_runtime<boost_fiber_runtime>>>;
  ASSERT_GT(run, 1u);
  // The run's last acquisition forgets the holds: the hold after it is fast
  // (LTs 1 and 2 yield through it).
  EXPECT_EQ(suspends_in_a_hold_begun_on_an_idle_mutex(/*long_holds_first=*/true, run), 0u);
  // The control: after half the run the hold is still counted (LT 2
  // parks). (The last turns of the long holds may find the mutex idle as
  // well, so the run can end a few acquisitions early: not run - 1.)
  EXPECT_EQ(suspends_in_a_hold_begun_on_an_idle_mutex(/*long_holds_first=*/true, run / 2), 1u);
}

// Two LTs on one carrier take turns: each holds while the other arrives and
// waits alone, so every hold has a lone waiter counted in a word that had
// none. The holder's place is noted in the word, so its hold is timed
// through its unlock_slow() whoever arrives; the average of the sampled
// holds is nonzero after the turns. (Until session 47 the lone waiter's
// arrival cleared the holder's time, and the average stayed 0: at 2 OS
// threads in paper-coop the lone waiter never learnt that holds were long.)
TEST(adaptive_mutex, the_holds_a_lone_waiter_waits_out_are_timed) {
  using counted = counting_runtime<boost_fiber_runtime>;
  adaptive_mutex<counted> m(wait_policy{}.with_yield_every(1).with_suspend_after(4));
  watchdog dog("adaptive holds beside a lone waiter", 60s);
  unsigned holds_beside_one_waiter = 0;  // one carrier: plain variables
  unsigned holds_beside_more = 0;
  run_on_one_carrier(2, [&](unsigned) {
    for (int turn = 0; turn < 40; ++turn) {
      test::lock_counted(m);
      // The other LT runs at this yield and waits for us.
      boost_fiber_runtime::yield();
      const auto waiters = detail::adaptive_mutex_access::counted_waiters(m);
      const auto counted_waiters = waiters.competing + waiters.parked;
      holds_beside_one_waiter += counted_waiters == 1 ? 1 : 0;
      holds_beside_more += counted_waiters > 1 ? 1 : 0;
      const auto until = std::chrono::steady_clock::now() + 20us;
      while (std::chrono::steady_clock::now() < until) {
      }
      m.unlock();
      boost_fiber_runtime::yield();
    }
  });
  // The scenario: nearly all 80 holds had one waiter beside them, and all
  // but the first began in lock_slow(), where one hold in 8 is timed.
  EXPECT_EQ(holds_beside_more, 0u);
  ASSERT_GE(holds_beside_one_waiter, 70u);
  EXPECT_GT(detail::adaptive_mutex_access::sampled_hold_ns(m), 0);
}

// Real parallelism: the adversary re-locks without pause on its own core
// until every victim has done its rounds.
void os_threads_progress_against_a_tight_loop(const wait_policy& policy) {
  adaptive_mutex<os_thread_runtime> m(policy);
  std::atomic<unsigned> victims_left{3};
  const unsigned rounds = static_cast<unsigned>(2000 * stress_scale()) + 10;
  long counter = 0;
  watchdog dog("adaptive os-thread adversary", 120s);
  executor_options o;
  o.carriers = 2;
  run_lts_on_os_threads(o, 4, [&](unsigned lt) {
    if (lt == 0) {
      while (victims_left.load(std::memory_order_relaxed) != 0) {
        m.lock();
        ++counter;
        m.unlock();
      }
      return;
    }
    for (unsigned i = 0; i < rounds; ++i) {
      m.lock();
      ++counter;
      m.unlock();
    }
    victims_left.fetch_sub(1);
  });
  EXPECT_GE(counter, 3L * rounds);
}

TEST(adaptive_mutex, queued_os_threads_progress_against_a_tight_loop) {
  os_threads_progress_against_a_tight_loop(default_wait_policy<os_thread_runtime>());
}

// A policy that never yields: the victims must still finish (they park
// at their first failed check while others compete, and the barge limit
// hands them the lock); the test checks only that they finish.
TEST(adaptive_mutex, queued_os_threads_progress_with_a_policy_that_never_yields) {
  os_threads_progress_against_a_tight_loop(wait_policy{}.with_yield_every(0).with_suspend_after(8));
}

// The lifetime rule (support/lifetime.hpp) where unlock() reserves the word
// for the woken waiter or hands the lock to a parked one. With the default
// barge limit that is rare in the generic suites' check; with barge limit 1
// nearly every contended unlock() is due to do it. (Until session 14 a
// reservation released the queue guard after the word; with that window
// widened by a 50 us sleep, both tests below failed, 3 runs of 3 each.)
template <class R>
void last_holder_may_destroy_with_barge_limit_one() {
  using counted = counting_runtime<R>;
  expect_last_holder_may_destroy<counted, adaptive_mutex<counted>>(
      static_cast<unsigned>(300 * stress_scale()) + 1, wait_policy{}.with_suspend_after(1).with_yield_every(1),
      std::uint32_t{1});
}

TEST(adaptive_mutex, last_holder_may_destroy_it_while_unlock_hands_it_over_on_boost_fiber) {
  last_holder_may_destroy_with_barge_limit_one<boost_fiber_runtime>();
}

TEST(adaptive_mutex, last_holder_may_destroy_it_while_unlock_hands_it_over_on_os_threads) {
  last_holder_may_destroy_with_barge_limit_one<os_thread_runtime>();
}

// A waiter in park() counts itself as parked, finds the word free and takes
// its count back, all under the queue guard. A holder that reads the word in
// that moment sees a parked waiter; under the guard it must find the queue
// empty and look at the word again, not pop from it. (Session 14's first
// lifetime fix popped: this test crashed in 6 runs of 6, and in 4 of 10 with
// 100 mutexes.) Six OS threads on the machine's cores, so that a parker is
// preempted inside that window; try_lock() loops make holders that never
// counted themselves; barge limit 2 keeps the hand-off paths busy. Many
// short-lived mutexes: once a mutex has timed its short holds against its
// futex wake-ups, its waiters keep competing instead of parking (finding
// 18), so the parks come from each mutex's first rounds (about 12 per
// mutex). 5000 mutexes of 200 rounds reached the look-again branch 1-7
// times in four stand-alone counts; 500 of 2000 rounds, 7-14 times before
// that rule. (More mutexes cost more than they find when the machine is
// loaded: each mutex's first parks wait for futex wake-ups.)
TEST(adaptive_mutex, unlock_looks_again_when_a_parker_took_its_count_back) {
  using R = counting_runtime<os_thread_runtime>;
  const unsigned threads = 6;
  const unsigned rounds = 200;
  const unsigned mutexes = static_cast<unsigned>(5000 * stress_scale()) + 1;
  watchdog dog("parker takes its count back", 300s);
  const std::uint64_t suspends_before = R::totals().suspends;
  const std::uint64_t resumes_before = R::totals().resumes;
  for (unsigned k = 0; k < mutexes; ++k) {
    adaptive_mutex<R> m(default_wait_policy<R>(), 2);
    long counter = 0;  // only the mutex protects it
    std::atomic<int> inside{0};
    std::atomic<bool> overlap{false};
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t) {
      ts.emplace_back([&] {
        for (unsigned i = 0; i < rounds; ++i) {
          if (i % 3 == 2) {
            while (!m.try_lock()) R::yield();
          } else {
            m.lock();
          }
          if (inside.fetch_add(1, std::memory_order_relaxed) != 0) overlap = true;
          ++counter;
          if (i % 7 == 0) R::yield();
          inside.fetch_sub(1, std::memory_order_relaxed);
          m.unlock();
        }
      });
    }
    for (std::thread& t : ts) t.join();
    ASSERT_FALSE(overlap.load());
    ASSERT_EQ(counter, static_cast<long>(threads) * rounds);
  }
  // The stress went through park(): at least one park per mutex on average,
  // and each park was matched by one resume (INV1 of wait/handover.hpp).
  const wait_counts counts = R::totals();
  EXPECT_GE(counts.suspends - suspends_before, mutexes);
  EXPECT_EQ(counts.suspends - suspends_before, counts.resumes - resumes_before);
}

}  // namespace
}  // namespace fibersync::test
