// concept.hpp: the `runtime` concept, the only thing a mutex knows about the
// lightweight-thread (LT) runtime it runs on.
//
// A runtime is plugged into every fibersync mutex by one adapter type (a
// class with static members only) chosen by template parameter, so one binary
// can hold every runtime x mutex pair. Adapters live in
// <fibersync/runtime/<name>.hpp> and are the only files of the library that
// include a runtime's own headers.
//
// Members, with the semantics every mutex relies on:
//
//   R::name       A string naming the runtime in results ("os_threads",
//                 "boost_fiber", "native", "argobots").
//
//   R::handle     A small, trivially copyable value naming one LT. It stays
//                 valid while that LT is suspended inside R::suspend(); a
//                 mutex never uses a handle of an LT that may have finished.
//
//   R::current()  The handle of the calling LT. May be called from any LT.
//
//   R::yield()    Lets the other ready LTs of this carrier run, then returns.
//                 Cooperative runtimes need it inside every wait loop: an LT
//                 that spins without yielding can deadlock a carrier whose
//                 other LT holds the lock.
//
//   R::suspend()  Parks the calling LT until a matching R::resume(h).
//   R::resume(h)  Makes h ready again. Callable from any LT of any carrier
//                 and from a plain OS thread that is not an LT at all.
//                 PERMIT SEMANTICS: each LT owns one binary permit. resume()
//                 sets it (idempotently); suspend() consumes it and returns at
//                 once if it was set, else parks until it is. So a resume that
//                 arrives before the matching suspend is never lost. Mutexes
//                 call resume only after the waiter announced that it will
//                 suspend (see wait/handover.hpp), so permits always balance.
//
//   R::carrier()  Index of the OS thread that runs the caller right now (the
//                 carrier). Used for statistics and locality; the value may
//                 change across any yield or suspend, so adapters implement it
//                 with a non-inlined accessor (DESIGN.md section 7).
//
// Optional: `static constexpr fibersync::wait_policy default_wait_policy()`,
// the policy a mutex uses when the user gives none (see wait/wait_policy.hpp).
//
// Optional: `static constexpr bool idle_carriers_steal`, true when a carrier
// left with no ready LT of its own promptly runs the ready LTs of busy
// carriers (a work-stealing scheduler that wakes idle carriers for new work),
// or when carriers are OS threads the kernel schedules. A parking mutex may
// otherwise keep one waiter awake per carrier, so that parking does not idle
// a carrier while another has a queue of work (adaptive_mutex does). Read it
// through idle_carriers_steal_v<R>, which is false when the member is absent.
//
// Optional: `static constexpr bool busy_carriers_steal`, true when a carrier
// that is awake and out of ready LTs of its own takes ready LTs of other
// carriers, which then stay with it (Boost.Fiber's work_stealing), even if an
// idle carrier sleeps until an LT is scheduled onto it. Where this holds and
// idle carriers do not steal, the LTs that park gather on the carriers that
// stay awake: if every waiter of a lock parks, a carrier left with nothing
// to run sleeps, the LTs woken for it are taken by the awake one, and the
// lock passes between LTs of one carrier, in its cache. A parking mutex may
// park every waiter where they mostly wait beside a holder that yielded on
// their own carrier (adaptive_mutex does). Read it through
// busy_carriers_steal_v<R>, which is false when the member is absent and
// true where idle_carriers_steal_v<R> is.
//
// Optional: `static constexpr bool preemptive`, true when LTs are scheduled
// preemptively by time slices (OS threads under the kernel): a runnable LT,
// a waiter that yielded among them, may wait for other LTs' time slices
// before it runs again, where on a cooperative runtime it runs within one
// round of its carrier's ready queue. A parking mutex may then rely on a
// yielding waiter to take a released lock soon only where this is false
// (adaptive_mutex, where idle carriers also steal, does not wake a parked
// waiter while another competes and the last woken one lost to it).
// Read it through preemptive_v<R>, which is false when the member is absent.
//
// Optional: `static int cpu() noexcept`, the processor (numbered as the OS
// numbers them) that runs the caller right now, or -1 if unknown; it may
// change at any moment (current_cpu<R>() is noexcept: a cpu() that throws
// terminates). Where LTs are preemptive, a waiter that runs on its holder's
// processor only keeps the holder off it, and a parking mutex may park it
// at once (adaptive_mutex does). Read it through reports_cpu_v<R> and
// current_cpu<R>(), which returns -1 when the member is absent.
#pragma once

#include <concepts>
#include <string_view>
#include <type_traits>

namespace fibersync {

template <class R>
concept runtime = requires(typename R::handle h) {
  { R::name } -> std::convertible_to<std::string_view>;
  { R::current() } -> std::same_as<typename R::handle>;
  R::yield();
  R::suspend();
  R::resume(h);
  { R::carrier() } -> std::convertible_to<unsigned>;
} && std::is_trivially_copyable_v<typename R::handle>;

template <class R>
inline constexpr bool idle_carriers_steal_v = [] {
  if constexpr (requires { R::idle_carriers_steal; }) {
    return static_cast<bool>(R::idle_carriers_steal);
  } else {
    return false;
  }
}();

template <class R>
inline constexpr bool busy_carriers_steal_v = [] {
  if constexpr (requires { R::busy_carriers_steal; }) {
    return static_cast<bool>(R::busy_carriers_steal) || idle_carriers_steal_v<R>;
  } else {
    return idle_carriers_steal_v<R>;
  }
}();

template <class R>
inline constexpr bool preemptive_v = [] {
  if constexpr (requires { R::preemptive; }) {
    return static_cast<bool>(R::preemptive);
  } else {
    return false;
  }
}();

template <class R>
inline constexpr bool reports_cpu_v = requires {
  { R::cpu() } -> std::convertible_to<int>;
};

template <class R>
int current_cpu() noexcept {
  if constexpr (reports_cpu_v<R>) {
    return static_cast<int>(R::cpu());
  } else {
    return -1;
  }
}

}  // namespace fibersync
