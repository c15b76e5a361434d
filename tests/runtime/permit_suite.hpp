// permit_suite.hpp: permit semantics every runtime adapter must provide
// (runtime/concept.hpp): an early resume is not lost, a resume may come from
// another carrier or from a plain OS thread, and suspend/resume ping-pong
// between two LTs never hangs.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "support/runtimes.hpp"
#include "support/watchdog.hpp"

namespace fibersync::test {

using namespace std::chrono_literals;

template <class R>
class permit_suite : public ::testing::Test {};
TYPED_TEST_SUITE_P(permit_suite);

TYPED_TEST_P(permit_suite, resume_before_suspend_returns_at_once) {
  using R = TypeParam;
  watchdog dog("early resume", 30s);
  bool returned = false;
  run_lts<R>(1, 1, [&](unsigned) {
    R::resume(R::current());
    R::suspend();  // must not block: the permit is already set
    returned = true;
  });
  EXPECT_TRUE(returned);
}

TYPED_TEST_P(permit_suite, repeated_resumes_leave_one_permit) {
  using R = TypeParam;
  watchdog dog("idempotent resume", 30s);
  std::atomic<int> stage{0};
  std::atomic<typename R::handle> first{};
  run_lts<R>(1, 2, [&](unsigned i) {
    if (i == 0) {
      first = R::current();
      R::resume(R::current());
      R::resume(R::current());
      R::suspend();  // consumes the single permit
      stage = 1;
      R::suspend();  // must park now; LT 1 resumes it
      stage = 3;
    } else {
      while (stage.load() != 1) R::yield();
      std::this_thread::sleep_for(20ms);  // a wrongly kept second permit would let LT 0 run on
      EXPECT_EQ(stage.load(), 1) << "a second suspend returned without a second resume";
      stage = 2;
      R::resume(first.load());
    }
  });
  EXPECT_EQ(stage.load(), 3);
}

TYPED_TEST_P(permit_suite, resume_from_plain_os_thread) {
  using R = TypeParam;
  watchdog dog("foreign resume", 30s);
  std::atomic<typename R::handle> target{};
  std::atomic<bool> resumed{false};
  std::thread foreign([&] {
    while (target.load() == typename R::handle{}) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(20ms);  // most likely parked by now; either order must work
    R::resume(target.load());
  });
  run_lts<R>(1, 1, [&](unsigned) {
    target = R::current();
    R::suspend();
    resumed = true;
  });
  foreign.join();
  EXPECT_TRUE(resumed.load());
}

TYPED_TEST_P(permit_suite, ping_pong_across_carriers) {
  using R = TypeParam;
  const unsigned rounds = std::max(1000u, static_cast<unsigned>(50000 * stress_scale()));
  std::atomic<typename R::handle> h[2] = {typename R::handle{}, typename R::handle{}};
  std::atomic<unsigned> done[2] = {0, 0};
  watchdog dog("ping-pong", 120s);
  run_lts<R>(2, 2, [&](unsigned i) {
    h[i] = R::current();
    while (h[1 - i].load() == typename R::handle{}) R::yield();
    const auto peer = h[1 - i].load();
    for (unsigned r = 0; r < rounds; ++r) {
      if (i == 0) {
        R::resume(peer);
        R::suspend();
      } else {
        R::suspend();
        R::resume(peer);
      }
      done[i].fetch_add(1, std::memory_order_relaxed);
    }
  });
  EXPECT_EQ(done[0].load(), rounds);
  EXPECT_EQ(done[1].load(), rounds);
}

TYPED_TEST_P(permit_suite, carrier_index_differs_between_carriers) {
  using R = TypeParam;
  std::atomic<unsigned> seen[2] = {~0u, ~0u};
  std::thread a([&] { run_lts<R>(1, 1, [&](unsigned) { seen[0] = R::carrier(); }); });
  a.join();
  std::thread b([&] { run_lts<R>(1, 1, [&](unsigned) { seen[1] = R::carrier(); }); });
  b.join();
  EXPECT_NE(seen[0].load(), seen[1].load());
}

REGISTER_TYPED_TEST_SUITE_P(permit_suite, resume_before_suspend_returns_at_once, repeated_resumes_leave_one_permit,
                            resume_from_plain_os_thread, ping_pong_across_carriers,
                            carrier_index_differs_between_carriers);

}  // namespace fibersync::test
