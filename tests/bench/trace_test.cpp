// fibersync-bench --trace: the file is valid Chrome trace-event JSON, its
// migration arrows are exactly the run's `migrations` metric, sweeps get one
// file per run, a full buffer drops records without failing the run, and an
// unwritable path is bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_cli_support.hpp"
#include "fibersync/bench/trace.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace fibersync::test;

namespace {

json load(const std::string& path) {
  EXPECT_TRUE(fs::exists(path)) << path;
  return json::parse(slurp(path));
}

struct trace_counts {
  std::size_t spans = 0, instants = 0, flows = 0, tracks = 0;
  std::set<long long> pids;
  std::map<std::string, std::size_t> instants_by_name;  // "cat/name"
};

bool is_time(const json& v) { return v.is_number() && v.get<double>() >= 0; }

// Checks the Chrome trace-event format as fibersync-bench writes it (the
// rules of tools/report/fibersync_report/trace.py): required keys per phase,
// non-negative times, every track named, flows paired with f after s and
// each end inside a span of its track, spans of one track not overlapping.
trace_counts validate(const json& doc) {
  trace_counts n;
  EXPECT_TRUE(doc.is_object());
  EXPECT_EQ(doc.value("displayTimeUnit", ""), "ns");
  EXPECT_TRUE(doc["otherData"].is_object());
  const json& events = doc["traceEvents"];
  EXPECT_TRUE(events.is_array());
  using track = std::pair<long long, long long>;
  std::set<track> named, used;
  std::map<track, std::vector<std::pair<double, double>>> spans;
  struct flow_end {
    track where;
    double ts;
  };
  std::map<long long, flow_end> starts, finishes;
  for (const json& e : events) {
    SCOPED_TRACE(e.dump());
    const std::string ph = e.at("ph").get<std::string>();
    EXPECT_TRUE(e.at("pid").is_number_integer());
    EXPECT_TRUE(e.at("name").is_string() && !e["name"].get<std::string>().empty());
    n.pids.insert(e["pid"].get<long long>());
    if (ph == "M") {
      const std::string name = e["name"];
      EXPECT_TRUE(e.at("args").is_object());
      if (name == "process_name" || name == "thread_name") {
        EXPECT_TRUE(e["args"].at("name").is_string());
      } else {
        EXPECT_EQ(name, "thread_sort_index");
      }
      if (name != "process_name") {
        EXPECT_TRUE(e.at("tid").is_number_integer());
      }
      if (name == "thread_name") named.insert({e["pid"].get<long long>(), e["tid"].get<long long>()});
      continue;
    }
    EXPECT_TRUE(is_time(e.at("ts")));
    EXPECT_TRUE(e.at("tid").is_number_integer());
    const track t{e["pid"].get<long long>(), e["tid"].get<long long>()};
    used.insert(t);
    const double ts = e["ts"].get<double>();
    if (ph == "X") {
      ++n.spans;
      EXPECT_TRUE(is_time(e.at("dur")));
      spans[t].push_back({ts, ts + e["dur"].get<double>()});
    } else if (ph == "i") {
      ++n.instants;
      ++n.instants_by_name[e.value("cat", "") + "/" + e["name"].get<std::string>()];
      const std::string scope = e.at("s");
      EXPECT_TRUE(scope == "t" || scope == "p" || scope == "g");
    } else if (ph == "s" || ph == "f") {
      EXPECT_TRUE(e.at("cat").is_string());
      const long long id = e.at("id").get<long long>();
      auto& table = ph == "s" ? starts : finishes;
      EXPECT_EQ(table.count(id), 0u) << "flow id " << id << " has two '" << ph << "' events";
      table[id] = {t, ts};
      if (ph == "f") {
        EXPECT_EQ(e.at("bp"), "e");
      }
    } else {
      ADD_FAILURE() << "unexpected phase " << ph;
    }
  }
  for (const track& t : used) EXPECT_TRUE(named.count(t)) << "track " << t.first << "/" << t.second << " not named";
  n.tracks = named.size();
  // Spans of one carrier never overlap (sorted by start, each ends before the next starts).
  for (auto& [t, v] : spans) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) EXPECT_LE(v[i - 1].second, v[i].first + 1e-6) << "overlap on tid " << t.second;
  }
  auto inside_span = [&](const flow_end& f) {
    const auto& v = spans[f.where];
    auto it = std::upper_bound(v.begin(), v.end(), std::pair<double, double>{f.ts, 1e300});
    return it != v.begin() && std::prev(it)->first <= f.ts && f.ts <= std::prev(it)->second + 1e-6;
  };
  for (const auto& [id, s] : starts) {
    auto f = finishes.find(id);
    if (f == finishes.end()) {
      ADD_FAILURE() << "flow " << id << " has no finish";
      continue;
    }
    EXPECT_GE(f->second.ts, s.ts) << "flow " << id;
    EXPECT_NE(f->second.where, s.where) << "flow " << id << ": a migration stays on its carrier";
    EXPECT_TRUE(inside_span(s)) << "flow " << id << " starts outside a span";
    EXPECT_TRUE(inside_span(f->second)) << "flow " << id << " ends outside a span";
  }
  EXPECT_EQ(starts.size(), finishes.size());
  n.flows = starts.size();
  return n;
}

// Checks one run of a sweep: its trace has exactly `migrations` arrows.
// Returns the run's `migrations`.
std::uint64_t check_run(const json& row, const std::string& path, bool cross_check_with_python) {
  SCOPED_TRACE(path);
  const std::uint64_t migrations = row.at("migrations").get<std::uint64_t>();
  EXPECT_NEAR(row["migrations_per_acq"].get<double>(),
              static_cast<double>(migrations) / row["acquisitions"].get<double>(), 1e-9);
  EXPECT_EQ(row.at("trace_file"), path);
  EXPECT_EQ(row.at("trace_dropped_records"), 0);
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  const json doc = load(path);
  trace_counts n = validate(doc);
  EXPECT_EQ(n.flows, migrations);
  EXPECT_EQ(row.at("trace_migrations").get<std::uint64_t>(), migrations);
  EXPECT_EQ(doc["otherData"]["migrations"].get<std::uint64_t>(), migrations);
  EXPECT_EQ(doc["otherData"]["dropped_records"], 0);
  EXPECT_EQ(n.pids.size(), 1u);
  EXPECT_GT(n.spans, 16u);
  EXPECT_GT(n.instants, 0u);
  if (migrations > 0) {
    EXPECT_EQ(n.tracks, 2u);
  }
  // The mutex's yields and suspends of the timed part are among the
  // instants (which also cover the warm-up).
  const double acquisitions = row["acquisitions"].get<double>();
  EXPECT_GE(static_cast<double>(n.instants_by_name["mutex/yield"]),
            std::floor(row["yields_per_acq"].get<double>() * acquisitions));
  EXPECT_GE(static_cast<double>(n.instants_by_name["mutex/suspend"]),
            std::floor(row["suspends_per_acq"].get<double>() * acquisitions));
  EXPECT_EQ(n.instants_by_name["mutex/resume"], n.instants_by_name["mutex/suspend"]) << "MCS resumes every waiter it parks";
  EXPECT_EQ(n.instants_by_name["phase/measuring begins"], 1u);
  EXPECT_EQ(n.instants_by_name["phase/measuring ends"], 1u);
#ifdef FIBERSYNC_REPORT_EXE
  if (cross_check_with_python) {
    // The report tool's validator must agree, number of migrations included.
    EXPECT_EQ(run_shell(std::string(FIBERSYNC_REPORT_EXE) + " check-trace " + path + " --expect-migrations " +
                  std::to_string(migrations)),
              0);
    EXPECT_EQ(run_shell(std::string(FIBERSYNC_REPORT_EXE) + " check-trace " + path + " --expect-migrations " +
                  std::to_string(migrations + 1)),
              1);
  }
#else
  (void)cross_check_with_python;
#endif
  return migrations;
}

// boost_fiber with 2 carriers and 16 LTs, MCS (it suspends, so waiters are
// resumed by whichever carrier hands over). Boost.Fiber's work stealing
// leaves the second carrier idle in about half of such runs (no migration
// at all), so the sweep has 12 repetitions: every run is checked, and at
// least one must have migrated for the equality to prove anything.
void arrows_equal_metric(const std::string& extra) {
  const std::string d = test_dir();
  constexpr int reps = 12;
  ASSERT_EQ(run_bench("--preset hot-handover --runtime boost_fiber --mutex mcs --lts 16 --carriers 2 --oversubscribe "
                  "--reps " + std::to_string(reps) + " --duration-ms 60 --out " + d + "/r --trace " + d + "/t.json " +
                  extra),
            0);
  const json runs = load(d + "/r.json")["runs"];
  ASSERT_EQ(runs.size(), std::size_t{reps});
  std::uint64_t most = 0;
  for (int i = 0; i < reps; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/t-run%03d.json", i + 1);
    // The Python validator takes about a second per file: it checks the
    // runs up to the first one that migrated.
    const std::uint64_t m = check_run(runs[i], d + name, most == 0);
    most = std::max(most, m);
  }
  EXPECT_GT(most, 0u) << "no run migrated: the equality proved nothing";
}

}  // namespace

TEST(BenchTrace, MigrationArrowsEqualMetric) { arrows_equal_metric(""); }
// Without latency sampling the arrow starts where the iteration began.
TEST(BenchTrace, MigrationArrowsEqualMetricWithoutLatency) { arrows_equal_metric("--set latency=false"); }

TEST(BenchTrace, SweepWritesOneFilePerRun) {
  const std::string d = test_dir();
  ASSERT_EQ(run_bench("--runtime boost_fiber --mutex ttas,library --lts 4 --carriers 2 --oversubscribe --reps 1 "
                  "--duration-ms 40 --out " + d + "/r --trace " + d + "/t.json"),
            0);
  EXPECT_FALSE(fs::exists(d + "/t.json"));
  const json runs = load(d + "/r.json")["runs"];
  ASSERT_EQ(runs.size(), 2u);
  for (long long i = 1; i <= 2; ++i) {
    const std::string path = d + "/t-run00" + std::to_string(i) + ".json";
    ASSERT_TRUE(fs::exists(path)) << path;
    EXPECT_EQ(runs[i - 1].at("trace_file"), path);
    const json doc = load(path);
    const trace_counts n = validate(doc);
    EXPECT_EQ(n.pids, std::set<long long>{i}) << "pid = the run's number";
    EXPECT_EQ(n.flows, runs[i - 1]["migrations"].get<std::uint64_t>());
    EXPECT_EQ(doc["otherData"]["mutex"], runs[i - 1]["mutex"]);
  }
}

TEST(BenchTrace, FullBufferDropsAndCounts) {
  const std::string d = test_dir();
  ASSERT_EQ(run_bench("--runtime boost_fiber --mutex mcs --lts 8 --carriers 2 --oversubscribe --reps 1 --duration-ms 40 "
                  "--trace-buffer 64 --out " + d + "/r --trace " + d + "/t.json"),
            0);
  const json row = load(d + "/r.json")["runs"][0];
  const json doc = load(d + "/t.json");
  validate(doc);
  EXPECT_GT(row.at("trace_dropped_records").get<std::uint64_t>(), 0u);
  EXPECT_EQ(doc["otherData"]["dropped_records"], row["trace_dropped_records"]);
  EXPECT_LE(doc["otherData"]["records"].get<std::uint64_t>(), 64u * doc["otherData"]["carrier_buffers"].get<std::uint64_t>());
}

TEST(BenchTrace, UnwritablePathIsBadInput) {
  const std::string d = test_dir();
  std::ofstream(d + "/file") << "not a directory";
  // A path under a regular file, and a directory: exit 2, nothing written.
  const std::string err = d + ".stderr";
  const int st = std::system((std::string(FIBERSYNC_BENCH_EXE) +
                               " --runtime boost_fiber --mutex ttas --lts 2 --reps 1 --duration-ms 20 --out " + d +
                               "/r --trace " + d + "/file/t.json >/dev/null 2>" + err)
                                  .c_str());
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2);
  std::ifstream in(err);
  std::string line, more;
  std::getline(in, line);
  EXPECT_NE(line.find("error: cannot write trace file " + d + "/file/t.json"), std::string::npos) << line;
  EXPECT_FALSE(std::getline(in, more)) << "more than one line: " << more;
  EXPECT_EQ(run_bench("--runtime boost_fiber --mutex ttas --lts 2 --reps 1 --duration-ms 20 --out " + d + "/r --trace " + d),
            2);
  EXPECT_EQ(run_bench("--runtime boost_fiber --mutex ttas --lts 2 --reps 1 --duration-ms 20 --out " + d +
                  "/r --trace " + d + "/t.json --trace-buffer 0"),
            2);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(d)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"file"});
}

// A switch is one record, written after it: the writer must end the LT's
// span where it stopped (tick and carrier of `other` / `from_carrier`) and
// start the next one where it runs again.
TEST(BenchTrace, SwitchRecordEndsOneSpanAndStartsTheNext) {
  namespace tr = fibersync::bench::trace;
  tr::recording rec;
  rec.buffers.push_back(std::make_unique<tr::carrier_buffer>(16));
  tr::carrier_buffer& b = *rec.buffers.back();
  ASSERT_EQ(b.capacity, 16u);
  const std::uint64_t lt = 0x1000;
  b.records[b.size++] = tr::record{1000, lt, 7, 0, 0, tr::kind::lt_start};
  // Parked at tick 3000 on carrier 0, running again at 9000 on carrier 1.
  b.records[b.size++] = tr::record{9000, lt, 3000, 1, 0, tr::kind::mutex_suspend};
  b.records[b.size++] = tr::record{12000, lt, 0, 1, 0, tr::kind::lt_exit};
  const std::string path = test_dir() + "/switch.json";
  tr::trace_info info;
  info.ticks_per_ns = 1.0;
  tr::write_chrome_trace(path, rec, info);
  const json doc = load(path);
  validate(doc);
  std::map<long long, std::vector<json>> spans;  // tid -> spans
  std::vector<json> suspends;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "X") spans[e["tid"].get<long long>()].push_back(e);
    if (e["ph"] == "i" && e["name"] == "suspend") suspends.push_back(e);
  }
  ASSERT_EQ(spans[0].size(), 1u);
  ASSERT_EQ(spans[1].size(), 1u);
  // Times are microseconds from the first tick (1000), 1 tick = 1 ns.
  EXPECT_DOUBLE_EQ(spans[0][0]["ts"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(spans[0][0]["dur"].get<double>(), 2.0);
  EXPECT_EQ(spans[0][0]["args"]["ended_by"], "suspend");
  EXPECT_DOUBLE_EQ(spans[1][0]["ts"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(spans[1][0]["dur"].get<double>(), 3.0);
  EXPECT_EQ(spans[1][0]["args"]["ended_by"], "exit");
  ASSERT_EQ(suspends.size(), 1u);
  EXPECT_EQ(suspends[0]["tid"], 0);
  EXPECT_DOUBLE_EQ(suspends[0]["ts"].get<double>(), 2.0);
}
