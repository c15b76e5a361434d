// adaptive_mutex specifics: the starvation bound under an adversary that
// re-acquires in a tight loop, and liveness of the queued LTs on OS threads.
// (The generic suites cover exclusion, deadlock, lost wake-ups, try_lock.)
#include <fibersync/fibersync.hpp>
#include <fibersync/runtime/boost_fiber.hpp>
#include <fibersync/runtime/boost_fiber_executor.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <limits>

#include "support/runtimes.hpp"
#include "support/watchdog.hpp"

namespace fibersync::test {
namespace {
using namespace std::chrono_literals;

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
  executor_options o;
  o.carriers = 1;
  run_lts_on_boost_fibers(o, victims + 1, [&](unsigned lt) {
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
  adaptive_mutex<boost_fiber_runtime> m(wait_policy{}.with_yield_every(1).with_suspend_after(4), barge_limit);
  const adversary_stats s = run_adversary(m, victims, 200, 20000);
  // Queued ahead of a victim: at most the other victims and the adversary;
  // each head is passed by at most barge_limit barges.
  EXPECT_LE(s.worst_bypass, static_cast<long>(victims * (barge_limit + 1) + barge_limit));
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

TEST(adaptive_mutex, queued_os_threads_progress_against_a_tight_loop) {
  // Real parallelism: the adversary re-locks without pause on its own core
  // until every victim has done its rounds.
  adaptive_mutex<os_thread_runtime> m;
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

}  // namespace
}  // namespace fibersync::test
