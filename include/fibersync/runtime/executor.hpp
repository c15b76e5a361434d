// executor.hpp: how to run N lightweight threads on C carriers, the common
// shape of the per-runtime executors (<runtime>_executor.hpp).
//
// Mutexes need only the `runtime` concept; tests and the benchmark harness
// also need to start LTs on a chosen number of carriers and wait for them.
// Each runtime provides `run_lts(options, lts, body)`, which calls body(i) for
// i in [0, lts) each in its own LT and returns when all have finished.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace fibersync {

struct executor_options {
  unsigned carriers = 1;      // OS threads that run the LTs (OS threads: CPUs they may use)
  std::vector<int> cpus;      // carrier k is pinned to cpus[k % size]; empty: not pinned
  // Idle carriers sleep until work arrives instead of polling (Boost.Fiber's
  // work_stealing `suspend` flag). Polling looks cheaper but, measured on the
  // 2-core machine (2026-11-22, MCS lost-wake-up stress, 32 fibers, 200 000
  // hand-overs), 7 of 40 polling runs fell into a mode where every
  // cross-carrier resume took ~280 us (both carriers spinning in their
  // dispatchers), for 2.5x the total time; with sleeping carriers 0 of 40.
  bool idle_suspend = true;
  // Argobots: one pool shared by every execution stream (ULTs migrate freely)
  // instead of one pool per execution stream (ULTs stay where they started).
  bool shared_pool = false;
};

using lt_body = std::function<void(unsigned lt_index)>;

// Thrown for a configuration the runtime cannot run (message says why).
struct executor_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {
// Pins the calling thread to carrier k's cpu, if options.cpus asks for it.
// Best effort: a restricted cpuset may refuse, and the run goes on unpinned.
inline void pin_current_thread(const executor_options& options, unsigned carrier) noexcept {
  if (options.cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(options.cpus[carrier % options.cpus.size()], &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}
}  // namespace detail

}  // namespace fibersync
