// work.cpp: work kinds, their parser, and their calibration.
#include "fibersync/bench/work.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "fibersync/bench/scenario.hpp"
#include "fibersync/bench/ticks.hpp"
#include "fibersync/wait/cpu_relax.hpp"

namespace fibersync::bench {

namespace {

struct kind_info {
  const char* name;
  work_kind kind;
  unsigned args;
};
constexpr kind_info kinds[] = {
    {"none", work_kind::none, 0},          {"pause", work_kind::pause, 1},
    {"spawn", work_kind::spawn, 2},        {"yield_steps", work_kind::yield_steps, 2},
    {"consume_cpu", work_kind::consume_cpu, 1}, {"poisson", work_kind::poisson, 1},
    {"memory", work_kind::memory, 1},
};

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// "1000" -> units; "3us", "500ns", "1.5ms" -> nanoseconds.
void parse_count(const std::string& text, std::string_view whole, std::uint64_t& units, double& ns) {
  std::string t = trim(text);
  double scale = 0;
  static constexpr std::pair<const char*, double> suffixes[] = {{"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}};
  for (auto [suffix, f] : suffixes) {
    if (t.size() > 2 && t.ends_with(suffix)) {
      scale = f;
      t.resize(t.size() - 2);
      break;
    }
  }
  if (scale > 0) {
    double v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc{} || p != t.data() + t.size() || !(v >= 0))
      throw config_error("bad work count '" + text + "' in '" + std::string(whole) + "'");
    ns = v * scale;
    return;
  }
  if (t.empty() || t[0] == '-')
    throw config_error("work count must be a non-negative integer: '" + std::string(whole) + "'");
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), units);
  if (ec != std::errc{} || p != t.data() + t.size())
    throw config_error("bad work count '" + text + "' in '" + std::string(whole) + "'");
}

}  // namespace

work_spec parse_work(std::string_view text) {
  const std::string s = trim(text);
  const auto open = s.find('(');
  const std::string name = trim(s.substr(0, open));
  std::vector<std::string> args;
  if (open != std::string::npos) {
    if (s.back() != ')') throw config_error("malformed work '" + s + "': expected name(args)");
    const std::string inner = s.substr(open + 1, s.size() - open - 2);
    std::size_t i = 0;
    while (true) {
      const auto comma = inner.find(',', i);
      args.push_back(inner.substr(i, comma == std::string::npos ? std::string::npos : comma - i));
      if (comma == std::string::npos) break;
      i = comma + 1;
    }
    if (args.size() == 1 && trim(args[0]).empty()) args.clear();
  }
  for (const auto& k : kinds) {
    if (name != k.name) continue;
    if (args.size() != k.args)
      throw config_error("work '" + s + "': " + k.name + " takes " + std::to_string(k.args) + " argument(s)");
    work_spec w;
    w.kind = k.kind;
    if (k.args >= 1) parse_count(args[0], s, w.a, w.a_ns);
    if (k.args >= 2) parse_count(args[1], s, w.b, w.b_ns);
    if ((w.kind == work_kind::spawn || w.kind == work_kind::yield_steps) && w.a_ns >= 0)
      throw config_error("work '" + s + "': the first argument is a count, not a time");
    return w;
  }
  throw config_error("unknown work kind '" + name +
                     "' (known: none, pause(n), spawn(k,n), yield_steps(s,n), consume_cpu(t), poisson(m), memory(b))");
}

std::string to_string(const work_spec& w) {
  auto num = [](std::uint64_t u, double ns) {
    if (ns >= 0) return std::to_string(static_cast<long long>(std::llround(ns))) + "ns";
    return std::to_string(u);
  };
  switch (w.kind) {
    case work_kind::none: return "none";
    case work_kind::pause: return "pause(" + num(w.a, w.a_ns) + ")";
    case work_kind::spawn: return "spawn(" + num(w.a, -1) + "," + num(w.b, w.b_ns) + ")";
    case work_kind::yield_steps: return "yield_steps(" + num(w.a, -1) + "," + num(w.b, w.b_ns) + ")";
    case work_kind::consume_cpu: return "consume_cpu(" + num(w.a, w.a_ns) + ")";
    case work_kind::poisson: return "poisson(" + num(w.a, w.a_ns) + ")";
    case work_kind::memory: return "memory(" + num(w.a, w.a_ns) + ")";
  }
  return "none";
}

void pause_n(std::uint64_t n) noexcept {
  for (std::uint64_t i = 0; i < n; ++i) (fibersync::cpu_relax)();
}

std::uint64_t consume_cpu(std::uint64_t tokens) noexcept {
  // A dependent multiply-add chain the compiler cannot fold (JMH's Blackhole
  // consumeCPU uses an xorshift chain the same way).
  std::uint64_t x = tokens | 1;
  for (std::uint64_t i = 0; i < tokens; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    asm volatile("" : "+r"(x));
  }
  return x;
}

namespace {

std::uint64_t poisson_units(std::mt19937& e, std::uint64_t mean) {
  if (mean == 0) return 0;
  // Preshing's poissonInterval: an exponential interval with this mean, rounded.
  std::exponential_distribution<double> d(1.0 / static_cast<double>(mean));
  return static_cast<std::uint64_t>(d(e) + 0.5);
}

std::uint64_t run_units(std::mt19937& e, std::uint64_t units) {
  std::uint64_t s = 0;
  for (std::uint64_t i = 0; i < units; ++i) s += e();
  return s;
}

void touch(unsigned char* mem, std::uint64_t bytes) {
  for (std::uint64_t i = 0; i < bytes; i += 64) {
    volatile unsigned char* p = mem + i;
    *p = static_cast<unsigned char>(*p + 1);
  }
}

}  // namespace

void work_runner::run() {
  switch (w_.kind) {
    case work_kind::none: return;
    case work_kind::pause: pause_n(w_.a); return;
    case work_kind::spawn: ops_.spawn_join(static_cast<unsigned>(w_.a), w_.b); return;
    case work_kind::yield_steps:
      for (std::uint64_t i = 0; i < w_.a; ++i) {
        pause_n(w_.b);
        ops_.yield();
      }
      return;
    case work_kind::consume_cpu: sink_ += consume_cpu(w_.a); asm volatile("" ::"r"(sink_)); return;
    case work_kind::poisson: sink_ += run_units(engine_, poisson_units(engine_, w_.a)); asm volatile("" ::"r"(sink_)); return;
    case work_kind::memory: touch(memory_, w_.a); return;
  }
}

nlohmann::json calibration::to_json() const {
  return {{"pause_ns", pause_ns},
          {"consume_cpu_token_ns", consume_cpu_ns},
          {"poisson_unit_ns", poisson_unit_ns},
          {"memory_byte_ns", memory_byte_ns},
          {"ticks_per_ns", ticks_per_ns},
          {"tick_source", tick_source},
          {"method", "median of 5 timed batches per kind, CLOCK_MONOTONIC_RAW; ticks over 20 ms"}};
}

namespace {
template <class F>
double ns_per_unit(std::uint64_t units, F f) {
  std::vector<double> v;
  for (int r = 0; r < 5; ++r) {
    const double t0 = monotonic_raw_ns();
    f(units);
    v.push_back((monotonic_raw_ns() - t0) / static_cast<double>(units));
  }
  std::sort(v.begin(), v.end());
  return v[2];
}
}  // namespace

calibration calibrate() {
  calibration c;
  c.pause_ns = ns_per_unit(100000, [](std::uint64_t n) { pause_n(n); });
  c.consume_cpu_ns = ns_per_unit(1000000, [](std::uint64_t n) { asm volatile("" ::"r"(consume_cpu(n))); });
  std::mt19937 e(1);
  c.poisson_unit_ns = ns_per_unit(1000000, [&](std::uint64_t n) { asm volatile("" ::"r"(run_units(e, n))); });
  std::vector<unsigned char> mem(1 << 20);
  c.memory_byte_ns = ns_per_unit(1 << 20, [&](std::uint64_t n) { touch(mem.data(), n); });
  const double w0 = monotonic_raw_ns();
  const std::uint64_t k0 = ticks_begin();
  while (monotonic_raw_ns() - w0 < 20e6) {
  }
  const std::uint64_t k1 = ticks_end();
  const double w1 = monotonic_raw_ns();
  c.ticks_per_ns = static_cast<double>(k1 - k0) / (w1 - w0);
#if defined(__x86_64__) || defined(__i386__)
  c.tick_source = "rdtsc";
#elif defined(__aarch64__)
  c.tick_source = "cntvct_el0";
#else
  c.tick_source = "clock_gettime";
#endif
  return c;
}

namespace {
double unit_ns(work_kind k, const calibration& cal) {
  switch (k) {
    case work_kind::pause:
    case work_kind::spawn:
    case work_kind::yield_steps: return cal.pause_ns;
    case work_kind::consume_cpu: return cal.consume_cpu_ns;
    case work_kind::poisson: return cal.poisson_unit_ns;
    case work_kind::memory: return cal.memory_byte_ns;
    case work_kind::none: return 0;
  }
  return 0;
}
}  // namespace

void resolve(work_spec& w, const calibration& cal) {
  const double u = unit_ns(w.kind, cal);
  if (w.a_ns >= 0) {
    w.a = u > 0 ? static_cast<std::uint64_t>(std::llround(w.a_ns / u)) : 0;
    w.a_ns = -1;
  }
  if (w.b_ns >= 0) {
    w.b = u > 0 ? static_cast<std::uint64_t>(std::llround(w.b_ns / u)) : 0;
    w.b_ns = -1;
  }
}

work_cost estimate(const work_spec& w, const calibration& cal, unsigned carriers) {
  const double u = unit_ns(w.kind, cal);
  const double a = static_cast<double>(w.a), b = static_cast<double>(w.b);
  switch (w.kind) {
    case work_kind::none: return {0, 0};
    case work_kind::spawn: {
      // k children of b pauses; the spawning LT waits in join, so the k
      // children can use every carrier.
      const double cpu = a * b * u;
      return {cpu, cpu / std::max(1u, std::min<unsigned>(carriers, static_cast<unsigned>(std::max(1.0, a))))};
    }
    case work_kind::yield_steps: return {a * b * u, a * b * u};
    default: return {a * u, a * u};
  }
}

}  // namespace fibersync::bench
