// native_executor.hpp: run N user threads of fibersync::sched on C carriers.
//
// Each call builds a fresh scheduler (C carriers, pinned when options.cpus
// is given), spawns the LTs round-robin over the carriers, joins them all
// and shuts the scheduler down, so it can be called any number of times per
// process (unlike Boost.Fiber's work_stealing). The first exception thrown
// by a body is rethrown after every LT finished. options.idle_suspend is
// ignored: idle carriers always spin briefly and then sleep.
// spawn_and_join_on_native() lets an LT of a running call start and join
// more user threads on the same scheduler.
#pragma once

#include <atomic>
#include <exception>
#include <vector>

#include "fibersync/runtime/executor.hpp"
#include "fibersync/runtime/native.hpp"

namespace fibersync {

namespace detail {
// The scheduler of the run_lts_on_native call in progress (calls do not nest).
inline std::atomic<sched::scheduler*>& native_current_scheduler() {
  static std::atomic<sched::scheduler*> current{nullptr};
  return current;
}
}  // namespace detail

inline void run_lts_on_native(const executor_options& options, unsigned lts, const lt_body& body) {
  if (options.carriers == 0) throw executor_error("carriers must be positive");
  sched::scheduler_options so;
  so.carriers = options.carriers;
  so.cpus = options.cpus;
  std::exception_ptr first;
  {
    sched::scheduler s(so);
    detail::native_current_scheduler().store(&s);
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
    detail::native_current_scheduler().store(nullptr);
  }
  if (first) std::rethrow_exception(first);
}

// From an LT of a running run_lts_on_native: run body(0..k-1) in k new user
// threads of the same scheduler and join them.
inline void spawn_and_join_on_native(unsigned k, const lt_body& body) {
  sched::scheduler* s = detail::native_current_scheduler().load();
  if (s == nullptr) throw executor_error("spawn_and_join_on_native: no run_lts_on_native is running");
  std::vector<sched::task> tasks;
  tasks.reserve(k);
  for (unsigned i = 0; i < k; ++i) tasks.push_back(s->spawn([&body, i] { body(i); }));
  for (auto& t : tasks) t.join();
}

}  // namespace fibersync
