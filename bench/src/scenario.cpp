// scenario.cpp: scenario loading, overrides, validation and sweep expansion.
#include "fibersync/bench/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "fibersync/bench/placement.hpp"
#include "fibersync/bench/registry.hpp"

#ifndef FIBERSYNC_BENCH_PRESETS_DIR
#define FIBERSYNC_BENCH_PRESETS_DIR "presets"
#endif

namespace fibersync::bench {

using nlohmann::json;

std::string presets_dir() {
  if (const char* env = std::getenv("FIBERSYNC_BENCH_PRESETS")) return env;
  if (std::filesystem::is_directory(FIBERSYNC_BENCH_PRESETS_DIR)) return FIBERSYNC_BENCH_PRESETS_DIR;
  return "presets";
}

json load_scenario_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw config_error("cannot open scenario file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  json j;
  try {
    j = json::parse(ss.str());
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    throw config_error("malformed JSON in " + path + ": " + what);
  }
  if (!j.is_object()) throw config_error("scenario " + path + " must be a JSON object");
  return j;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(presets_dir(), ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

json load_preset(const std::string& name) {
  const auto path = std::filesystem::path(presets_dir()) / (name + ".json");
  if (name.empty() || name.find('/') != std::string::npos || !std::filesystem::exists(path)) {
    std::string known;
    for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw config_error("unknown preset '" + name + "' (known: " + known + ")");
  }
  json j = load_scenario_file(path.string());
  if (!j.contains("name")) j["name"] = name;
  return j;
}

json parse_value(std::string_view text) {
  const std::string t(text);
  try {
    return json::parse(t);
  } catch (const json::parse_error&) {
  }
  if (t.find(',') != std::string::npos) {
    json arr = json::array();
    std::size_t i = 0;
    // Split on commas outside parentheses: "spawn(12,1000),pause(5)".
    int depth = 0;
    for (std::size_t j = 0; j <= t.size(); ++j) {
      if (j < t.size() && t[j] == '(') ++depth;
      if (j < t.size() && t[j] == ')') --depth;
      if (j == t.size() || (t[j] == ',' && depth == 0)) {
        const std::string item = t.substr(i, j - i);
        try {
          arr.push_back(json::parse(item));
        } catch (const json::parse_error&) {
          arr.push_back(item);
        }
        i = j + 1;
      }
    }
    if (arr.size() == 1) return arr[0];
    return arr;
  }
  return t;
}

void apply_override(json& scenario, std::string_view assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0)
    throw config_error("--set expects key=value, got '" + std::string(assignment) + "'");
  scenario[std::string(assignment.substr(0, eq))] = parse_value(assignment.substr(eq + 1));
}

namespace {

const std::set<std::string> known_keys = {
    "name", "description", "paper", "comment", "workload", "runtime", "mutex", "lts", "carriers", "reps",
    "duration_ms", "warmup_fraction", "critical", "parallel", "yield_after_unlock", "yield_inside", "hold_fraction",
    "lock_rate_per_ms", "latency", "idle_suspend", "abt_pools", "text_lines", "text_shards", "text_vocabulary", "seed",
    "max_backoff", "yield_every", "suspend_after", "topology", "pinning", "event_arch", "distribution", "matrix_n",
    "gauss_tiles"};

// Fields of the gauss workload only.
const std::vector<std::string> gauss_keys = {"event_arch", "distribution", "matrix_n", "gauss_tiles"};

// Sweep order, outermost first; where repetitions go: expand().
const std::vector<std::string> sweep_order = {
    "runtime",       "carriers",    "topology",      "pinning",          "workload",    "critical",
    "parallel",      "hold_fraction", "lock_rate_per_ms", "text_shards", "max_backoff", "yield_every",
    "suspend_after", "duration_ms", "matrix_n",      "distribution",     "lts",         "mutex",
    "event_arch"};

std::vector<json> as_list(const json& v) {
  if (v.is_array()) return std::vector<json>(v.begin(), v.end());
  return {v};
}

std::uint64_t positive_int(const json& v, const std::string& key, bool allow_zero = false) {
  if (!v.is_number_integer() && !(v.is_number_float() && v.get<double>() == std::floor(v.get<double>())))
    throw config_error(key + " must be a positive integer, got " + v.dump());
  const double d = v.get<double>();
  if (d < (allow_zero ? 0 : 1) || d > 1e9)
    throw config_error(key + " must be a " + (allow_zero ? "non-negative" : "positive") + " integer, got " + v.dump());
  return static_cast<std::uint64_t>(d);
}

double number(const json& v, const std::string& key, double lo, bool lo_open) {
  if (!v.is_number()) throw config_error(key + " must be a number, got " + v.dump());
  const double d = v.get<double>();
  if (lo_open ? !(d > lo) : !(d >= lo))
    throw config_error(key + " must be " + (lo_open ? "> " : ">= ") + std::to_string(lo) + ", got " + v.dump());
  return d;
}

bool boolean(const json& v, const std::string& key) {
  if (!v.is_boolean()) throw config_error(key + " must be true or false, got " + v.dump());
  return v.get<bool>();
}

std::string string(const json& v, const std::string& key) {
  if (!v.is_string()) throw config_error(key + " must be a string, got " + v.dump());
  return v.get<std::string>();
}

}  // namespace

std::vector<run_config> expand(const json& scenario, const registry& reg, const expand_options& opt) {
  if (!scenario.is_object()) throw config_error("scenario must be a JSON object");
  for (auto& [k, v] : scenario.items())
    if (!known_keys.count(k)) throw config_error("unknown scenario field '" + k + "' (see docs/bench.md)");

  json base = {{"workload", "loop"},       {"runtime", "os_threads"}, {"mutex", "all"},
               {"lts", 2},                 {"carriers", 0},           {"reps", 1},
               {"duration_ms", 200},       {"warmup_fraction", 1.0 / 3}, {"critical", "pause(100)"},
               {"parallel", "none"},       {"yield_after_unlock", true}, {"yield_inside", false},
               {"hold_fraction", nullptr}, {"lock_rate_per_ms", nullptr}, {"latency", true},
               {"idle_suspend", true},     {"abt_pools", "per_stream"}, {"text_lines", 100000},    {"text_shards", 16},
               {"text_vocabulary", 5000},  {"seed", 42},              {"name", "scenario"},
               {"max_backoff", nullptr},   {"yield_every", nullptr},  {"suspend_after", nullptr},
               {"topology", "machine"},    {"pinning", "none"},       {"event_arch", "A2"},
               {"distribution", "block"},  {"matrix_n", 512},         {"gauss_tiles", 0}};
  for (auto& [k, v] : scenario.items()) base[k] = v;
  for (const char* k : {"name", "description", "paper", "comment", "reps", "warmup_fraction", "yield_after_unlock",
                        "yield_inside", "latency", "idle_suspend", "abt_pools", "text_lines", "text_vocabulary", "seed",
                        "gauss_tiles"})
    if (base[k].is_array()) throw config_error(std::string(k) + " cannot be a list");
  if (!scenario.contains("mutex") || base["mutex"] == "all") base["mutex"] = "all";
  if (base["runtime"] == "all") {
    json all = json::array();
    for (const runtime_driver* d : reg.drivers()) all.push_back(d->name());
    base["runtime"] = all;
  }
  for (const auto& k : sweep_order)
    if (base[k].is_array() && base[k].empty()) throw config_error(k + " list is empty");

  const unsigned reps = static_cast<unsigned>(positive_int(base["reps"], "reps"));
  const double warm = number(base["warmup_fraction"], "warmup_fraction", 0, false);

  // Cartesian product over sweep_order.
  std::vector<json> points = {json::object()};
  for (const auto& key : sweep_order) {
    std::vector<json> next;
    for (const json& p : points) {
      std::vector<json> values;
      if (key == "mutex" && p["workload"] == "gauss") {
        // gauss synchronises with the scheduler's events, not a mutex.
        if (!(base["mutex"] == "all" || base["mutex"] == "none"))
          throw config_error("workload gauss uses no mutex: leave mutex unset (or none), got " + base["mutex"].dump());
        values.push_back("none");
      } else if (key == "mutex" && base["mutex"] == "all") {
        const runtime_driver* d = reg.find(p["runtime"].get<std::string>());
        for (const auto& m : d->mutexes()) values.push_back(m);
      } else {
        values = as_list(base[key]);
      }
      for (const json& v : values) {
        json q = p;
        q[key] = v;
        if (key == "runtime") {
          const std::string name = string(v, "runtime");
          if (!reg.find(name)) {
            std::string known;
            for (const runtime_driver* d : reg.drivers()) known += (known.empty() ? "" : ", ") + d->name();
            throw config_error("unknown runtime '" + name + "' (known: " + known + ")");
          }
        }
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }

  // Repetition r of every mutex of one configuration runs before repetition
  // r + 1 of any: on a noisy machine a slow phase of a few seconds then hits
  // one repetition of every mutex compared, not all repetitions of one mutex
  // (it moved text-stats medians by 2x). mutex and event_arch are the two
  // innermost sweep keys, so the points of one configuration are adjacent.
  // Repetition r starts at the r-th point (modulo their number), so that no
  // mutex always runs first: in paper-coop on Argobots at 64 LTs whichever
  // ran first in every repetition lost about 4% (docs/BENCHMARKS.md,
  // session 36).
  const auto interleave_key = [](json p) {
    p.erase("mutex");
    p.erase("event_arch");
    return p;
  };
  std::vector<run_config> runs;
  std::vector<run_config> configuration;  // one run per point of the current configuration
  const auto flush = [&] {
    const std::size_t n = configuration.size();
    for (unsigned r = 0; r < reps; ++r)
      for (std::size_t i = 0; i < n; ++i) {
        run_config rc = configuration[(i + r) % n];
        rc.repetition = r;
        runs.push_back(std::move(rc));
      }
    configuration.clear();
  };
  json current_key;
  for (const json& p : points) {
    json key = interleave_key(p);
    if (!configuration.empty() && key != current_key) flush();
    current_key = std::move(key);
    run_config c;
    c.scenario = string(base["name"], "name");
    c.workload = string(p["workload"], "workload");
    if (c.workload != "loop" && c.workload != "text_stats" && c.workload != "gauss")
      throw config_error("unknown workload '" + c.workload + "' (known: loop, text_stats, gauss)");
    c.runtime = p["runtime"].get<std::string>();
    const runtime_driver* d = reg.find(c.runtime);
    const auto wls = d->workloads();
    if (std::find(wls.begin(), wls.end(), c.workload) == wls.end()) {
      std::string able;
      for (const runtime_driver* o : reg.drivers()) {
        const auto ow = o->workloads();
        if (std::find(ow.begin(), ow.end(), c.workload) != ow.end()) able += (able.empty() ? "" : ", ") + o->name();
      }
      throw config_error("runtime " + c.runtime + " does not run workload " + c.workload + " (runtimes that do: " +
                         (able.empty() ? std::string("none in this build") : able) + ")");
    }
    if (c.workload != "gauss")
      for (const auto& k : gauss_keys)
        if (scenario.contains(k)) throw config_error(k + " applies to workload gauss only");
    c.mutex = string(p["mutex"], "mutex");
    const auto ms = d->mutexes();
    if (c.workload != "gauss" && std::find(ms.begin(), ms.end(), c.mutex) == ms.end()) {
      std::string known;
      for (const auto& m : ms) known += (known.empty() ? "" : ", ") + m;
      throw config_error("unknown mutex '" + c.mutex + "' for runtime " + c.runtime + " (known: " + known + ")");
    }
    c.lts = static_cast<unsigned>(positive_int(p["lts"], "lts"));
    const unsigned carriers = static_cast<unsigned>(positive_int(p["carriers"], "carriers", true));
    c.carriers = carriers == 0 ? d->default_carriers(opt.hardware_carriers) : carriers;
    if (c.carriers > opt.hardware_carriers && !opt.oversubscribe)
      throw config_error("carriers=" + std::to_string(c.carriers) + " exceeds the " +
                         std::to_string(opt.hardware_carriers) + " CPUs of this machine (use --oversubscribe)");
    c.topology = string(p["topology"], "topology");
    c.pinning = string(p["pinning"], "pinning");
    validate_placement(c.topology, c.pinning);
    c.reps = reps;
    c.duration_ms = number(p["duration_ms"], "duration_ms", 0, true);
    c.warmup_fraction = warm;
    c.critical = parse_work(string(p["critical"], "critical"));
    c.parallel = parse_work(string(p["parallel"], "parallel"));
    c.yield_after_unlock = boolean(base["yield_after_unlock"], "yield_after_unlock");
    c.yield_inside = boolean(base["yield_inside"], "yield_inside");
    c.latency = boolean(base["latency"], "latency");
    c.idle_suspend = boolean(base["idle_suspend"], "idle_suspend");
    c.abt_pools = string(base["abt_pools"], "abt_pools");
    if (c.abt_pools != "per_stream" && c.abt_pools != "shared")
      throw config_error("abt_pools must be \"per_stream\" or \"shared\", got \"" + c.abt_pools + "\"");
    c.text_lines = static_cast<unsigned>(positive_int(base["text_lines"], "text_lines"));
    c.text_shards = static_cast<unsigned>(positive_int(p["text_shards"], "text_shards"));
    c.text_vocabulary = static_cast<unsigned>(positive_int(base["text_vocabulary"], "text_vocabulary"));
    c.seed = positive_int(base["seed"], "seed", true);
    c.event_arch = string(p["event_arch"], "event_arch");
    if (c.event_arch != "A0" && c.event_arch != "A1" && c.event_arch != "A2")
      throw config_error("event_arch must be A0, A1 or A2, got '" + c.event_arch + "'");
    c.distribution = string(p["distribution"], "distribution");
    if (c.distribution != "block" && c.distribution != "cyclic")
      throw config_error("distribution must be block or cyclic, got '" + c.distribution + "'");
    c.matrix_n = static_cast<unsigned>(positive_int(p["matrix_n"], "matrix_n"));
    if (c.matrix_n > 8192) throw config_error("matrix_n must be at most 8192, got " + std::to_string(c.matrix_n));
    c.gauss_tiles = static_cast<unsigned>(positive_int(base["gauss_tiles"], "gauss_tiles", true));
    // Wait-policy overrides for the fibersync mutexes; absent: the runtime's default.
    if (!p["max_backoff"].is_null()) c.max_backoff = static_cast<int>(positive_int(p["max_backoff"], "max_backoff", true));
    if (!p["yield_every"].is_null()) c.yield_every = static_cast<int>(positive_int(p["yield_every"], "yield_every", true));
    if (!p["suspend_after"].is_null()) c.suspend_after = static_cast<int>(positive_int(p["suspend_after"], "suspend_after", true));
    if (!p["hold_fraction"].is_null() || !p["lock_rate_per_ms"].is_null()) {
      if (p["hold_fraction"].is_null() || p["lock_rate_per_ms"].is_null())
        throw config_error("hold_fraction and lock_rate_per_ms go together");
      c.hold_fraction = number(p["hold_fraction"], "hold_fraction", 0, false);
      if (c.hold_fraction > 1) throw config_error("hold_fraction must be in [0, 1]");
      c.lock_rate_per_ms = number(p["lock_rate_per_ms"], "lock_rate_per_ms", 0, true);
      // Preshing: per iteration, hold h/rate inside the lock and (1-h)/rate outside.
      const double period_ns = 1e6 / c.lock_rate_per_ms;
      c.critical = work_spec{work_kind::poisson, 0, 0, c.hold_fraction * period_ns, -1};
      c.parallel = work_spec{work_kind::poisson, 0, 0, (1 - c.hold_fraction) * period_ns, -1};
    }
    json params = base;
    for (auto& [k, v] : p.items()) params[k] = v;
    if (c.workload != "gauss")
      for (const auto& k : gauss_keys) params.erase(k);
    params["carriers"] = c.carriers;
    params["critical"] = to_string(c.critical);
    params["parallel"] = to_string(c.parallel);
    c.params = std::move(params);
    configuration.push_back(std::move(c));
  }
  flush();
  return runs;
}

}  // namespace fibersync::bench
