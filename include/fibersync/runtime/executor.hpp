// executor.hpp: how to run N lightweight threads on C carriers, the common
// shape of the per-runtime executors (<runtime>_executor.hpp).
//
// Mutexes need only the `runtime` concept; tests and the benchmark harness
// also need to start LTs on a chosen number of carriers and wait for them.
// Each runtime provides `run_lts(options, lts, body)`, which calls body(i) for
// i in [0, lts) each in its own LT and returns when all have finished.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace fibersync {

struct executor_options {
  unsigned carriers = 1;      // OS threads that run the LTs (OS threads: CPUs they may use)
  std::vector<int> cpus;      // carrier k is pinned to cpus[k % size]; empty: not pinned
  bool idle_suspend = false;  // idle carriers sleep instead of polling for work (Boost.Fiber)
};

using lt_body = std::function<void(unsigned lt_index)>;

// Thrown for a configuration the runtime cannot run (message says why).
struct executor_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace fibersync
