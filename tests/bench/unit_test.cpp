// Config parsing, validation and metric computations on known inputs.
#include <gtest/gtest.h>

#include "fibersync/bench/metrics.hpp"
#include "fibersync/bench/placement.hpp"
#include "fibersync/bench/registry.hpp"
#include "fibersync/bench/report.hpp"
#include "fibersync/bench/scenario.hpp"
#include "fibersync/bench/work.hpp"

using namespace fibersync::bench;
using nlohmann::json;

TEST(BenchWork, ParsesEveryKind) {
  EXPECT_EQ(parse_work("none").kind, work_kind::none);
  auto p = parse_work(" pause(100) ");
  EXPECT_EQ(p.kind, work_kind::pause);
  EXPECT_EQ(p.a, 100u);
  auto s = parse_work("spawn(12, 1000)");
  EXPECT_EQ(s.kind, work_kind::spawn);
  EXPECT_EQ(s.a, 12u);
  EXPECT_EQ(s.b, 1000u);
  EXPECT_EQ(parse_work("yield_steps(10,1000)").kind, work_kind::yield_steps);
  EXPECT_EQ(parse_work("consume_cpu(5)").kind, work_kind::consume_cpu);
  EXPECT_EQ(parse_work("poisson(7)").kind, work_kind::poisson);
  EXPECT_EQ(parse_work("memory(4096)").a, 4096u);
  auto t = parse_work("consume_cpu(3us)");
  EXPECT_DOUBLE_EQ(t.a_ns, 3000.0);
  calibration cal;
  cal.consume_cpu_ns = 2.0;
  resolve(t, cal);
  EXPECT_EQ(t.a, 1500u);
  EXPECT_EQ(to_string(parse_work("spawn(12,1000)")), "spawn(12,1000)");
}

TEST(BenchWork, RejectsMalformed) {
  for (const char* bad : {"pause", "pause()", "pause(-1)", "pause(x)", "spawn(1)", "frobnicate(3)", "pause(3",
                          "spawn(1us,3)"})
    EXPECT_THROW(parse_work(bad), config_error) << bad;
}

TEST(BenchScenario, ParseValueAndOverride) {
  EXPECT_EQ(parse_value("4"), json(4));
  EXPECT_EQ(parse_value("1,2,4"), json({1, 2, 4}));
  EXPECT_EQ(parse_value("mcs,ttas"), json({"mcs", "ttas"}));
  EXPECT_EQ(parse_value("spawn(12,1000),pause(5)"), json({"spawn(12,1000)", "pause(5)"}));
  EXPECT_EQ(parse_value("pause(5)"), json("pause(5)"));
  json s = json::object();
  apply_override(s, "lts=[1,2]");
  EXPECT_EQ(s["lts"], json({1, 2}));
  EXPECT_THROW(apply_override(s, "novalue"), config_error);
}

TEST(BenchScenario, ExpandsSweepInterleavingTheMutexesOfEachRepetitionInTurn) {
  json s = {{"runtime", "os_threads"}, {"mutex", {"mcs", "library"}}, {"lts", {1, 2}}, {"reps", 3}, {"carriers", 1}};
  auto runs = expand(s, registry::instance(), {false, 2});
  ASSERT_EQ(runs.size(), 12u);
  // lts=1: mcs r0, library r0, library r1, mcs r1, mcs r2, library r2 (each
  // repetition starts one mutex further on); then lts=2 the same way.
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::size_t rep = (i % 6) / 2;
    const bool first_of_pair = i % 2 == 0;
    EXPECT_EQ(runs[i].lts, i < 6 ? 1u : 2u) << i;
    EXPECT_EQ(runs[i].mutex, first_of_pair == (rep % 2 == 0) ? "mcs" : "library") << i;
    EXPECT_EQ(runs[i].repetition, rep) << i;
  }
  // Every run keeps its own point's parameters.
  for (const run_config& r : runs) {
    EXPECT_EQ(r.params["mutex"], r.mutex);
    EXPECT_EQ(r.params["lts"], r.lts);
  }
  json all = {{"runtime", "os_threads"}, {"lts", 1}};
  EXPECT_EQ(expand(all, registry::instance(), {false, 2}).size(), registry::instance().find("os_threads")->mutexes().size());
}

TEST(BenchScenario, PoissonFieldsBecomeWork) {
  json s = {{"runtime", "os_threads"}, {"mutex", "mcs"}, {"hold_fraction", 0.25}, {"lock_rate_per_ms", 100}};
  auto runs = expand(s, registry::instance(), {false, 2});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].critical.kind, work_kind::poisson);
  EXPECT_DOUBLE_EQ(runs[0].critical.a_ns, 2500.0);
  EXPECT_DOUBLE_EQ(runs[0].parallel.a_ns, 7500.0);
}

TEST(BenchScenario, WaitPolicyOverridesSweep) {
  json s = {{"runtime", "os_threads"}, {"mutex", "mcs"}, {"suspend_after", {0, 4}}, {"yield_every", 2}};
  auto runs = expand(s, registry::instance(), {false, 2});
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].suspend_after, 0);
  EXPECT_EQ(runs[1].suspend_after, 4);
  EXPECT_EQ(runs[1].yield_every, 2);
  EXPECT_EQ(runs[1].max_backoff, -1);  // not given: the runtime's default
  auto plain = expand({{"runtime", "os_threads"}, {"mutex", "mcs"}}, registry::instance(), {false, 2});
  EXPECT_EQ(plain[0].suspend_after, -1);
}

TEST(BenchScenario, RejectsBadInput) {
  const expand_options opt{false, 2};
  auto bad = [&](json s) {
    if (!s.contains("runtime")) s["runtime"] = "os_threads";
    EXPECT_THROW(expand(s, registry::instance(), opt), config_error) << s.dump();
  };
  bad({{"runtime", "nosuch"}});
  bad({{"mutex", "nosuch"}});
  bad({{"lts", 0}});
  bad({{"lts", -3}});
  bad({{"lts", json::array()}});
  bad({{"reps", 0}});
  bad({{"duration_ms", 0}});
  bad({{"carriers", 3}});
  bad({{"critical", "pause(-1)"}});
  bad({{"workload", "nosuch"}});
  bad({{"unknown_field", 1}});
  bad({{"hold_fraction", 0.5}});
  bad({{"hold_fraction", 1.5}, {"lock_rate_per_ms", 10}});
  bad({{"suspend_after", -1}});
  bad({{"yield_every", "often"}});
  EXPECT_NO_THROW(expand({{"runtime", "os_threads"}, {"carriers", 3}}, registry::instance(), {true, 2}));
}

TEST(BenchMetrics, JainIndex) {
  EXPECT_DOUBLE_EQ(jain_index({5, 5, 5, 5}), 1.0);
  EXPECT_DOUBLE_EQ(jain_index({10, 0, 0, 0}), 0.25);
  EXPECT_DOUBLE_EQ(jain_index({1, 3}), 16.0 / 20.0);
  EXPECT_DOUBLE_EQ(jain_index({}), 1.0);
}

TEST(BenchMetrics, Percentiles) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(101 - i);
  EXPECT_DOUBLE_EQ(percentile(v, 50), 50);
  EXPECT_DOUBLE_EQ(percentile(v, 99), 99);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 100);
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0);
  histogram h;
  for (int i = 1; i <= 100; ++i) h.add(static_cast<std::uint64_t>(i));
  EXPECT_DOUBLE_EQ(h.percentile(50), 50);
  EXPECT_DOUBLE_EQ(h.percentile(99), 99);
  EXPECT_EQ(h.max(), 100u);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
  histogram big;
  big.add(1000000);
  const double p = big.percentile(50);
  EXPECT_LE(p, 1000000.0);
  EXPECT_GE(p, 1000000.0 * (1 - 1.0 / 32));
  for (std::uint64_t x : {255ull, 256ull, 257ull, 1000ull, 123456789ull, ~0ull}) {
    const unsigned i = histogram::index(x);
    ASSERT_LT(i, histogram::buckets);
    EXPECT_LE(histogram::lower_edge(i), x);
  }
}

TEST(BenchMetrics, BypassCounts) {
  // Strict alternation of two LTs: nobody is bypassed more than once.
  auto alt = bypass_from_sequences({{0, 2, 4, 6}, {1, 3, 5, 7}});
  EXPECT_DOUBLE_EQ(alt.mean, 1.0);
  EXPECT_EQ(alt.max, 1u);
  EXPECT_EQ(alt.samples, 6u);
  // LT 0 waits while LT 1 takes 10 in a row.
  auto burst = bypass_from_sequences({{0, 11}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}});
  EXPECT_EQ(burst.max, 10u);
  EXPECT_EQ(burst.samples, 10u);
  EXPECT_DOUBLE_EQ(burst.mean, 1.0);
  EXPECT_DOUBLE_EQ(burst.p99, 10.0);
}

TEST(BenchReport, CsvRowHasEveryColumn) {
  json r = {{"scenario", "x"}, {"runtime", "os_threads"}, {"lts", 2}, {"throughput_per_ms", 1.5}, {"bypass_mean", nullptr}};
  const std::string row = csv_row(r);
  EXPECT_EQ(std::count(row.begin(), row.end(), ','), static_cast<long>(csv_columns().size() - 1));
  EXPECT_EQ(row.rfind("x,os_threads,,2,", 0), 0u);
  EXPECT_EQ(csv_columns().front(), "scenario");
  EXPECT_EQ(csv_columns().back(), "line_round_trip_ns");
  EXPECT_EQ(csv_columns().size(), 41u);
}

TEST(BenchReport, SpeedupAgainstOneLt) {
  std::vector<json> rows;
  for (int lts : {1, 2})
    for (double t : {10.0, 12.0, 14.0})
      rows.push_back({{"lts", lts}, {"throughput_per_ms", t * lts}, {"params", {{"mutex", "m"}, {"lts", lts}}}});
  fill_speedups(rows);
  EXPECT_DOUBLE_EQ(rows[4]["speedup_vs_1"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(rows[1]["speedup_vs_1"].get<double>(), 1.0);
}

TEST(BenchPlacement, CompactFillsANodeScatterSpreads) {
  const auto t = fibersync::topology::parse("0,1|2,3/4,5|6,7");
  EXPECT_EQ(carrier_cpus("none", 4, t, 8), std::vector<int>{});
  EXPECT_EQ(carrier_cpus("compact", 4, t, 8), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(carrier_cpus("scatter", 4, t, 8), (std::vector<int>{0, 4, 1, 5}));
  // More carriers than cpus wrap around; a virtual machine larger than the
  // real one maps virtual cpu v to real cpu v mod cpus.
  EXPECT_EQ(carrier_cpus("compact", 10, t, 8)[9], 1);
  EXPECT_EQ(carrier_cpus("scatter", 3, t, 2), (std::vector<int>{0, 0, 1}));
  const auto shuffled = fibersync::topology::parse("1,3/0,2");
  EXPECT_EQ(carrier_cpus("compact", 4, shuffled, 4), (std::vector<int>{1, 3, 0, 2}));
  EXPECT_EQ(carrier_cpus("scatter", 2, shuffled, 4), (std::vector<int>{1, 0}));
}

TEST(BenchPlacement, RejectsUnknownPolicyAndBadTopology) {
  EXPECT_NO_THROW(validate_placement("machine", "none"));
  EXPECT_NO_THROW(validate_placement("2x1", "scatter"));
  EXPECT_THROW(validate_placement("machine", "diagonal"), config_error);
  EXPECT_THROW(validate_placement("2x", "none"), config_error);
  EXPECT_THROW(validate_placement("0,0", "compact"), config_error);
}
