// native.hpp: native_runtime, the adapter for fibersync's own M:N scheduler
// (fibersync::sched, library target fibersync::sched; DESIGN.md section 4).
//
//   yield      sched::this_thread::yield(): back of the carrier's ready queue
//   suspend    sched::this_thread::suspend(): consume the uthread's permit or
//              park; the carrier publishes `parked` only after the context
//              switch, so a racing resume can never schedule a running uthread
//   resume     sched::resume(h): set the permit, or un-park h onto the ready
//              queue of the carrier it last ran on; from any thread
//   carrier    process-wide id of the carrier OS thread running the caller,
//              read through a non-inlined accessor (the uthread may migrate)
// Permit semantics and the permit state machine: sched/include/fibersync/
// sched/scheduler.hpp. Executor: runtime/native_executor.hpp.
#pragma once

#include <fibersync/sched/scheduler.hpp>

#include <string_view>

#include "fibersync/runtime/concept.hpp"
#include "fibersync/wait/wait_policy.hpp"

namespace fibersync {

struct native_runtime {
  using handle = sched::uthread*;

  static constexpr std::string_view name = "native";

  // Same reasoning as boost_fiber_runtime: a waiter holds its carrier.
  static constexpr wait_policy default_wait_policy() noexcept {
    return fiber_wait_policy();
  }
  // With stealing on (the default) an idle carrier takes work from busy ones,
  // and new work wakes a sleeping carrier (sched/src/scheduler.cpp).
  static constexpr bool idle_carriers_steal = true;

  static handle current() { return sched::this_thread::self(); }
  static void yield() { sched::this_thread::yield(); }
  static void suspend() { sched::this_thread::suspend(); }
  static void resume(handle h) { sched::resume(h); }
  // Process-wide id of the carrier OS thread, as boost_fiber_runtime gives;
  // out of line, in the library (DESIGN.md 7).
  static unsigned carrier() noexcept { return sched::this_thread::carrier_id(); }
};

static_assert(runtime<native_runtime>);

}  // namespace fibersync
