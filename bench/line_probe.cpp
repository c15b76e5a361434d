// fibersync-line-probe: how long one cache line takes to go from one CPU to
// another and back, now.
//
// Two threads, pinned to two CPUs, pass one cache-line-aligned counter back
// and forth (each waits with a pause for the other's increment). The time of
// a batch over its round trips is one sample; the median of the samples is
// printed, in ns. A lock's hand-over moves its lines between cores, so where
// this number changes, every lock's throughput changes with it, and not by
// the same factor for each (docs/ADAPTIVE.md, finding 34: on our EPYC VM it
// moves between ~57 and ~413 ns for tens of seconds at a time).
// scripts/phase-ab.sh runs it between benchmark runs to tell the phases apart.
#include <pthread.h>
#include <sched.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "fibersync/detail/cache_line.hpp"
#include "fibersync/wait/cpu_relax.hpp"

namespace {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

struct alignas(fibersync::detail::cache_line_size) shared_line {
  std::atomic<std::uint64_t> turn{0};
};

// One sample: `round_trips` round trips of the line between cpu_a and cpu_b;
// the mean round trip in ns, or a negative value if a thread could not be
// pinned. The clock starts only once both threads run pinned: B is created
// with the caller's affinity (cpu_a after the first sample) and pins itself
// first.
double sample(int cpu_a, int cpu_b, std::uint64_t round_trips) {
  shared_line line;
  // B's answer: 1 pinned, 2 could not pin. A's go: 1 start, 2 give up.
  std::atomic<int> b_pinned{0};
  std::atomic<int> go{0};
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
      while (line.turn.load(std::memory_order_acquire) != 2 * i + 1) (fibersync::cpu_relax)();
      line.turn.store(2 * i + 2, std::memory_order_release);
    }
  });
  const bool pinned_a = pin_to(cpu_a);
  // Yield, not spin: until B has pinned itself it may share A's CPU.
  while (b_pinned.load() == 0) std::this_thread::yield();
  if (!pinned_a || b_pinned.load() != 1) {
    go.store(2);
    b.join();
    return -1;
  }
  go.store(1);
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < round_trips; ++i) {
    line.turn.store(2 * i + 1, std::memory_order_release);
    while (line.turn.load(std::memory_order_acquire) != 2 * i + 2) (fibersync::cpu_relax)();
  }
  const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
  b.join();
  return took.count() / static_cast<double>(round_trips);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fibersync-line-probe: the round trip of one cache line between two CPUs, in ns (median of samples)"};
  std::vector<int> cpus;
  unsigned samples = 3;
  std::uint64_t round_trips = 100'000;
  bool each = false;
  app.add_option("--cpus", cpus, "the two CPUs (default: the first two this process may run on)")
      ->delimiter(',')
      ->expected(2);
  app.add_option("--samples", samples, "samples (default 3)")->check(CLI::Range(1u, 1000u));
  app.add_option("--round-trips", round_trips, "round trips per sample (default 100000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100'000'000}));
  app.add_flag("--each", each, "print every sample, one per line, before the median");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "fibersync-line-probe: error: %s\n", e.what());
    return 2;
  }
  const std::vector<int> allowed = allowed_cpus();
  if (cpus.empty()) {
    if (allowed.size() < 2) {
      std::fprintf(stderr, "fibersync-line-probe: error: needs two CPUs, this process may run on %zu\n",
                   allowed.size());
      return 2;
    }
    cpus = {allowed[0], allowed[1]};
  }
  for (int cpu : cpus) {
    if (std::find(allowed.begin(), allowed.end(), cpu) == allowed.end()) {
      std::fprintf(stderr, "fibersync-line-probe: error: CPU %d is not one this process may run on\n", cpu);
      return 2;
    }
  }
  if (cpus[0] == cpus[1]) {
    std::fprintf(stderr, "fibersync-line-probe: error: --cpus names CPU %d twice\n", cpus[0]);
    return 2;
  }
  std::vector<double> ns;
  try {
    for (unsigned i = 0; i < samples; ++i) {
      const double rt = sample(cpus[0], cpus[1], round_trips);
      if (rt < 0) {
        std::fprintf(stderr, "fibersync-line-probe: error: cannot pin a thread to CPU %d or %d\n", cpus[0], cpus[1]);
        return 2;
      }
      ns.push_back(rt);
    }
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "fibersync-line-probe: error: cannot start a thread: %s\n", e.what());
    return 2;
  }
  // Printed only once every sample succeeded.
  if (each)
    for (double rt : ns) std::printf("%.1f\n", rt);
  std::sort(ns.begin(), ns.end());
  const std::size_t n = ns.size();
  std::printf("%.1f\n", n % 2 ? ns[n / 2] : (ns[n / 2 - 1] + ns[n / 2]) / 2);
  return 0;
}
