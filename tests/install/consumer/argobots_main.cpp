// Built against an installed fibersync through find_package only, when that
// installation has the Argobots adapter (fibersync::argobots).
#include <fibersync/fibersync.hpp>
#include <fibersync/runtime/argobots.hpp>
#include <fibersync/runtime/argobots_executor.hpp>

#include <cstdio>
#include <mutex>

int main() {
  fibersync::mcs_mutex<fibersync::argobots_runtime> m;
  long count = 0;
  fibersync::executor_options o;
  o.carriers = 2;
  fibersync::run_lts_on_argobots(o, 4, [&](unsigned) {
    for (int i = 0; i < 5000; ++i) {
      std::lock_guard<decltype(m)> g(m);
      ++count;
      fibersync::argobots_runtime::yield();
    }
  });
  std::printf("argobots consumer: %ld\n", count);
  return count == 20000 ? 0 : 1;
}
