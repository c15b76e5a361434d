// Built against an installed fibersync through find_package only.
#include <fibersync/fibersync.hpp>
#include <fibersync/runtime/boost_fiber.hpp>

#if CONSUMER_WITH_NATIVE
#include <fibersync/runtime/native_executor.hpp>
#endif

#include <boost/fiber/all.hpp>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

int main() {
  fibersync::mcs_mutex<fibersync::os_thread_runtime> os_mutex;
  fibersync::ttas_mutex<fibersync::boost_fiber_runtime> fiber_mutex;
  long count = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        std::lock_guard<decltype(os_mutex)> g(os_mutex);
        ++count;
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<boost::fibers::fiber> fibers;
  for (int f = 0; f < 2; ++f) {
    fibers.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        std::lock_guard<decltype(fiber_mutex)> g(fiber_mutex);
        ++count;
        boost::this_fiber::yield();
      }
    });
  }
  for (auto& f : fibers) f.join();
  long expected = 40000;
#if CONSUMER_WITH_NATIVE
  // 4 uthreads of the native scheduler on 2 carriers, yielding while holding
  // the lock so that the others really wait.
  fibersync::mcs_mutex<fibersync::native_runtime> native_mutex;
  fibersync::executor_options opts;
  opts.carriers = 2;
  fibersync::run_lts_on_native(opts, 4, [&](unsigned) {
    for (int i = 0; i < 5000; ++i) {
      std::lock_guard<decltype(native_mutex)> g(native_mutex);
      const long c = count;
      if (i % 64 == 0) fibersync::native_runtime::yield();
      count = c + 1;
    }
  });
  expected += 20000;
  std::printf("native: yes\n");
#endif
  std::printf("consumer: %ld\n", count);
  return count == expected ? 0 : 1;
}
