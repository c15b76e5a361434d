// Built against an installed fibersync through find_package only.
#include <fibersync/fibersync.hpp>
#include <fibersync/runtime/boost_fiber.hpp>

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
  std::printf("consumer: %ld\n", count);
  return count == 40000 ? 0 : 1;
}
