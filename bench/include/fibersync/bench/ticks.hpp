// ticks.hpp: CPU tick counter reads for acquire latency.
//
// x86: `lfence; rdtsc` at the start of the measured interval and
// `rdtscp; lfence` at the end (Intel's white paper "How to Benchmark Code
// Execution Times", 2010). Arm64: cntvct_el0 after an isb. Counters may differ
// between cores: callers flag samples whose LT changed carrier.
#pragma once

#include <cstdint>
#include <ctime>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace fibersync::bench {

inline std::uint64_t ticks_begin() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_lfence();
  return __rdtsc();
#elif defined(__aarch64__)
  std::uint64_t v;
  asm volatile("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
  return v;
#else
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000u + std::uint64_t(ts.tv_nsec);
#endif
}

inline std::uint64_t ticks_end() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  unsigned aux;
  const std::uint64_t v = __rdtscp(&aux);
  _mm_lfence();
  return v;
#else
  return ticks_begin();
#endif
}

inline double monotonic_raw_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

inline double monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

inline double process_cpu_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

}  // namespace fibersync::bench
