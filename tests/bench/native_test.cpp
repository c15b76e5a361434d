// The native runtime in fibersync-bench: loop runs with the fibersync
// mutexes, and the gauss workload (residual check, phase times, bad input).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "bench_cli_support.hpp"
#include "fibersync/bench/report.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace fibersync::test;

namespace {
}  // namespace

TEST(native_bench, ListsNativeWithoutLibraryMutex) {
  const std::string d = test_dir();
  ASSERT_EQ(std::system((std::string(FIBERSYNC_BENCH_EXE) + " --list > " + d + "/list.txt").c_str()), 0);
  const std::string s = slurp(d + "/list.txt");
  const auto at = s.find("  native: ");
  ASSERT_NE(at, std::string::npos);
  const std::string line = s.substr(at, s.find('\n', at) - at);
  for (const char* m : {"ttas", "ticket", "mcs", "clh", "cna", "numa_mcs"}) EXPECT_NE(line.find(m), std::string::npos) << m;
  EXPECT_EQ(line.find("library"), std::string::npos) << line;
  EXPECT_NE(s.find("gauss"), std::string::npos);
  expect_bad("--runtime native --mutex library");
}

TEST(native_bench, LoopEndToEnd) {
  const std::string d = test_dir();
  ASSERT_EQ(run_bench("--runtime native --mutex mcs,ttas --lts 1,5 --reps 1 --duration-ms 60 --carriers 2 --set pinning=compact "
                "--set 'critical=spawn(2,50)' --out " + d + "/r"),
            0);
  const json doc = json::parse(slurp(d + "/r.json"));
  ASSERT_EQ(doc["runs"].size(), 4u);
  for (const json& r : doc["runs"]) {
    EXPECT_EQ(r["runtime"], "native");
    EXPECT_EQ(r["pinning"], "compact");
    std::uint64_t sum = 0;
    for (const json& n : r["per_lt_acquisitions"]) sum += n.get<std::uint64_t>();
    EXPECT_GT(sum, 0u);
    EXPECT_EQ(sum, r["acquisitions"].get<std::uint64_t>());
    EXPECT_TRUE(r["arch"].is_null());
    EXPECT_FALSE(r["params"].contains("event_arch"));
  }
}

TEST(native_bench, GaussShortSweepPasses) {
  const std::string d = test_dir();
  ASSERT_EQ(run_bench("--preset gauss --lts 16,70 --reps 1 --carriers 2 --set matrix_n=120 --out " + d + "/r"), 0);
  const json doc = json::parse(slurp(d + "/r.json"));
  ASSERT_EQ(doc["runs"].size(), 12u);  // 2 lts x 2 distributions x 3 architectures
  std::set<std::string> seen;
  for (const json& r : doc["runs"]) {
    EXPECT_TRUE(r["mutex"].is_null());  // empty CSV cell, as the report tool's is_gauss expects
    EXPECT_EQ(r["matrix_n"], 120);
    EXPECT_TRUE(r["verified"].get<bool>());
    EXPECT_LT(r["residual"].get<double>(), 1e-8);
    EXPECT_GT(r["forward_ms"].get<double>(), 0);
    EXPECT_GT(r["back_ms"].get<double>(), 0);
    EXPECT_NEAR(r["total_ms"].get<double>(), r["forward_ms"].get<double>() + r["back_ms"].get<double>(), 1e-6);
    EXPECT_TRUE(r["throughput_per_ms"].is_null());
    seen.insert(r["arch"].get<std::string>() + "/" + r["distribution"].get<std::string>() + "/" +
                std::to_string(r["lts"].get<int>()));
  }
  EXPECT_EQ(seen.size(), 12u);
  for (const json& s : doc["summary"]) EXPECT_TRUE(s.contains("back_ms_median")) << s.dump();
  // CSV: the fixed columns, gauss cells filled.
  std::istringstream lines(slurp(d + "/r.csv"));
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_EQ(std::count(row.begin(), row.end(), ','), static_cast<long>(fibersync::bench::csv_columns().size() - 1));
  EXPECT_NE(row.find(",A0,block,120,"), std::string::npos) << row;
}

TEST(native_bench, GaussCorruptedRunFailsResidualCheck) {
  const std::string d = test_dir();
  EXPECT_EQ(run_bench("--set workload=gauss --runtime native --lts 16 --reps 1 --carriers 2 --set matrix_n=96 "
                "--set event_arch=A0,A2 --out " + d + "/r",
                "FIBERSYNC_BENCH_GAUSS_CORRUPT=1"),
            1);
  const json doc = json::parse(slurp(d + "/r.json"));
  ASSERT_EQ(doc["runs"].size(), 2u);
  for (const json& r : doc["runs"]) {
    EXPECT_FALSE(r["verified"].get<bool>());
    EXPECT_GE(r["residual"].get<double>(), 1e-8);
    EXPECT_NE(r["verification_error"].get<std::string>().find("residual"), std::string::npos);
  }
}

TEST(native_bench, GaussBadInput) {
  expect_bad("--set workload=gauss --runtime native --set event_arch=A3");
  expect_bad("--set workload=gauss --runtime native --set distribution=diagonal");
  expect_bad("--set workload=gauss --runtime native --set matrix_n=0");
  expect_bad("--set workload=gauss --runtime native --mutex mcs");
  expect_bad("--set workload=gauss --runtime os_threads");
  expect_bad("--runtime native --set event_arch=A1");  // a gauss field on the loop workload
  expect_bad("--runtime native --set pinning=diagonal");
}
