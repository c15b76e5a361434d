// 01_lock_guard_fibers.cpp: a fibersync mutex used from Boost.Fiber fibers.
//
// 64 fibers on 2 carrier threads (work_stealing) increment a plain counter
// under fibersync::mcs_mutex, yielding inside the critical section. Because
// the mutex waits through the runtime (spin -> yield -> suspend), a waiter
// never blocks the carrier that the holder needs; std::mutex would block the
// OS thread, and a bare spin loop would deadlock a single carrier.
#include <fibersync/fibersync.hpp>
#include <fibersync/runtime/boost_fiber.hpp>
#include <fibersync/runtime/boost_fiber_executor.hpp>

#include <cstdio>
#include <mutex>

int main() {
  using runtime = fibersync::boost_fiber_runtime;
  fibersync::mcs_mutex<runtime> mutex;  // or ttas_mutex, ticket_mutex, clh_mutex, ...
  long counter = 0;                     // protected by `mutex` only

  fibersync::executor_options carriers;
  carriers.carriers = 2;
  fibersync::run_lts_on_boost_fibers(carriers, 64, [&](unsigned) {
    for (int i = 0; i < 1000; ++i) {
      std::lock_guard<decltype(mutex)> guard(mutex);  // any Lockable helper works
      const long seen = counter;
      boost::this_fiber::yield();  // the holder may yield: waiters keep the carrier usable
      counter = seen + 1;
    }
  });

  std::printf("counter = %ld (expected %d)\n", counter, 64 * 1000);
  return counter == 64 * 1000 ? 0 : 1;
}
