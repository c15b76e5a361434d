// runtimes.hpp: the runtimes under test, each paired with its executor, so
// that typed suites can start LTs without knowing the runtime.
#pragma once

#include <fibersync/runtime/counting.hpp>
#include <fibersync/runtime/executor.hpp>
#include <fibersync/runtime/os_thread.hpp>
#include <fibersync/runtime/os_thread_executor.hpp>

#ifdef FIBERSYNC_TEST_BOOST_FIBER
#include <fibersync/runtime/boost_fiber.hpp>
#include <fibersync/runtime/boost_fiber_executor.hpp>
#endif

#ifdef FIBERSYNC_TEST_ARGOBOTS
#include <cstdlib>
#include <cstring>

#include <fibersync/runtime/argobots.hpp>
#include <fibersync/runtime/argobots_executor.hpp>
#endif

namespace fibersync::test {

template <class R>
struct executor_for;

template <>
struct executor_for<os_thread_runtime> {
  static constexpr bool cooperative = false;
  static void run(const executor_options& o, unsigned lts, const lt_body& body) { run_lts_on_os_threads(o, lts, body); }
};

#ifdef FIBERSYNC_TEST_BOOST_FIBER
template <>
struct executor_for<boost_fiber_runtime> {
  static constexpr bool cooperative = true;
  static void run(const executor_options& o, unsigned lts, const lt_body& body) { run_lts_on_boost_fibers(o, lts, body); }
};
#endif

#ifdef FIBERSYNC_TEST_ARGOBOTS
// FIBERSYNC_TEST_ABT_POOLS=shared runs the same tests with one pool shared by
// every execution stream (tests/CMakeLists.txt registers both modes).
template <>
struct executor_for<argobots_runtime> {
  static constexpr bool cooperative = true;
  static void run(executor_options o, unsigned lts, const lt_body& body) {
    const char* pools = std::getenv("FIBERSYNC_TEST_ABT_POOLS");
    o.shared_pool = pools != nullptr && std::strcmp(pools, "shared") == 0;
    run_lts_on_argobots(o, lts, body);
  }
};
#endif

template <class R>
struct executor_for<counting_runtime<R>> : executor_for<R> {};

template <class R>
void run_lts(unsigned carriers, unsigned lts, const lt_body& body) {
  executor_options o;
  o.carriers = carriers;
  executor_for<R>::run(o, lts, body);
}

// Whether mutex template M parks its waiters (phase 3 of the waiter): true
// for the locks whose waiters wait on a flag of their own. Specialized next
// to the suites for each such lock.
template <template <class> class M>
inline constexpr bool parks_waiters = false;

// Of the contended hand-overs in the lost-wake-up stress, at least 1 in this
// many must go to a parked LT. A lock that lets arrivals barge past its queue
// (adaptive_mutex) parks less by design and specializes it.
template <template <class> class M>
inline constexpr unsigned min_park_share_inverse = 20;

// One test case: mutex template M instantiated on runtime R (counted, so a
// test can check which waiting phases were reached).
template <template <class> class M, class R>
struct mutex_case {
  using runtime = counting_runtime<R>;
  using mutex = M<runtime>;
  // The same lock on another runtime (a test's decorator of `runtime`).
  template <class Other>
  using mutex_on = M<Other>;
  static constexpr bool parks = parks_waiters<M>;
  static constexpr unsigned park_share_inverse = min_park_share_inverse<M>;
};

}  // namespace fibersync::test
