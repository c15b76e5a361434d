// native_support.hpp: executor_for<native_runtime>, so the shared typed
// suites (suites/mutex_suite.hpp, runtime/permit_suite.hpp) run on
// fibersync::sched. Include before those suites.
#pragma once

#include <fibersync/runtime/native.hpp>
#include <fibersync/runtime/native_executor.hpp>

#include "support/runtimes.hpp"

namespace fibersync::test {
template <>
struct executor_for<native_runtime> {
  static constexpr bool cooperative = true;
  static void run(const executor_options& o, unsigned lts, const lt_body& body) { run_lts_on_native(o, lts, body); }
};
}  // namespace fibersync::test
