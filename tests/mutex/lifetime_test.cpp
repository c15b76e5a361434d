// The lifetime rule of std::mutex and POSIX mutexes, made deterministic for
// the locks that hand the lock to a parked waiter: the LT that unlocks last
// may destroy the mutex while the LT that handed the lock to it is still
// inside its own unlock().
//
// Two OS threads on two cpus (on different leaves of the topology under
// test): A holds the lock until B has parked behind it, then unlocks. The
// runtime stalls A inside the resume() by which its unlock() wakes B, until B
// has locked, unlocked and destroyed the mutex (its storage filled with a
// pattern and, under AddressSanitizer, poisoned). Whatever A's unlock() does
// to the mutex after that resume shows: a changed pattern, an ASan report, a
// TSan race, or a hang (the watchdog). The generic suites check every lock on
// every runtime by stress (support/lifetime.hpp); this pins down the window.
// (Found in hmcs_mutex, whose leaf CAS came after the root's release until
// session 14: these tests failed on the 2-node and 3-level topologies.)
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include <fibersync/fibersync.hpp>

#include "support/adaptive_access.hpp"
#include "support/poison.hpp"
#include "support/watchdog.hpp"

namespace fibersync::test {
namespace {
using namespace std::chrono_literals;

// os_thread_runtime, except that it reports a suspension, and that a
// resume() by a thread that armed `stall_here` waits until `destroyed`.
struct stalling_runtime {
  using handle = os_thread_runtime::handle;
  static constexpr std::string_view name = "stalling_os_threads";
  static constexpr wait_policy default_wait_policy() noexcept { return os_thread_runtime::default_wait_policy(); }
  static constexpr bool idle_carriers_steal = true;
  static constexpr bool preemptive = true;

  static handle current() noexcept { return os_thread_runtime::current(); }
  static void yield() noexcept { os_thread_runtime::yield(); }
  static void suspend() noexcept {
    parked.store(true);
    os_thread_runtime::suspend();
  }
  static void resume(handle h) noexcept {
    os_thread_runtime::resume(h);
    if (!std::exchange(stall_here, false)) return;
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while (!destroyed.load() && std::chrono::steady_clock::now() < give_up) ::sched_yield();
    stalled_until_destroyed = destroyed.load();
  }
  static unsigned carrier() noexcept { return os_thread_runtime::carrier(); }

  static inline std::atomic<bool> parked{false};
  static inline std::atomic<bool> destroyed{false};
  static inline std::atomic<bool> stalled_until_destroyed{false};
  static inline thread_local bool stall_here = false;
};
static_assert(runtime<stalling_runtime>);
using S = stalling_runtime;

void pin_to(unsigned cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ASSERT_EQ(::pthread_setaffinity_np(::pthread_self(), sizeof set, &set), 0);
}

// Two allowed cpus on different leaves (cache clusters) of the current
// topology; on a flat one, any two.
std::optional<std::pair<unsigned, unsigned>> two_cpus_on_different_leaves() {
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return std::nullopt;
  const topology& t = topology::current();
  const bool flat = t.clusters() == 1;
  for (unsigned a = 0; a < CPU_SETSIZE; ++a) {
    if (!CPU_ISSET(a, &allowed)) continue;
    for (unsigned b = a + 1; b < CPU_SETSIZE; ++b) {
      if (CPU_ISSET(b, &allowed) && (flat || t.place(a).cluster != t.place(b).cluster)) return std::make_pair(a, b);
    }
  }
  return std::nullopt;
}

template <class M, class... Args>
void expect_destroy_while_the_releaser_stalls(std::string_view topology_text, const Args&... args) {
  topology::set_current(topology::parse(topology_text));
  const auto cpus = two_cpus_on_different_leaves();
  if (!cpus) GTEST_SKIP() << "needs two cpus on different leaves of " << topology_text;
  S::parked = false;
  S::destroyed = false;
  S::stalled_until_destroyed = false;

  const auto storage = std::make_unique<watched_storage<M>>();
  M* m = &storage->construct(args...);
  std::atomic<bool> a_holds{false};
  watchdog dog("destroy while the releaser stalls", 60s);
  std::thread a([&] {
    pin_to(cpus->first);
    lock_counted(*m);  // so that B can park behind A (a fast hold would not let it)
    a_holds = true;
    while (!S::parked.load()) ::sched_yield();  // B waits behind us, asleep
    S::stall_here = true;
    m->unlock();  // wakes B, stalls in resume() until B destroyed the mutex
    S::stall_here = false;
  });
  std::thread b([&] {
    pin_to(cpus->second);
    while (!a_holds.load()) ::sched_yield();
    m->lock();
    m->unlock();
    storage->destroy();
    S::destroyed = true;
  });
  a.join();
  b.join();
  EXPECT_TRUE(S::stalled_until_destroyed.load()) << "B did not destroy the mutex while A stood in resume()";
  EXPECT_TRUE(storage->untouched()) << "A's unlock() wrote into the mutex after it woke B";
}

const wait_policy park_at_once = wait_policy{}.with_suspend_after(1).with_yield_every(1);

TEST(lifetime, mcs) { expect_destroy_while_the_releaser_stalls<mcs_mutex<S>>("1x2", park_at_once); }
TEST(lifetime, clh) { expect_destroy_while_the_releaser_stalls<clh_mutex<S>>("1x2", park_at_once); }
TEST(lifetime, cna_flat) { expect_destroy_while_the_releaser_stalls<cna_mutex<S>>("1x2", park_at_once); }
TEST(lifetime, cna_two_nodes) { expect_destroy_while_the_releaser_stalls<cna_mutex<S>>("2x1", park_at_once); }
TEST(lifetime, numa_mcs_flat) { expect_destroy_while_the_releaser_stalls<numa_mcs_mutex<S>>("1x2", park_at_once); }
TEST(lifetime, hmcs_flat) { expect_destroy_while_the_releaser_stalls<hmcs_mutex<S>>("1x2", park_at_once); }
// B leads the other node's cohort and parks in the root queue behind A's.
TEST(lifetime, hmcs_two_nodes) { expect_destroy_while_the_releaser_stalls<hmcs_mutex<S>>("2x1", park_at_once); }
// A and B: two cache clusters of node 0; B parks in the node's queue.
TEST(lifetime, hmcs_three_levels) { expect_destroy_while_the_releaser_stalls<hmcs_mutex<S>>("0|1/2|3", park_at_once); }
// B competes alone, so it parks after long_wait_checks failed checks; A's
// unlock() wakes it (WOKEN), or with barge limit 0 hands it the lock.
TEST(lifetime, adaptive_wake) { expect_destroy_while_the_releaser_stalls<adaptive_mutex<S>>("1x2", park_at_once); }
TEST(lifetime, adaptive_hand_off) {
  expect_destroy_while_the_releaser_stalls<adaptive_mutex<S>>("1x2", park_at_once, std::uint32_t{0});
}

}  // namespace
}  // namespace fibersync::test
