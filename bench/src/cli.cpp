// cli.cpp: the fibersync-bench command line and the sweep driver.
//
// Each run executes in a forked child (Boost.Fiber's work_stealing can be set
// up once per process); the child sends its metrics back as one JSON document
// through a pipe. The parent never starts a runtime itself, so it is still
// single-threaded when it forks. After every completed run the CSV and JSON
// files are rewritten atomically, so an interrupted sweep keeps its rows.
#include "fibersync/bench/cli.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "fibersync/bench/registry.hpp"
#include "fibersync/bench/report.hpp"
#include "fibersync/bench/round_trip.hpp"
#include "fibersync/bench/scenario.hpp"
#include "fibersync/bench/text_stats.hpp"
#include "fibersync/bench/ticks.hpp"
#include "fibersync/bench/trace.hpp"

namespace fibersync::bench {

using nlohmann::json;

namespace {

volatile sig_atomic_t g_interrupted = 0;
void on_sigint(int) { g_interrupted = 1; }

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t\"'\\$`*?;&|<>(){}[]!#~") == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct child_result {
  json metrics;
  std::string error;  // empty: ok
};

child_result run_in_child(const runtime_driver& d, const run_config& cfg, const run_env& env, double timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) return {{}, "pipe failed"};
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) return {{}, "fork failed"};
  if (pid == 0) {
    ::signal(SIGINT, SIG_DFL);
    ::close(fds[0]);
    std::string out;
    try {
      out = d.run(cfg, env).dump();
    } catch (const std::exception& e) {
      out = json{{"error", e.what()}}.dump();
    }
    const char* p = out.data();
    std::size_t left = out.size();
    while (left > 0) {
      const ssize_t n = ::write(fds[1], p, left);
      if (n <= 0) {
        if (errno == EINTR) continue;
        ::_exit(3);
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string data;
  char buf[65536];
  const double deadline = monotonic_ns() + timeout_s * 1e9;
  bool timed_out = false;
  for (;;) {
    const double left_ms = (deadline - monotonic_ns()) / 1e6;
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(std::min(left_ms, 1000.0)) + 1);
    if (r < 0 && errno == EINTR) {
      if (g_interrupted) break;
      continue;
    }
    if (r <= 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out || g_interrupted) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (g_interrupted) return {{}, "interrupted"};
  if (timed_out) return {{}, "timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s"};
  if (WIFSIGNALED(status)) return {{}, std::string("child killed by signal ") + std::to_string(WTERMSIG(status))};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return {{}, "child exited with code " + std::to_string(WEXITSTATUS(status))};
  try {
    json j = json::parse(data);
    if (j.contains("error")) return {{}, j["error"].get<std::string>()};
    return {std::move(j), ""};
  } catch (const std::exception& e) {
    return {{}, std::string("bad child output: ") + e.what()};
  }
}

void print_list(const registry& reg) {
  std::cout << "runtimes and mutexes:\n";
  for (const runtime_driver* d : reg.drivers()) {
    std::cout << "  " << d->name() << ": ";
    const auto ms = d->mutexes();
    for (std::size_t i = 0; i < ms.size(); ++i) std::cout << (i ? ", " : "") << ms[i];
    std::cout << "\n      " << d->description() << "\n";
  }
  std::cout << "presets (" << presets_dir() << "):\n";
  for (const auto& p : preset_names()) {
    std::string desc;
    try {
      desc = load_preset(p).value("description", "");
    } catch (const std::exception&) {
      desc = "(unreadable)";
    }
    std::cout << "  " << p << (desc.empty() ? "" : ": " + desc) << "\n";
  }
  std::cout << "workloads: loop, text_stats, gauss (runtimes listing it: native)\n"
               "work kinds: none, pause(n), spawn(k,n), yield_steps(s,n), consume_cpu(t), poisson(m), memory(b);\n"
               "            counts may be times: pause(2us), consume_cpu(3000ns)\n";
}

// Theoretical bound on acquisitions/ms: hand-over bound 1/critical (wall),
// work bound carriers/(critical + parallel CPU work), and a single LT cannot
// go faster than lts/(critical + parallel wall time).
std::optional<double> bound_per_ms(const run_config& c, const calibration& cal) {
  if (c.workload != "loop") return std::nullopt;
  const work_cost cs = estimate(c.critical, cal, c.carriers), par = estimate(c.parallel, cal, c.carriers);
  double b = INFINITY;
  if (cs.wall_ns > 0) b = std::min(b, 1e6 / cs.wall_ns);
  if (cs.cpu_ns + par.cpu_ns > 0) b = std::min(b, c.carriers * 1e6 / (cs.cpu_ns + par.cpu_ns));
  if (cs.wall_ns + par.wall_ns > 0) b = std::min(b, c.lts * 1e6 / (cs.wall_ns + par.wall_ns));
  if (!std::isfinite(b)) return std::nullopt;
  return b;
}

// Whether `path` can be written: its directory made if missing, and a
// `path.tmp` created and removed again (the trace is written there first).
bool can_create(const std::string& path, std::string* why) {
  const std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  if (ec) {
    *why = ec.message();
    return false;
  }
  if (std::filesystem::is_directory(p, ec)) {
    *why = "is a directory";
    return false;
  }
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    *why = std::strerror(errno);
    return false;
  }
  std::fclose(f);
  std::filesystem::remove(tmp, ec);
  return true;
}

std::string timestamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

}  // namespace

int run_main(int argc, char** argv) {
  registry& reg = registry::instance();
  CLI::App app{"fibersync-bench: runs a lock scenario on every runtime x mutex x LT count (docs/bench.md)"};
  std::string preset, scenario_file, runtimes, mutexes, lts, carriers, reps, duration, out, trace, topology_desc,
      pinning;
  std::vector<std::string> sets;
  bool list = false, oversubscribe = false, no_line_probe = false;
  std::size_t trace_buffer = trace::default_buffer_records;
  auto* p_opt = app.add_option("--preset", preset, "preset name from presets/ (default: default)");
  app.add_option("--scenario", scenario_file, "scenario JSON file")->excludes(p_opt);
  app.add_option("--set", sets, "override a scenario field: key=value (value: JSON, or a comma list)");
  app.add_option("--runtime", runtimes, "runtimes, comma-separated (or all)");
  app.add_option("--mutex", mutexes, "mutexes, comma-separated (or all)");
  app.add_option("--lts", lts, "LT counts, comma-separated");
  app.add_option("--carriers", carriers, "carriers (OS threads / CPUs); 0 = cores");
  app.add_option("--topology", topology_desc,
                 "topology NUMA locks see: machine, or virtual, e.g. 2x1, 2x2x4, '0,1|2,3/4,5|6,7' (comma list = sweep "
                 "only via --set)");
  app.add_option("--pinning", pinning, "carrier pinning: none, compact, scatter (comma-separated to sweep)");
  app.add_option("--reps", reps, "repetitions per configuration");
  app.add_option("--duration-ms", duration, "timed part of each run in ms");
  app.add_option("--out", out, "output prefix: writes PREFIX.csv and PREFIX.json");
  app.add_option("--trace", trace,
                 "write a Chrome trace-event JSON per run (Perfetto, chrome://tracing): FILE for one run, "
                 "STEM-runNNN.EXT for each run of a sweep (t.json: t-run001.json, ...)");
  app.add_option("--trace-buffer", trace_buffer,
                 "trace records per carrier buffer (default " + std::to_string(trace::default_buffer_records) +
                     ", 40 bytes each); records past it are dropped and counted")
      ->check(CLI::Range(std::size_t{1}, trace::max_buffer_records));
  app.add_flag("--list", list, "list runtimes, mutexes and presets");
  app.add_flag("--oversubscribe", oversubscribe, "allow more carriers than CPUs");
  app.add_flag("--no-line-probe", no_line_probe,
               "do not time a cache line's round trip between two CPUs before each run (line_round_trip_ns)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "fibersync-bench: error: " << e.what() << "\n";
    return 2;
  }
  if (list) {
    print_list(reg);
    return 0;
  }

  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + shell_quote(argv[i]);

  std::vector<run_config> runs;
  json scenario;
  calibration cal;
  std::optional<text_corpus> corpus;
  try {
    scenario = scenario_file.empty() ? load_preset(preset.empty() ? "default" : preset)
                                     : load_scenario_file(scenario_file);
    for (const auto& s : sets) apply_override(scenario, s);
    auto set = [&](const char* key, const std::string& v) {
      if (!v.empty()) scenario[key] = parse_value(v);
    };
    set("runtime", runtimes);
    set("mutex", mutexes);
    set("lts", lts);
    set("carriers", carriers);
    if (!topology_desc.empty()) scenario["topology"] = topology_desc;  // commas belong to the description
    set("pinning", pinning);
    set("reps", reps);
    set("duration_ms", duration);
    expand_options opt;
    opt.oversubscribe = oversubscribe;
    opt.hardware_carriers = std::max(1u, std::thread::hardware_concurrency());
    runs = expand(scenario, reg, opt);
  } catch (const config_error& e) {
    std::cerr << "fibersync-bench: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "fibersync-bench: error: " << e.what() << "\n";
    return 2;
  }

  // An unwritable trace path is bad input: found before any run, no file left.
  if (!trace.empty()) {
    const std::string first = trace::run_trace_path(trace, 0, runs.size());
    std::string why;
    if (!can_create(first, &why)) {
      std::cerr << "fibersync-bench: error: cannot write trace file " << first << ": " << why << "\n";
      return 2;
    }
  }

  const std::string name = scenario.value("name", "scenario");
  if (out.empty()) out = "results/" + name + "-" + timestamp();
  const std::string csv_path = out + ".csv", json_path = out + ".json";

  std::cerr << "fibersync-bench: " << name << ": " << runs.size() << " runs; calibrating...\n";
  cal = calibrate();
  bool need_corpus = false;
  for (auto& r : runs) {
    resolve(r.critical, cal);
    resolve(r.parallel, cal);
    r.params["critical_units"] = to_string(r.critical);
    r.params["parallel_units"] = to_string(r.parallel);
    need_corpus = need_corpus || r.workload == "text_stats";
  }
  if (need_corpus) corpus = make_corpus(runs[0].text_lines, runs[0].text_vocabulary, runs[0].seed);
  run_env env;
  env.cal = cal;
  env.corpus = corpus ? &*corpus : nullptr;

  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);

  json context = machine_context(command);
  context["calibration"] = cal.to_json();
  const bool tty = ::isatty(STDERR_FILENO);
  std::vector<json> rows;
  int failures = 0, verify_failures = 0;
  for (std::size_t i = 0; i < runs.size() && !g_interrupted; ++i) {
    const run_config& c = runs[i];
    char head[256];
    std::snprintf(head, sizeof head, "[%zu/%zu] %s %s lts=%u carriers=%u rep=%u", i + 1, runs.size(),
                  c.runtime.c_str(), c.mutex.c_str(), c.lts, c.carriers, c.repetition);
    if (tty) std::cerr << "\r\033[K" << head << std::flush;
    // gauss runs to completion (duration_ms does not apply).
    const double timeout_s =
        c.workload == "gauss" ? 600 : 60 + 20 * c.duration_ms * (1 + c.warmup_fraction) / 1000;
    if (!trace.empty()) {
      env.trace.path = trace::run_trace_path(trace, i, runs.size());
      env.trace.buffer_records = trace_buffer;
      env.trace.pid = static_cast<unsigned>(i + 1);
      env.trace.process_name = "run " + std::to_string(i + 1) + ": " + c.runtime + " " + c.mutex +
                               " lts=" + std::to_string(c.lts) + " carriers=" + std::to_string(c.carriers) +
                               " rep=" + std::to_string(c.repetition);
    }
    // The machine's phase this run falls in (docs/bench.md): a round trip
    // takes ~57 or ~413 ns on our EPYC VM for tens of seconds at a time, and
    // locks do not gain or lose alike between the two. Taken in the parent,
    // between runs, so that it never competes with a run: 3 samples of
    // 10 000 round trips, 2-15 ms, each cut at 10 ms (on a loaded machine
    // a round trip can take a scheduler slice). NaN: not taken
    // (--no-line-probe, or fewer than two CPUs).
    const double line_round_trip =
        no_line_probe ? std::nan("")
                      : median_line_round_trip_ns(3, 10'000, std::chrono::milliseconds(10)).value_or(std::nan(""));
    child_result r = run_in_child(*reg.find(c.runtime), c, env, timeout_s);
    if (g_interrupted) break;
    if (!r.error.empty()) {
      // A child killed while writing its trace leaves FILE.tmp, never FILE.
      if (!env.trace.path.empty()) {
        std::error_code ec;
        std::filesystem::remove(env.trace.path + ".tmp", ec);
      }
      ++failures;
      std::cerr << (tty ? "\r\033[K" : "") << head << ": FAILED: " << r.error << "\n";
      continue;
    }
    json row = r.metrics;
    row["scenario"] = c.scenario;
    row["runtime"] = c.runtime;
    row["mutex"] = c.workload == "gauss" ? json(nullptr) : json(c.mutex);  // gauss: no mutex, empty cell
    row["lts"] = c.lts;
    row["carriers"] = c.carriers;
    row["pinning"] = c.pinning;
    row["topology"] = c.topology;
    row["repetition"] = c.repetition;
    row["hold_fraction"] = c.hold_fraction >= 0 ? json(c.hold_fraction) : json(nullptr);
    row["lock_rate_per_ms"] = c.lock_rate_per_ms > 0 ? json(c.lock_rate_per_ms) : json(nullptr);
    if (auto b = bound_per_ms(c, cal)) {
      row["bound_per_ms"] = *b;
      row["bound_fraction"] = row["throughput_per_ms"].get<double>() / *b;
    } else {
      row["bound_per_ms"] = row["bound_fraction"] = nullptr;
    }
    for (const char* k : {"same_node_handover", "same_cluster_handover", "remote_handovers_per_1000", "arch",
                          "distribution", "matrix_n", "forward_ms", "back_ms", "total_ms", "residual",
                          "throughput_per_ms"})
      if (!row.contains(k)) row[k] = nullptr;
    row["line_round_trip_ns"] = std::isnan(line_round_trip) ? json(nullptr) : json(line_round_trip);
    row["params"] = c.params;
    if (row.contains("verified") && !row["verified"].get<bool>()) {
      ++verify_failures;
      std::cerr << (tty ? "\r\033[K" : "") << head << ": VERIFICATION FAILED: "
                << row.value("verification_error", "") << "\n";
    }
    if (row.value("trace_dropped_records", std::uint64_t{0}) > 0)
      std::cerr << (tty ? "\r\033[K" : "") << head << ": trace incomplete: " << row["trace_dropped_records"]
                << " records dropped (a carrier buffer was full; raise --trace-buffer)\n";
    rows.push_back(std::move(row));
    fill_speedups(rows);
    char tail[160];
    const json& last = rows.back();
    if (c.workload == "gauss")
      std::snprintf(tail, sizeof tail, " %s %s n=%u: forward %.2f ms, back %.2f ms, residual %.1e",
                    c.event_arch.c_str(), c.distribution.c_str(), c.matrix_n, last["forward_ms"].get<double>(),
                    last["back_ms"].get<double>(), last["residual"].get<double>());
    else
      std::snprintf(tail, sizeof tail, " %.1f acq/ms", last["throughput_per_ms"].get<double>());
    if (!std::isnan(line_round_trip)) {
      const std::size_t used = std::strlen(tail);
      std::snprintf(tail + used, sizeof tail - used, ", line %.0f ns", line_round_trip);
    }
    if (!tty) std::cerr << head << tail << "\n";
    else std::cerr << "\r\033[K" << head << tail << std::flush;
    try {
      json doc = {{"schema_version", 1}, {"context", context}, {"scenario", scenario},
                  {"runs", rows},        {"summary", summarize(rows)}};
      write_atomically(csv_path, csv_text(rows));
      write_atomically(json_path, doc.dump(2) + "\n");
    } catch (const std::exception& e) {
      std::cerr << "\nfibersync-bench: error: " << e.what() << "\n";
      return 1;
    }
  }
  if (tty) std::cerr << "\n";
  if (rows.empty()) {
    std::cerr << "fibersync-bench: error: no run completed\n";
    return g_interrupted ? 130 : 1;
  }
  std::cout << csv_path << std::endl;
  if (g_interrupted) {
    std::cerr << "fibersync-bench: interrupted; " << rows.size() << " completed runs kept in " << csv_path << "\n";
    return 130;
  }
  if (failures) std::cerr << "fibersync-bench: " << failures << " run(s) failed\n";
  if (verify_failures)
    std::cerr << "fibersync-bench: verification (text_stats counts, gauss residual) failed in " << verify_failures
              << " run(s)\n";
  return (failures || verify_failures) ? 1 : 0;
}

}  // namespace fibersync::bench
