// The three-phase waiter and the park/grant handshake, with a scripted
// runtime that records what the waiter asked of it.
#include <fibersync/runtime/counting.hpp>
#include <fibersync/runtime/os_thread.hpp>
#include <fibersync/wait/handover.hpp>
#include <fibersync/wait/waiter.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace fibersync::test {
namespace {

struct scripted_runtime {
  using handle = int;
  static constexpr std::string_view name = "scripted";
  static inline int yields = 0;
  static inline int suspends = 0;
  static handle current() { return 7; }
  static void yield() { ++yields; }
  static void suspend() { ++suspends; }
  static void resume(handle) {}
  static unsigned carrier() { return 0; }
};
static_assert(runtime<scripted_runtime>);

TEST(waiter, yields_every_k_failures_and_advances_at_threshold) {
  scripted_runtime::yields = 0;
  waiter<scripted_runtime> w(wait_policy{}.with_yield_every(4).with_suspend_after(10).with_max_backoff(2));
  int advanced_at = 0;
  for (int i = 1; i <= 20 && advanced_at == 0; ++i) {
    if (w.on_failure(/*may_suspend=*/true)) advanced_at = i;
  }
  EXPECT_EQ(advanced_at, 10);
  EXPECT_EQ(scripted_runtime::yields, 2);  // failures 4 and 8
}

TEST(waiter, never_advances_when_suspension_not_allowed_or_disabled) {
  waiter<scripted_runtime> a(wait_policy{}.with_suspend_after(3).with_max_backoff(1));
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(a.on_failure(/*may_suspend=*/false));
  waiter<scripted_runtime> b(wait_policy{}.with_suspend_after(0).with_max_backoff(1));
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(b.on_failure(/*may_suspend=*/true));
}

TEST(waiter, yield_every_zero_never_yields) {
  scripted_runtime::yields = 0;
  waiter<scripted_runtime> w(wait_policy{}.with_yield_every(0).with_suspend_after(0).with_max_backoff(1));
  for (int i = 0; i < 100; ++i) w.on_failure(true);
  EXPECT_EQ(scripted_runtime::yields, 0);
}

// A check spins at most max_backoff pauses, and never more than the cap,
// whatever the policy asks (adaptive_mutex's unannounced spin relies on it).
static_assert(waiter<scripted_runtime>::longest_backoff(wait_policy{}.with_max_backoff(8)) == 8);
static_assert(waiter<scripted_runtime>::longest_backoff(wait_policy{}.with_max_backoff(0)) == 0);
static_assert(waiter<scripted_runtime>::longest_backoff(wait_policy{}.with_max_backoff(0xffffffffu)) ==
              waiter<scripted_runtime>::longest_backoff_cap);

TEST(wait_policy, runtime_defaults_are_picked_up) {
  EXPECT_EQ(default_wait_policy<scripted_runtime>(), wait_policy{});
  EXPECT_EQ(default_wait_policy<os_thread_runtime>(), os_thread_runtime::default_wait_policy());
  EXPECT_NE(default_wait_policy<os_thread_runtime>(), wait_policy{});
}

TEST(handover_flag, grant_before_park_costs_no_suspend_and_no_resume) {
  using R = counting_runtime<os_thread_runtime>;
  R::reset();
  handover_flag<R> flag;
  flag.reset();
  flag.grant();
  flag.park();  // CAS fails: already granted
  EXPECT_TRUE(flag.is_granted());
  EXPECT_EQ(R::totals().suspends, 0u);
  EXPECT_EQ(R::totals().resumes, 0u);
}

TEST(handover_flag, parked_waiter_is_resumed_exactly_once) {
  using R = counting_runtime<os_thread_runtime>;
  R::reset();
  for (int round = 0; round < 2000; ++round) {
    handover_flag<R> flag;
    flag.reset();
    std::thread holder([&] {
      if (round % 2) std::this_thread::yield();
      flag.grant();
    });
    flag.await(wait_policy{}.with_suspend_after(1));
    holder.join();
    ASSERT_TRUE(flag.is_granted());
  }
  const wait_counts c = R::totals();
  EXPECT_EQ(c.suspends, c.resumes);
}

}  // namespace
}  // namespace fibersync::test
