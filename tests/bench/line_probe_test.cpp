// Runs the fibersync-line-probe binary: a plausible round trip on two CPUs,
// one line per sample with --each, and bad input (exit 2, one error line).
// And the same measurement inside fibersync-bench: it leaves the caller's
// affinity as it was (the bench forks every run from that thread), and every
// run's row records it (line_round_trip_ns), unless --no-line-probe.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_cli_support.hpp"
#include "fibersync/bench/round_trip.hpp"

namespace {

using fibersync::test::run_bench;
using fibersync::test::slurp;
using nlohmann::json;
using fibersync::test::test_dir;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Exit code of a shell command whose output the command itself redirects.
int exit_code_of(const std::string& cmd) {
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int allowed_cpu_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

const std::string probe = FIBERSYNC_LINE_PROBE_EXE;

TEST(line_probe, prints_one_round_trip_per_sample_and_their_median) {
  if (allowed_cpu_count() < 2) GTEST_SKIP() << "needs two CPUs";
  const std::string d = test_dir();
  ASSERT_EQ(exit_code_of(probe + " --samples 3 --round-trips 2000 --each > " + d + "/out.txt"), 0);
  const auto lines = lines_of(slurp(d + "/out.txt"));
  ASSERT_EQ(lines.size(), 4u);  // three samples, then the median
  std::vector<double> values;
  for (const auto& line : lines) {
    const double ns = std::stod(line);
    // A line crosses between cores in tens to hundreds of ns; a thread
    // descheduled for a slice can stretch one sample, never make it 0.
    EXPECT_GT(ns, 1.0) << line;
    EXPECT_LT(ns, 1e7) << line;
    values.push_back(ns);
  }
  std::vector<double> samples(values.begin(), values.begin() + 3);
  std::sort(samples.begin(), samples.end());
  EXPECT_DOUBLE_EQ(values[3], samples[1]);
}

TEST(line_probe, bad_input_is_one_error_line_and_exit_2) {
  const std::string d = test_dir();
  for (const std::string args : {"--cpus 0,0", "--cpus 0,100000", "--cpus 0", "--samples 0", "--round-trips x"}) {
    EXPECT_EQ(exit_code_of(probe + " " + args + " > " + d + "/out.txt 2> " + d + "/err.txt"), 2) << args;
    EXPECT_TRUE(slurp(d + "/out.txt").empty()) << args;
    const auto err = lines_of(slurp(d + "/err.txt"));
    ASSERT_EQ(err.size(), 1u) << args;
    EXPECT_EQ(err[0].rfind("fibersync-line-probe: error: ", 0), 0u) << err[0];
  }
}

TEST(line_probe, the_caller_gets_its_affinity_back) {
  if (allowed_cpu_count() < 2) GTEST_SKIP() << "needs two CPUs";
  cpu_set_t before, after;
  CPU_ZERO(&before);
  CPU_ZERO(&after);
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof before, &before), 0);
  const auto ns = fibersync::bench::median_line_round_trip_ns(3, 2000);
  ASSERT_TRUE(ns.has_value());
  EXPECT_GT(*ns, 1.0);
  EXPECT_LT(*ns, 1e7);
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after)) << "the probe left the caller pinned";
  EXPECT_GE(CPU_COUNT(&after), 2);
}

TEST(line_probe, a_budget_ends_a_sample_early) {
  if (allowed_cpu_count() < 2) GTEST_SKIP() << "needs two CPUs";
  const auto cpus = fibersync::bench::allowed_cpus();
  // A billion round trips take a minute or more; 20 ms of them, a plausible mean.
  const auto start = std::chrono::steady_clock::now();
  const auto ns = fibersync::bench::line_round_trip_ns(cpus[0], cpus[1], 1'000'000'000, std::chrono::milliseconds(20));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(ns.has_value());
  EXPECT_GT(*ns, 1.0);
  EXPECT_LT(*ns, 2e7);  // at most the budget: not even one round trip may have come back
  EXPECT_LT(took, std::chrono::seconds(10));
}

// The CSV cell of `column` in each data line.
std::vector<std::string> csv_cells(const std::string& csv, const std::string& column) {
  const auto lines = lines_of(csv);
  std::vector<std::string> cells;
  if (lines.empty()) return cells;
  auto split = [](const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
    if (!line.empty() && line.back() == ',') out.emplace_back();
    return out;
  };
  const auto header = split(lines[0]);
  const auto at = std::find(header.begin(), header.end(), column);
  if (at == header.end()) return cells;
  for (std::size_t i = 1; i < lines.size(); ++i) cells.push_back(split(lines[i]).at(at - header.begin()));
  return cells;
}

TEST(line_probe, every_bench_run_records_its_round_trip) {
  const std::string d = test_dir();
  const std::string args = "--runtime os_threads --mutex ttas --lts 2 --reps 3 --duration-ms 20 --carriers 2 ";
  ASSERT_EQ(run_bench(args + "--out " + d + "/probed"), 0);
  const json probed = json::parse(slurp(d + "/probed.json"));
  ASSERT_EQ(probed["runs"].size(), 3u);
  const auto cells = csv_cells(slurp(d + "/probed.csv"), "line_round_trip_ns");
  ASSERT_EQ(cells.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const json& v = probed["runs"][i]["line_round_trip_ns"];
    if (allowed_cpu_count() < 2) {
      EXPECT_TRUE(v.is_null());  // nothing to time: an empty cell, not a 0
      EXPECT_TRUE(cells[i].empty());
      continue;
    }
    ASSERT_TRUE(v.is_number()) << v;
    EXPECT_GT(v.get<double>(), 1.0);
    EXPECT_LT(v.get<double>(), 1e7);
    EXPECT_NEAR(std::stod(cells[i]), v.get<double>(), 1e-4 * v.get<double>());
  }
  ASSERT_EQ(run_bench(args + "--no-line-probe --out " + d + "/plain"), 0);
  const json plain = json::parse(slurp(d + "/plain.json"));
  ASSERT_EQ(plain["runs"].size(), 3u);
  for (const json& r : plain["runs"]) EXPECT_TRUE(r["line_round_trip_ns"].is_null());
  for (const auto& cell : csv_cells(slurp(d + "/plain.csv"), "line_round_trip_ns")) EXPECT_TRUE(cell.empty());
}

}  // namespace
