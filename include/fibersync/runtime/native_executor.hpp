// native_executor.hpp: run N user threads of fibersync::sched on C carriers.
//
// Each call builds a fresh scheduler (C carriers, pinned when options.cpus
// is given), spawns the LTs round-robin over the carriers, joins them all
// and shuts the scheduler down, so it can be called any number of times per
// process (unlike Boost.Fiber's work_stealing). The first exception thrown
// by a body is rethrown after every LT finished. options.idle_suspend is
// ignored: idle carriers always spin briefly and then sleep.
#pragma once

#include <exception>
#include <vector>

#include "fibersync/runtime/executor.hpp"
#include "fibersync/runtime/native.hpp"

namespace fibersync {

inline void run_lts_on_native(const executor_options& options, unsigned lts, const lt_body& body) {
  if (options.carriers == 0) throw executor_error("carriers must be positive");
  sched::scheduler_options so;
  so.carriers = options.carriers;
  so.cpus = options.cpus;
  std::exception_ptr first;
  {
    sched::scheduler s(so);
    std::vector<sched::task> tasks;
    tasks.reserve(lts);
    for (unsigned i = 0; i < lts; ++i) tasks.push_back(s.spawn([&body, i] { body(i); }));
    for (auto& t : tasks) {
      try {
        t.join();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace fibersync
