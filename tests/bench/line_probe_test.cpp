// Runs the fibersync-line-probe binary: a plausible round trip on two CPUs,
// one line per sample with --each, and bad input (exit 2, one error line).
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "bench_cli_support.hpp"

namespace {

using fibersync::test::slurp;
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

}  // namespace
