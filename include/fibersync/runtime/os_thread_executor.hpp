// os_thread_executor.hpp: run N OS threads as "LTs" on C CPUs.
//
// For OS threads a carrier is a CPU: every thread may run on the first
// `carriers` CPUs, so oversubscription is real; with options.cpus, thread i is
// pinned to cpus[i % carriers] instead. Each thread is its own LT; the kernel
// preempts them.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <thread>
#include <vector>

#include "fibersync/runtime/executor.hpp"

namespace fibersync {

inline void run_lts_on_os_threads(const executor_options& options, unsigned lts, const lt_body& body) {
  if (options.carriers == 0) throw executor_error("carriers must be positive");
  cpu_set_t shared;
  CPU_ZERO(&shared);
  const unsigned hw = std::thread::hardware_concurrency();
  for (unsigned k = 0; k < options.carriers && k < hw; ++k) CPU_SET(k, &shared);
  std::vector<std::thread> threads;
  threads.reserve(lts);
  for (unsigned i = 0; i < lts; ++i) {
    threads.emplace_back([&, i] {
      cpu_set_t allowed = shared;
      if (!options.cpus.empty()) {
        CPU_ZERO(&allowed);
        CPU_SET(options.cpus[i % options.carriers % options.cpus.size()], &allowed);
      }
      // Best effort: a restricted cpuset (container) may refuse; the run then
      // simply uses the CPUs it has.
      pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed);
      body(i);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace fibersync
