// trace.hpp: the --trace recorder (docs/bench.md, "Trace").
//
// While a run records, every carrier (OS thread) appends fixed-size records to
// its own buffer, allocated once at its first record: no lock, no allocation,
// no shared cache line on the hot path. A full buffer drops further records and counts them; it never
// grows and never blocks. After the LTs have finished, collect() takes every
// buffer and write_chrome_trace() turns them into Chrome trace-event JSON.
//
// Records come from three places, all in the harness (the library stays
// untouched):
//   - traced_runtime<Traits>, the runtime the fibersync mutexes are built
//     with: it wraps counting_runtime<R> and records each yield, suspend and
//     resume the mutex asks for, and the moment the LT runs again;
//   - traced_yield<Traits>, the harness' own yield (loop, barrier, work);
//   - the loop itself (driver.hpp): the LT's start and end, the phase
//     changes, and each migration at the very statement that counts it for
//     the `migrations` metric, so arrows and metric cannot disagree.
// A record names the LT by its runtime handle (lt_key), which the LT binds to
// its index with an lt_start record.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fibersync/bench/ticks.hpp"
#include "fibersync/detail/carrier_local.hpp"
#include "fibersync/runtime/counting.hpp"

namespace fibersync::bench::trace {

enum class kind : std::uint8_t {
  lt_start,        // other = LT index; the LT is running
  lt_exit,         // the LT left the loop: ends its run stretch
  running,         // (trace.cpp only) the second half of a switch record: starts a run stretch
  // Switch records: one per switch, written when the LT runs again. `other`
  // and `from_carrier` say when and where it stopped (ends the stretch there,
  // plus an instant); `ticks` and `carrier` when and where it runs again.
  mutex_yield,     // the mutex yields
  mutex_suspend,   // the mutex parks the LT
  harness_yield,   // the harness yields (loop, barrier, work)
  resume,          // the running LT resumes another one (other = its key) (+ instant)
  migration,       // counted migration: from_carrier at other (ticks) -> carrier at ticks
  measuring_begins,
  measuring_ends,
};

struct record {
  std::uint64_t ticks;   // trace clock (now()) when it happened
  std::uint64_t who;     // lt_key of the LT that was running
  std::uint64_t other;   // see kind
  std::uint32_t carrier; // the harness' carrier number (Traits::carrier())
  std::uint32_t from_carrier;
  kind what;
};

// One per OS thread that ever records. Written only by its thread.
struct carrier_buffer {
  explicit carrier_buffer(std::size_t capacity);  // trace.cpp: maps the memory
  ~carrier_buffer();
  carrier_buffer(const carrier_buffer&) = delete;
  carrier_buffer& operator=(const carrier_buffer&) = delete;

  record* records = nullptr;
  std::size_t capacity = 0;
  std::size_t size = 0;
  std::uint64_t dropped = 0;
};

// Default and maximum records per carrier buffer (--trace-buffer).
inline constexpr std::size_t default_buffer_records = std::size_t{1} << 21;
inline constexpr std::size_t max_buffer_records = std::size_t{1} << 25;

namespace detail {
// Set before the carriers start and cleared after they have been joined, so
// the relaxed load on the hot path always sees the value of this run.
inline std::atomic<bool> recording{false};
carrier_buffer& local_buffer();  // trace.cpp: this thread's buffer, made on first use
}  // namespace detail

inline bool enabled() noexcept { return detail::recording.load(std::memory_order_relaxed); }

// The trace clock: the same counter as the latency ticks (ticks.hpp), without
// the serialising fences, which a timeline does not need.
inline std::uint64_t now() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return ticks_begin();
#endif
}

// A runtime handle as a number (handles are small and trivially copyable).
template <class H>
std::uint64_t lt_key(H h) noexcept {
  static_assert(std::is_trivially_copyable_v<H> && sizeof(H) <= sizeof(std::uint64_t));
  std::uint64_t k = 0;
  std::memcpy(&k, &h, sizeof(H));
  return k;
}

// Appends a record stamped `ticks` to this carrier's buffer.
inline void add_at(std::uint64_t ticks, kind what, std::uint64_t who, unsigned carrier, std::uint64_t other = 0,
                   unsigned from_carrier = 0) noexcept {
  carrier_buffer& b = detail::local_buffer();
  if (b.size == b.capacity) {
    ++b.dropped;
    return;
  }
  b.records[b.size++] = record{ticks, who, other, carrier, from_carrier, what};
}

// Appends a record stamped now. The tick is read after the buffer is found,
// so that making a carrier's buffer (its first record) is not inside a span.
inline void add(kind what, std::uint64_t who, unsigned carrier, std::uint64_t other = 0) noexcept {
  carrier_buffer& b = detail::local_buffer();
  if (b.size == b.capacity) {
    ++b.dropped;
    return;
  }
  b.records[b.size++] = record{now(), who, other, carrier, 0, what};
}

// Records a switch (the stretch ends before it, a new one starts after it)
// as one record, written after it: half the buffer traffic of a record on
// each side, and nothing but a tick read and a carrier number before the
// switch, where the time counts against the lock hand-over.
template <class Traits, class Switch>
void around_switch(kind what, Switch&& do_switch) {
  if (!enabled()) {
    do_switch();
    return;
  }
  const std::uint64_t who = lt_key(Traits::runtime::current());
  const unsigned stopped_on = Traits::carrier();
  const std::uint64_t stopped_at = now();
  do_switch();
  add_at(now(), what, who, Traits::carrier(), stopped_at, stopped_on);
}

// The harness' yield (lt_ops::yield and the loop's yields).
template <class Traits>
void traced_yield() {
  around_switch<Traits>(kind::harness_yield, [] { Traits::yield(); });
}

// The runtime every fibersync mutex of the harness is built with:
// counting_runtime<R> (yields/suspends per acquisition) plus trace records.
// Carriers in records are Traits::carrier(), the numbering of the migration
// metric; carrier() itself forwards to R for the mutexes' own use.
template <class Traits>
struct traced_runtime {
  using inner = counting_runtime<typename Traits::runtime>;
  using handle = typename inner::handle;
  static constexpr std::string_view name = inner::name;

  static constexpr wait_policy default_wait_policy() noexcept { return inner::default_wait_policy(); }
  static constexpr bool idle_carriers_steal = inner::idle_carriers_steal;
  static constexpr bool busy_carriers_steal = inner::busy_carriers_steal;
  static constexpr bool preemptive = inner::preemptive;
  static handle current() { return inner::current(); }
  static void yield() { around_switch<Traits>(kind::mutex_yield, [] { inner::yield(); }); }
  static void suspend() { around_switch<Traits>(kind::mutex_suspend, [] { inner::suspend(); }); }
  // Recorded after the wake-up, which is on the lock hand-over's critical path.
  static void resume(handle h) {
    inner::resume(h);
    if (enabled()) add(kind::resume, lt_key(inner::current()), Traits::carrier(), lt_key(h));
  }
  static unsigned carrier() { return inner::carrier(); }
  static int cpu() noexcept
    requires reports_cpu_v<inner>
  {
    return inner::cpu();
  }
};

// Everything recorded by one run, taken after its LTs have finished.
struct recording {
  std::vector<std::unique_ptr<carrier_buffer>> buffers;
  std::uint64_t dropped() const noexcept;
  std::uint64_t records() const noexcept;
};

// Starts recording into buffers of `buffer_records` records each (made on
// each carrier's first record). Call before the carriers start.
void start(std::size_t buffer_records);
// Stops recording and hands over every buffer. Call after the carriers ended.
recording collect();

// What the trace file is about (process name, otherData).
struct trace_info {
  unsigned pid = 1;                // the run's number in the sweep
  std::string process_name;        // "run 3: boost_fiber ttas lts=16 carriers=2 rep=0"
  double ticks_per_ns = 1;         // calibration of the trace clock
  std::size_t buffer_records = 0;  // capacity of each buffer
  nlohmann::json run;              // run fields copied into otherData
};

struct trace_summary {
  std::uint64_t events = 0;      // trace events written
  std::uint64_t migrations = 0;  // flow pairs = counted migrations
  std::uint64_t dropped = 0;     // records lost to full buffers
};

// Writes the Chrome trace-event JSON to path.tmp, then renames it to path.
// Throws std::runtime_error (and leaves no file) when it cannot.
trace_summary write_chrome_trace(const std::string& path, const recording& rec, const trace_info& info);

// The trace file of run `index` (0-based) of a sweep of `runs` runs: `path`
// itself for a single run, else STEM-runNNN.EXT (NNN 1-based, zero-padded).
std::string run_trace_path(const std::string& path, std::size_t index, std::size_t runs);

}  // namespace fibersync::bench::trace
