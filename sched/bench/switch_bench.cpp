// switch_bench.cpp: cost of a yield round trip and of a suspend/resume
// hand-over on the native scheduler against Boost.Fiber, one carrier each
// (the situation of a mutex hand-over between two LTs of one carrier).
//
//   sched_switch_bench [iterations=1000000] [repetitions=5]
// Prints the median ns per operation over the repetitions.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <fibersync/runtime/boost_fiber.hpp>
#include <fibersync/runtime/boost_fiber_executor.hpp>
#include <fibersync/runtime/native.hpp>
#include <fibersync/runtime/native_executor.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

template <class R>
void run1(unsigned lts, const fibersync::lt_body& body) {
  fibersync::executor_options o;
  o.carriers = 1;
  if constexpr (std::is_same_v<R, fibersync::native_runtime>) {
    fibersync::run_lts_on_native(o, lts, body);
  } else {
    fibersync::run_lts_on_boost_fibers(o, lts, body);
  }
}

// Two LTs yield to each other: ns per yield (one switch away and back in).
template <class R>
double yield_ns(unsigned iters) {
  clock_type::time_point t0, t1;
  run1<R>(2, [&](unsigned i) {
    if (i == 0) t0 = clock_type::now();
    for (unsigned k = 0; k < iters; ++k) R::yield();
    if (i == 1) t1 = clock_type::now();
  });
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * iters);
}

// Ping-pong through suspend/resume: ns per hand-over (resume + park + switch).
template <class R>
double handover_ns(unsigned iters) {
  std::atomic<typename R::handle> h[2] = {};
  clock_type::time_point t0, t1;
  run1<R>(2, [&](unsigned i) {
    h[i] = R::current();
    while (h[0].load() == nullptr || h[1].load() == nullptr) R::yield();
    if (i == 0) {
      t0 = clock_type::now();
      for (unsigned k = 0; k < iters; ++k) {
        R::resume(h[1].load());
        R::suspend();
      }
      t1 = clock_type::now();
    } else {
      for (unsigned k = 0; k < iters; ++k) {
        R::suspend();
        R::resume(h[0].load());
      }
    }
  });
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * iters);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
double med(unsigned reps, F f) {
  std::vector<double> v;
  for (unsigned r = 0; r < reps; ++r) v.push_back(f());
  return median(v);
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned iters = argc > 1 ? unsigned(std::atoi(argv[1])) : 1000000u;
  const unsigned reps = argc > 2 ? unsigned(std::atoi(argv[2])) : 5u;
  using fibersync::boost_fiber_runtime;
  using fibersync::native_runtime;
  std::printf("operation,runtime,ns_per_op_median,iterations,repetitions\n");
  std::printf("yield,native,%.1f,%u,%u\n", med(reps, [&] { return yield_ns<native_runtime>(iters); }), iters, reps);
  std::printf("yield,boost_fiber,%.1f,%u,%u\n", med(reps, [&] { return yield_ns<boost_fiber_runtime>(iters); }), iters, reps);
  std::printf("suspend_resume_handover,native,%.1f,%u,%u\n", med(reps, [&] { return handover_ns<native_runtime>(iters); }), iters, reps);
  std::printf("suspend_resume_handover,boost_fiber,%.1f,%u,%u\n",
              med(reps, [&] { return handover_ns<boost_fiber_runtime>(iters); }), iters, reps);
  return 0;
}
