// round_trip.hpp: how long one cache line takes to go from one CPU to another
// and back, now (the fibersync-line-probe tool, and the bench before each run).
//
// A lock's hand-over moves its lines between cores, so where this time
// changes, every lock's throughput changes with it, and not by the same
// factor for each: on our EPYC VM it moves between ~57 and ~413 ns for tens
// of seconds at a time (docs/ADAPTIVE.md, finding 34).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace fibersync::bench {

// The CPUs this process may run on (its affinity mask), in order.
std::vector<int> allowed_cpus();

// One sample: `round_trips` round trips of one cache-line-aligned counter
// between a thread pinned to cpu_a and one pinned to cpu_b (each waits with
// a pause for the other's increment); the mean round trip in ns, or nullopt
// if a thread could not be pinned. The clock starts once both run pinned.
// A positive `budget` ends the sample early, with the mean over the round
// trips done by then: on a loaded machine a pinned thread may wait a
// scheduler slice for the other to run, and the sample would otherwise take
// round_trips slices. Throws std::system_error if a thread cannot be started.
std::optional<double> line_round_trip_ns(int cpu_a, int cpu_b, std::uint64_t round_trips,
                                         std::chrono::nanoseconds budget = std::chrono::nanoseconds{0});

// The median of `samples` samples between the first two CPUs this process
// may run on; nullopt with fewer than two, or where a thread cannot be
// pinned or started. What the bench records before each run.
std::optional<double> median_line_round_trip_ns(unsigned samples, std::uint64_t round_trips,
                                                std::chrono::nanoseconds budget = std::chrono::nanoseconds{0});

}  // namespace fibersync::bench
