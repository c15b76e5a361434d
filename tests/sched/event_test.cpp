// sched::event in each architecture: no lost wake-up under many concurrent
// setters and waiters, reset semantics, set/reset hand-shakes.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <fibersync/sched/event.hpp>
#include <fibersync/sched/scheduler.hpp>

#include "support/watchdog.hpp"

namespace fibersync::test {
namespace {
using namespace std::chrono_literals;
sched::scheduler_options opts(unsigned carriers, unsigned idle_spin = 4000) {
  sched::scheduler_options o;
  o.carriers = carriers;
  o.idle_spin = idle_spin;
  return o;
}
using sched::arch;

class event_arch : public ::testing::TestWithParam<arch> {};

TEST_P(event_arch, set_releases_every_waiter_many_setters_and_waiters) {
  watchdog dog("event: many setters and waiters", 240s);
  sched::scheduler s(opts(2));
  for (int round = 0; round < 200; ++round) {
    sched::event e(s, GetParam());
    constexpr int waiters = 48, setters = 4;
    std::atomic<int> released{0};
    std::vector<sched::task> tasks;
    for (int i = 0; i < waiters + setters; ++i) {
      if (i % 13 == 5 && tasks.size() >= 4) {
        tasks.push_back(s.spawn([&] {
          for (int k = 0; k < (round % 7); ++k) sched::this_thread::yield();
          e.set();
        }));
      } else {
        tasks.push_back(s.spawn([&] {
          e.wait();
          released.fetch_add(1);
        }));
      }
    }
    std::thread foreign([&] { e.set(); });  // a setter that is no uthread
    foreign.join();
    for (auto& t : tasks) t.join();
    EXPECT_TRUE(e.is_set());
  }
}

// A scheduler on which a uthread spawned on a carrier runs on that carrier
// (no stealing), as spawn_blocked_waiters() needs.
sched::scheduler_options no_stealing(unsigned carriers) {
  auto o = opts(carriers);
  o.stealing = false;
  return o;
}

// Spawns n waiters on e, each adding 1 to `released` once wait() returns,
// and returns once every one of them is blocked in wait(). A waiter counted
// on its way may not have reached wait() yet: the OS can preempt its
// carrier between the two, and a set()+reset() that overtook it would leave
// it blocked on an unset event, as it should be. A carrier runs one uthread
// at a time, a waiter does not switch out between the count and wait(), and
// a blocking wait() is registered before its carrier runs anything else, so
// a probe run on every carrier after the count reached n proves every waiter
// blocked. Needs a scheduler made with no_stealing().
std::vector<sched::task> spawn_blocked_waiters(sched::scheduler& s, sched::event& e, int n,
                                               std::atomic<int>& released) {
  std::atomic<int> counted{0};
  std::vector<sched::task> tasks;
  for (int i = 0; i < n; ++i) {
    tasks.push_back(s.spawn([&] {
      counted.fetch_add(1);
      e.wait();
      released.fetch_add(1);
    }));
  }
  while (counted.load() != n) std::this_thread::yield();
  for (unsigned c = 0; c < s.carriers(); ++c) s.spawn_on(c, [] {}).join();
  return tasks;
}

// Rounds of 32 waiters blocked on a fresh event: release(e, round) must
// release every one of them (else the joins hang until the watchdog fires)
// and leave the event unset.
template <class Release>
void expect_blocked_waiters_released(arch a, int rounds, Release release) {
  sched::scheduler s(no_stealing(2));
  for (int round = 0; round < rounds; ++round) {
    sched::event e(s, a);
    std::atomic<int> released{0};
    auto tasks = spawn_blocked_waiters(s, e, 32, released);
    release(e, round);
    for (auto& t : tasks) t.join();
    EXPECT_EQ(released.load(), 32) << "round " << round;
    EXPECT_FALSE(e.is_set()) << "round " << round;
  }
}

TEST_P(event_arch, set_then_reset_still_releases_blocked_waiters) {
  watchdog dog("event: set+reset", 120s);
  expect_blocked_waiters_released(GetParam(), 50, [](sched::event& e, int round) {
    std::this_thread::sleep_for(round % 5 == 0 ? 2ms : 0ms);
    e.set();
    e.reset();  // must not take back the wake-ups of the waiters set() released
  });
}

// reset() from another thread while set() releases its waiters (A2's
// SETTING | RESET_PENDING; in A0 and A1 a reset() between set()'s steps):
// the waiters set() found blocked must all be released, whichever comes
// first.
TEST_P(event_arch, reset_racing_set_still_releases_blocked_waiters) {
  watchdog dog("event: reset racing set", 120s);
  expect_blocked_waiters_released(GetParam(), 200, [](sched::event& e, int) {
    std::atomic<bool> go{false}, set_done{false};
    std::thread setter([&] {
      while (!go.load()) {}
      e.set();
      set_done = true;
    });
    std::thread resetter([&] {
      while (!go.load()) {}
      while (!set_done.load()) e.reset();
    });
    go = true;
    setter.join();
    resetter.join();
    e.reset();  // a reset() before set() leaves it set
  });
}

TEST_P(event_arch, reset_makes_later_waiters_block_until_next_set) {
  watchdog dog("event: reset", 60s);
  sched::scheduler s(opts(2));
  sched::event e(s, GetParam());
  e.set();
  EXPECT_TRUE(e.is_set());
  std::atomic<int> passed{0};
  auto quick = s.spawn([&] {
    e.wait();  // set: returns at once and does not consume it (manual reset)
    e.wait();
    passed.fetch_add(1);
  });
  quick.join();
  EXPECT_EQ(passed.load(), 1);
  EXPECT_TRUE(e.is_set());
  e.reset();
  e.reset();  // idempotent
  EXPECT_FALSE(e.is_set());
  auto slow = s.spawn([&] {
    e.wait();
    passed.fetch_add(1);
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(passed.load(), 1) << "a waiter passed an event that was reset";
  e.set();
  slow.join();
  EXPECT_EQ(passed.load(), 2);
}

// Two events used as a hand-shake with resets, across carriers: any lost
// wake-up hangs (watchdog). The race that once lost A1 wake-ups needs a
// setter to stall between publishing the new generation and collecting the
// registered carriers for a whole round of its partner (an OS preemption):
// on 2 cores one pair in 25-60 met it, so there are many pairs.
TEST_P(event_arch, ping_pong_with_reset_no_lost_wakeup) {
  watchdog dog("event: ping-pong", 240s);
  sched::scheduler s(opts(2));
  const int pairs = std::max(4, static_cast<int>(64 * stress_scale()));
  for (int pair = 0; pair < pairs; ++pair) {
    sched::event ping(s, GetParam()), pong(s, GetParam());
    constexpr int rounds = 20000;
    auto a = s.spawn_on(0, [&] {
      for (int k = 0; k < rounds; ++k) {
        ping.wait();
        ping.reset();
        pong.set();
      }
    });
    auto b = s.spawn_on(1, [&] {
      for (int k = 0; k < rounds; ++k) {
        ping.set();
        pong.wait();
        pong.reset();
      }
    });
    a.join();
    b.join();
  }
}

INSTANTIATE_TEST_SUITE_P(sched, event_arch, ::testing::Values(arch::a0, arch::a1, arch::a2),
                         [](const auto& info) { return std::string(sched::to_string(info.param)); });

}  // namespace
}  // namespace fibersync::test
