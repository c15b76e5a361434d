// fibersync-line-probe: how long one cache line takes to go from one CPU to
// another and back, now.
//
// Two threads, pinned to two CPUs, pass one cache-line-aligned counter back
// and forth (each waits with a pause for the other's increment). The time of
// a batch over its round trips is one sample; the median of the samples is
// printed, in ns (the measurement: fibersync/bench/round_trip.hpp). A lock's
// hand-over moves its lines between cores, so where this number changes,
// every lock's throughput changes with it, and not by the same factor for
// each (docs/ADAPTIVE.md, finding 34: on our EPYC VM it moves between ~57
// and ~413 ns for tens of seconds at a time).
// scripts/phase-ab.sh runs it between benchmark runs to tell the phases apart;
// fibersync-bench takes a shorter sample before each of its runs
// (line_round_trip_ns in its result files).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

#include "fibersync/bench/round_trip.hpp"

using fibersync::bench::allowed_cpus;
using fibersync::bench::line_round_trip_ns;

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
      const auto rt = line_round_trip_ns(cpus[0], cpus[1], round_trips);
      if (!rt) {
        std::fprintf(stderr, "fibersync-line-probe: error: cannot pin a thread to CPU %d or %d\n", cpus[0], cpus[1]);
        return 2;
      }
      ns.push_back(*rt);
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
