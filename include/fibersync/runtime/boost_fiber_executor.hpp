// boost_fiber_executor.hpp: run N Boost.Fiber fibers on C carrier threads.
//
// One carrier: a fresh thread with Boost.Fiber's default round_robin
// scheduler; this can be done any number of times per process.
// Several carriers: C fresh threads, each with the `work_stealing` algorithm;
// carrier k spawns the LTs i with i mod C == k, and idle carriers steal.
// Spawning on every carrier matters: with idle_suspend an idle carrier sleeps
// until a fiber is scheduled to it from another thread, and stealing happens
// only while awake, so fibers all spawned on carrier 0 would never leave it
// (measured 2026-11-23: 27% CPU utilisation of 2 carriers, 0 migrations, in
// hot-handover with 16 LTs). Boost.Fiber sizes
// work_stealing's registry once per process (std::call_once), so only one
// multi-carrier run is possible per process: a second throws executor_error
// (the harness and the tests run each such configuration in its own process).
#pragma once

#include <boost/fiber/algo/work_stealing.hpp>
#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/mutex.hpp>
#include <boost/fiber/operations.hpp>

#include <atomic>
#include <barrier>
#include <thread>
#include <vector>

#include "fibersync/runtime/executor.hpp"

namespace fibersync {

namespace detail {
// Spawns LTs first, first + stride, ... below lts and joins them.
inline void spawn_and_join(unsigned lts, const lt_body& body, unsigned first = 0, unsigned stride = 1) {
  std::vector<boost::fibers::fiber> fibers;
  fibers.reserve(lts / stride + 1);
  for (unsigned i = first; i < lts; i += stride) fibers.emplace_back([&body, i] { body(i); });
  for (auto& f : fibers) f.join();
}
}  // namespace detail

inline void run_lts_on_boost_fibers(const executor_options& options, unsigned lts, const lt_body& body) {
  if (options.carriers == 0) throw executor_error("carriers must be positive");
  if (options.carriers == 1) {
    std::thread carrier([&] {
      detail::pin_current_thread(options, 0);
      detail::spawn_and_join(lts, body);
    });
    carrier.join();
    return;
  }
  static std::atomic<bool> work_stealing_used{false};
  if (work_stealing_used.exchange(true)) {
    throw executor_error(
        "Boost.Fiber work_stealing can be set up only once per process: run each multi-carrier "
        "configuration in its own process");
  }
  const unsigned carriers = options.carriers;
  std::barrier scheduler_ready(carriers);
  boost::fibers::mutex done_mutex;
  boost::fibers::condition_variable done_cv;
  unsigned carriers_done = 0;
  std::vector<std::thread> threads;
  for (unsigned k = 0; k < carriers; ++k) {
    threads.emplace_back([&, k] {
      detail::pin_current_thread(options, k);
      boost::fibers::use_scheduling_algorithm<boost::fibers::algo::work_stealing>(carriers, options.idle_suspend);
      // Every carrier must be registered before any fiber can be stolen.
      scheduler_ready.arrive_and_wait();
      detail::spawn_and_join(lts, body, k, carriers);
      // Then wait fiber-aware until every carrier is done, so this carrier
      // keeps running (stolen or resumed) fibers meanwhile.
      std::unique_lock<boost::fibers::mutex> lk(done_mutex);
      if (++carriers_done == carriers) done_cv.notify_all();
      done_cv.wait(lk, [&] { return carriers_done == carriers; });
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace fibersync
