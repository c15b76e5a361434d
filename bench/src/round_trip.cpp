// round_trip.cpp: the cache-line round trip between two CPUs (round_trip.hpp).
#include "fibersync/bench/round_trip.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <system_error>
#include <thread>

#include "fibersync/detail/cache_line.hpp"
#include "fibersync/wait/cpu_relax.hpp"

namespace fibersync::bench {

namespace {

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

struct alignas(fibersync::detail::cache_line_size) shared_line {
  std::atomic<std::uint64_t> turn{0};
};

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

std::optional<double> line_round_trip_ns(int cpu_a, int cpu_b, std::uint64_t round_trips,
                                         std::chrono::nanoseconds budget) {
  shared_line line;
  // B's answer: 1 pinned, 2 could not pin. A's go: 1 start, 2 give up.
  std::atomic<int> b_pinned{0};
  std::atomic<int> go{0};
  std::atomic<bool> out_of_time{false};
  // The calling thread pins itself to cpu_a for the sample and gets its own
  // affinity back afterwards (the bench's parent forks its runs from it).
  cpu_set_t own;
  CPU_ZERO(&own);
  const bool had_own = pthread_getaffinity_np(pthread_self(), sizeof own, &own) == 0;
  // B is created with the caller's affinity and pins itself first.
  std::thread b([&] {
    if (!pin_to(cpu_b)) {
      b_pinned.store(2);
      return;
    }
    b_pinned.store(1);
    while (go.load() == 0) std::this_thread::yield();
    if (go.load() != 1) return;
    // Odd values are A's, even ones B's; B answers each of A's.
    for (std::uint64_t i = 0; i < round_trips; ++i) {
      while (line.turn.load(std::memory_order_acquire) != 2 * i + 1) {
        if (out_of_time.load(std::memory_order_relaxed)) return;
        (fibersync::cpu_relax)();
      }
      line.turn.store(2 * i + 2, std::memory_order_release);
    }
  });
  const bool pinned_a = pin_to(cpu_a);
  // Yield, not spin: until B has pinned itself it may share A's CPU.
  while (b_pinned.load() == 0) std::this_thread::yield();
  std::optional<double> result;
  if (pinned_a && b_pinned.load() == 1) {
    go.store(1);
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = budget.count() > 0 ? start + budget : std::chrono::steady_clock::time_point::max();
    // Round trips completed; the clock is read once every 256 of them, and
    // while waiting once every 1024 pauses (a descheduled B).
    std::uint64_t done = 0;
    for (std::uint32_t waited = 0; done < round_trips; ++done) {
      if (done % 256 == 0 && std::chrono::steady_clock::now() >= deadline) break;
      line.turn.store(2 * done + 1, std::memory_order_release);
      while (line.turn.load(std::memory_order_acquire) != 2 * done + 2) {
        if (++waited % 1024 == 0 && std::chrono::steady_clock::now() >= deadline) break;
        (fibersync::cpu_relax)();
      }
      if (line.turn.load(std::memory_order_acquire) != 2 * done + 2) break;  // out of time, waiting
    }
    out_of_time.store(true, std::memory_order_relaxed);
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    // Out of time before the first came back: the round trip is at least that long.
    result = took.count() / static_cast<double>(std::max<std::uint64_t>(done, 1));
  } else {
    go.store(2);
  }
  b.join();
  if (had_own) pthread_setaffinity_np(pthread_self(), sizeof own, &own);
  return result;
}

std::optional<double> median_line_round_trip_ns(unsigned samples, std::uint64_t round_trips,
                                                std::chrono::nanoseconds budget) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2 || samples == 0) return std::nullopt;
  std::vector<double> ns;
  try {
    for (unsigned i = 0; i < samples; ++i) {
      const auto rt = line_round_trip_ns(cpus[0], cpus[1], round_trips, budget);
      if (!rt) return std::nullopt;
      ns.push_back(*rt);
    }
  } catch (const std::system_error&) {
    return std::nullopt;
  }
  std::sort(ns.begin(), ns.end());
  const std::size_t n = ns.size();
  return n % 2 ? ns[n / 2] : (ns[n / 2 - 1] + ns[n / 2]) / 2;
}

}  // namespace fibersync::bench
