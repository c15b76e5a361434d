// work.hpp: the work kinds of the critical section and the parallel part.
//
//   none                 nothing
//   pause(n)             n x cpu_relax() (x86 pause)
//   spawn(k, n)          spawn k LTs doing pause(n) each, join them
//   yield_steps(s, n)    s x (pause(n); yield())
//   consume_cpu(t)       t iterations of a dependent integer chain (JMH Blackhole.consumeCPU-like)
//   poisson(m)           an exponentially distributed number of work units with
//                        mean m (Preshing's "poissonInterval"); a unit is one
//                        std::mt19937 draw
//   memory(b)            touch b bytes of shared data (one add per 64-byte line)
//
// A count may carry a time suffix, e.g. consume_cpu(3us) or pause(500ns):
// it is converted with the calibration of this machine before the runs start.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fibersync::bench {

enum class work_kind { none, pause, spawn, yield_steps, consume_cpu, poisson, memory };

struct work_spec {
  work_kind kind = work_kind::none;
  std::uint64_t a = 0;   // n, k, s, tokens, mean units, bytes
  std::uint64_t b = 0;   // n for spawn and yield_steps
  double a_ns = -1;      // a given as a time: resolved by resolve()
  double b_ns = -1;
};

// Throws config_error on anything malformed.
work_spec parse_work(std::string_view text);
std::string to_string(const work_spec& w);

// Nanoseconds per unit of each work kind on this machine.
struct calibration {
  double pause_ns = 0;        // one cpu_relax()
  double consume_cpu_ns = 0;  // one token
  double poisson_unit_ns = 0; // one unit
  double memory_byte_ns = 0;  // per byte of memory(b)
  double ticks_per_ns = 0;    // CPU tick counter frequency
  const char* tick_source = "";
  nlohmann::json to_json() const;
};
calibration calibrate();

// Turns time-suffixed counts into units (n for pause etc.).
void resolve(work_spec& w, const calibration& cal);

// Estimated cost of one execution: cpu_ns of work, and wall_ns when spread
// over `carriers` (spawn runs its children in parallel).
struct work_cost {
  double cpu_ns = 0;
  double wall_ns = 0;
};
work_cost estimate(const work_spec& w, const calibration& cal, unsigned carriers);

// Runtime hooks that the work kinds need.
struct lt_ops {
  void (*yield)() = nullptr;
  void (*spawn_join)(unsigned k, std::uint64_t pauses) = nullptr;
  unsigned (*carrier)() = nullptr;
};

void pause_n(std::uint64_t n) noexcept;
std::uint64_t consume_cpu(std::uint64_t tokens) noexcept;

// Per-LT executor of one work_spec (owns the LT's random engine).
class work_runner {
 public:
  work_runner(const work_spec& w, const lt_ops& ops, unsigned char* shared_memory, std::uint64_t seed)
      : w_(w), ops_(ops), memory_(shared_memory), engine_(static_cast<std::uint32_t>(seed)) {}
  void run();

 private:
  work_spec w_;
  lt_ops ops_;
  unsigned char* memory_;
  std::mt19937 engine_;
  std::uint64_t sink_ = 0;
};

}  // namespace fibersync::bench
