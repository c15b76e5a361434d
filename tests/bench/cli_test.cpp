// Runs the fibersync-bench binary: bad input (exit 2, no file) and a short
// end-to-end run per runtime (CSV columns, acquisitions = sum of per-LT counts).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "bench_cli_support.hpp"
#include "fibersync/bench/report.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace fibersync::test;

namespace {

void end_to_end(const std::string& runtime) {
  const std::string d = test_dir();
  ASSERT_EQ(run_bench("--runtime " + runtime + " --mutex mcs,library --lts 1,3 --reps 1 --duration-ms 60 --carriers 1 --out " + d + "/r"), 0);
  const std::string csv = slurp(d + "/r.csv");
  std::istringstream lines(csv);
  std::string header;
  std::getline(lines, header);
  std::string expected;
  for (const auto& c : fibersync::bench::csv_columns()) expected += (expected.empty() ? "" : ",") + c;
  EXPECT_EQ(header, expected);
  int rows = 0;
  for (std::string l; std::getline(lines, l);) {
    ++rows;
    EXPECT_EQ(std::count(l.begin(), l.end(), ','), static_cast<long>(fibersync::bench::csv_columns().size() - 1));
  }
  EXPECT_EQ(rows, 4);
  const json doc = json::parse(slurp(d + "/r.json"));
  EXPECT_EQ(doc["schema_version"], 1);
  for (const char* k : {"host", "cpu_model", "cores", "numa_nodes", "kernel", "compiler", "build_type", "git_revision",
                        "command", "date", "topology", "calibration"})
    EXPECT_TRUE(doc["context"].contains(k)) << k;
  ASSERT_EQ(doc["runs"].size(), 4u);
  for (const json& r : doc["runs"]) {
    std::uint64_t sum = 0;
    for (const json& n : r["per_lt_acquisitions"]) sum += n.get<std::uint64_t>();
    EXPECT_EQ(sum, r["acquisitions"].get<std::uint64_t>());
    EXPECT_GT(sum, 0u);
    EXPECT_EQ(r["per_lt_acquisitions"].size(), r["lts"].get<std::size_t>());
    EXPECT_EQ(r["runtime"], runtime);
    for (const auto& c : fibersync::bench::csv_columns()) EXPECT_TRUE(r.contains(c)) << c;
    EXPECT_GT(r["bound_per_ms"].get<double>(), 0);
  }
  fs::remove_all(d);
}
}  // namespace

TEST(BenchCli, UnknownRuntime) { expect_bad("--runtime nosuch"); }
TEST(BenchCli, UnknownMutex) { expect_bad("--runtime os_threads --mutex nosuch"); }
TEST(BenchCli, UnknownPreset) { expect_bad("--preset nosuch"); }
TEST(BenchCli, NonPositiveCounts) {
  expect_bad("--lts 0");
  expect_bad("--reps 0");
  expect_bad("--duration-ms -5");
  expect_bad("--set critical=pause(-1)");
}
TEST(BenchCli, TooManyCarriers) { expect_bad("--carriers 4096"); }
TEST(BenchCli, MalformedJson) {
  const std::string d = test_dir();
  std::ofstream(d + "/bad.json") << "{ \"lts\": [1, 2,, }";
  EXPECT_EQ(run_bench("--scenario " + d + "/bad.json --out " + d + "/out/r"), 2);
  EXPECT_FALSE(fs::exists(d + "/out"));
}
TEST(BenchCli, UnknownOption) { expect_bad("--frobnicate"); }
TEST(BenchCli, BadPlacement) {
  expect_bad("--topology 3x");
  expect_bad("--topology 0,0");
  expect_bad("--pinning diagonal");
}
TEST(BenchCli, PlacementAndLocalityRecorded) {
  const std::string d = test_dir();
  ASSERT_EQ(run_bench("--runtime os_threads --mutex mcs,cna --lts 4 --reps 1 --duration-ms 60 --carriers 2 --oversubscribe "
                "--topology 2x1 --pinning compact,scatter --out " + d + "/two"), 0);
  const json two = json::parse(slurp(d + "/two.json"));
  ASSERT_EQ(two["runs"].size(), 4u);
  for (const json& r : two["runs"]) {
    EXPECT_EQ(r["topology"], "2x1");
    EXPECT_TRUE(r["pinning"] == "compact" || r["pinning"] == "scatter") << r["pinning"];
    const double same = r["same_node_handover"].get<double>();
    EXPECT_GE(same, 0.0);
    EXPECT_LE(same, 1.0);
    EXPECT_LE(r["same_cluster_handover"].get<double>(), same + 1e-12);  // a cluster lies inside a node
    EXPECT_NEAR(r["remote_handovers_per_1000"].get<double>(), 1000 * (1 - same), 1e-6);
  }
  // On a one-node machine every hand-over stays on the node.
  ASSERT_EQ(run_bench("--runtime os_threads --mutex mcs --lts 4 --reps 1 --duration-ms 40 --topology 1x2 --out " + d + "/one"), 0);
  const json one = json::parse(slurp(d + "/one.json"));
  EXPECT_DOUBLE_EQ(one["runs"][0]["same_node_handover"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(one["runs"][0]["remote_handovers_per_1000"].get<double>(), 0.0);
}
// scripts/recheck-adaptive.sh runs a configuration again from the arguments
// `fibersync-report rank --recheck` writes for it (tools/report, rank.py):
// the preset, runtime, LTs, carriers, pinning and topology as options, the
// swept fields with --set. The run must land on the same configuration.
TEST(BenchCli, RecheckArgumentsReproduceTheConfiguration) {
  const std::string d = test_dir();
  ASSERT_EQ(run_bench("--preset poisson-rate --runtime os_threads --lts 2 --carriers 2 --pinning compact "
                      "--topology 2x1 --set hold_fraction=0.5 --set lock_rate_per_ms=1000 --mutex ttas "
                      "--reps 1 --duration-ms 20 --out " + d + "/r"),
            0);
  const json r = json::parse(slurp(d + "/r.json"));
  ASSERT_EQ(r["runs"].size(), 1u);
  const json& run = r["runs"][0];
  EXPECT_EQ(run["scenario"], "poisson-rate");
  EXPECT_EQ(run["runtime"], "os_threads");
  EXPECT_EQ(run["lts"], 2);
  EXPECT_EQ(run["carriers"], 2);
  EXPECT_EQ(run["pinning"], "compact");
  EXPECT_EQ(run["topology"], "2x1");
  EXPECT_DOUBLE_EQ(run["hold_fraction"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(run["lock_rate_per_ms"].get<double>(), 1000.0);
}
TEST(BenchCli, TraceBufferOutOfRange) {
  expect_bad("--trace t.json --trace-buffer 0");
  expect_bad("--trace t.json --trace-buffer 1e12");
}
TEST(BenchCli, ListShowsEverything) {
  const std::string d = test_dir();
  ASSERT_EQ(std::system((std::string(FIBERSYNC_BENCH_EXE) + " --list > " + d + "/list.txt").c_str()), 0);
  const std::string s = slurp(d + "/list.txt");
  for (const char* k : {"os_threads", "boost_fiber", "library", "mcs", "default", "hot-handover", "paper-coop"})
    EXPECT_NE(s.find(k), std::string::npos) << k;
}
TEST(BenchCli, EndToEndOsThreads) { end_to_end("os_threads"); }
TEST(BenchCli, EndToEndBoostFiber) { end_to_end("boost_fiber"); }
TEST(BenchCli, EndToEndBoostFiberTwoCarriers) {
  const std::string d = test_dir();
  ASSERT_EQ(run_bench("--runtime boost_fiber --mutex ttas,library --lts 4 --reps 2 --duration-ms 50 --carriers 2 --oversubscribe --out " + d + "/r"), 0);
  const json doc = json::parse(slurp(d + "/r.json"));
  EXPECT_EQ(doc["runs"].size(), 4u);
}

TEST(BenchCli, BadAbtPools) {
  expect_bad("--set abt_pools=private");
  expect_bad("--set abt_pools=per_stream,shared");  // not a sweep field
}
#ifdef FIBERSYNC_BENCH_TEST_ARGOBOTS
TEST(BenchCli, ListShowsArgobots) {
  const std::string d = test_dir();
  ASSERT_EQ(std::system((std::string(FIBERSYNC_BENCH_EXE) + " --list > " + d + "/list.txt").c_str()), 0);
  const std::string s = slurp(d + "/list.txt");
  EXPECT_NE(s.find("argobots: ttas, ticket, mcs, clh, cna, numa_mcs, hmcs, adaptive, library"), std::string::npos) << s;
}
TEST(BenchCli, EndToEndArgobots) { end_to_end("argobots"); }
TEST(BenchCli, ArgobotsBothPoolModesTwoStreams) {
  for (const char* pools : {"per_stream", "shared"}) {
    const std::string d = test_dir();
    ASSERT_EQ(run_bench("--runtime argobots --mutex mcs,library --lts 8 --reps 1 --duration-ms 50 --carriers 2 --oversubscribe "
                  "--set abt_pools=" + std::string(pools) + " --set suspend_after=1 --out " + d + "/r"),
              0)
        << pools;
    const json doc = json::parse(slurp(d + "/r.json"));
    ASSERT_EQ(doc["runs"].size(), 2u) << pools;
    for (const json& r : doc["runs"]) {
      EXPECT_EQ(r["params"]["abt_pools"], pools);
      EXPECT_GT(r["acquisitions"].get<std::uint64_t>(), 0u) << pools;
    }
    // mcs parks its waiters at the first failed check: the permit path ran.
    EXPECT_GT(doc["runs"][0]["suspends_per_acq"].get<double>(), 0.0) << pools;
    // CSV columns stay those of every other runtime.
    std::istringstream lines(slurp(d + "/r.csv"));
    std::string header;
    std::getline(lines, header);
    EXPECT_EQ(header.find("abt_pools"), std::string::npos);
  }
}
#endif
