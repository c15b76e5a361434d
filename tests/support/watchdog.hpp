// watchdog.hpp: fail a test that hangs (deadlock, lost wake-up) with a clear
// message instead of letting ctest's timeout kill it silently.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace fibersync::test {

class watchdog {
 public:
  watchdog(const char* what, std::chrono::seconds limit) : what_(what) {
    thread_ = std::thread([this, limit] {
      std::unique_lock<std::mutex> lk(m_);
      if (!cv_.wait_for(lk, limit, [this] { return done_; })) {
        std::fprintf(stderr, "WATCHDOG: '%s' did not finish within %llds: deadlock or lost wake-up\n", what_,
                     static_cast<long long>(limit.count()));
        std::fflush(stderr);
        std::_Exit(3);
      }
    });
  }
  ~watchdog() {
    {
      std::lock_guard<std::mutex> g(m_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

 private:
  const char* what_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// Scale factor for the length of stress tests: sanitizer builds run slower,
// and FIBERSYNC_TEST_SCALE lets a developer run longer soaks.
inline double stress_scale() {
  if (const char* s = std::getenv("FIBERSYNC_TEST_SCALE")) return std::atof(s);
  return 1.0;
}

}  // namespace fibersync::test
