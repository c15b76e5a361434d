// boost_fiber_executor.hpp: run N Boost.Fiber fibers on C carrier threads.
//
// One carrier: a fresh thread with Boost.Fiber's default round_robin
// scheduler; this can be done any number of times per process.
// Several carriers: C fresh threads, each with the `work_stealing` algorithm,
// fibers spawned on carrier 0 and stolen by the others. Boost.Fiber sizes
// work_stealing's registry once per process (std::call_once), so only one
// multi-carrier run is possible per process: a second throws executor_error
// (the harness and the tests run each such configuration in its own process).
#pragma once

#include <pthread.h>
#include <sched.h>

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
inline void pin_current_thread(const executor_options& options, unsigned carrier) {
  if (options.cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(options.cpus[carrier % options.cpus.size()], &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

inline void spawn_and_join(unsigned lts, const lt_body& body) {
  std::vector<boost::fibers::fiber> fibers;
  fibers.reserve(lts);
  for (unsigned i = 0; i < lts; ++i) fibers.emplace_back([&body, i] { body(i); });
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
  bool done = false;
  std::vector<std::thread> threads;
  for (unsigned k = 0; k < carriers; ++k) {
    threads.emplace_back([&, k] {
      detail::pin_current_thread(options, k);
      boost::fibers::use_scheduling_algorithm<boost::fibers::algo::work_stealing>(carriers, options.idle_suspend);
      // Every carrier must be registered before any fiber can be stolen.
      scheduler_ready.arrive_and_wait();
      if (k == 0) {
        detail::spawn_and_join(lts, body);
        std::lock_guard<boost::fibers::mutex> g(done_mutex);
        done = true;
        done_cv.notify_all();
      } else {
        // The main fiber waits fiber-aware, so this carrier keeps running
        // (stolen) fibers meanwhile.
        std::unique_lock<boost::fibers::mutex> lk(done_mutex);
        done_cv.wait(lk, [&] { return done; });
      }
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace fibersync
