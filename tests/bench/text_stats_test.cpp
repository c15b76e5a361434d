// text_stats verification: passes with real mutexes, fails with a test-only
// broken (non-locking) mutex registered here, never in the product.
#include <gtest/gtest.h>
#include <sched.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "fibersync/bench/cli.hpp"
#include "fibersync/bench/driver.hpp"
#include "fibersync/bench/mutex_list.hpp"
#include "fibersync/bench/text_stats.hpp"
#include <nlohmann/json.hpp>
#include "fibersync/runtime/os_thread_executor.hpp"

using namespace fibersync::bench;

namespace {
struct broken_mutex {  // excludes nobody
  void lock() {}
  bool try_lock() { return true; }
  void unlock() {}
};

struct test_traits {
  using runtime = fibersync::os_thread_runtime;
  static constexpr const char* name = "test_threads";
  static constexpr const char* description = "test-only: OS threads with a broken mutex";
  static void run_lts(const fibersync::executor_options& o, unsigned lts, const fibersync::lt_body& body) {
    fibersync::run_lts_on_os_threads(o, lts, body);
  }
  static void spawn_join(unsigned, std::uint64_t) {}
  static void yield() { ::sched_yield(); }
  static unsigned carrier() { return 0; }
};

int run_cli(const std::string& mutex, const std::string& out, const char* lts = "2", const char* shards = "1") {
  auto d = std::make_unique<basic_driver<test_traits>>();
  add_fibersync_mutexes(*d);
  d->add_mutex<broken_mutex>("broken", false);
  d->add_mutex<std::mutex>("library", false);
  registry::instance().add(std::move(d));
  std::vector<std::string> args = {"fibersync-bench", "--preset", "text-stats", "--runtime", "test_threads",
                                   "--mutex", mutex, "--lts", lts, "--reps", "1", "--set", std::string("text_shards=") + shards,
                                   "--set", "text_lines=100000", "--set", "yield_after_unlock=false", "--out", out};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return run_main(static_cast<int>(argv.size()), argv.data());
}
}  // namespace

TEST(BenchTextStats, CorpusIsDeterministicAndConsistent) {
  const text_corpus a = make_corpus(1000, 200, 7), b = make_corpus(1000, 200, 7);
  EXPECT_EQ(a.lines, b.lines);
  std::uint64_t n = 0;
  for (auto c : a.word_counts) n += c;
  EXPECT_EQ(n, a.total_words);
  shard_table t(1024);
  for (const auto& l : a.lines) for_each_word(l, [&](std::string_view w) { t.add(word_hash(w)); });
  std::string why;
  EXPECT_TRUE(verify_counts(a, {&t}, &why)) << why;
  t.add(word_hash("zzzzzzzzzzzzzz"));
  EXPECT_FALSE(verify_counts(a, {&t}, &why));
}

TEST(BenchTextStats, RealMutexVerifies) {
  EXPECT_EQ(run_cli("library", std::string(FIBERSYNC_BENCH_TEST_DIR) + "/ok"), 0);
  EXPECT_EQ(run_cli("mcs", std::string(FIBERSYNC_BENCH_TEST_DIR) + "/ok_mcs"), 0);
}

TEST(BenchTextStats, BrokenMutexFailsVerification) {
  // Lost updates need two LTs inside a shard at once; on a loaded machine one
  // attempt may happen to run them one after the other, so allow a few.
  int rc = 0;
  for (int attempt = 0; attempt < 10 && rc != 1; ++attempt)
    rc = run_cli("broken", std::string(FIBERSYNC_BENCH_TEST_DIR) + "/broken", "8");
  EXPECT_EQ(rc, 1);
}

TEST(BenchTextStats, BypassIsCountedPerShard) {
  // Each shard numbers its own acquisitions. With one counter for all shards
  // two holders of different shards raced on it: numbers went backwards and
  // bypass_max read 2^64 - 1.
  const std::string out = std::string(FIBERSYNC_BENCH_TEST_DIR) + "/sharded";
  ASSERT_EQ(run_cli("ttas", out, "4", "16"), 0);
  std::ifstream in(out + ".json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc["runs"].size(), 1u);
  const nlohmann::json& run = doc["runs"][0];
  const auto acquisitions = run["acquisitions"].get<std::uint64_t>();
  std::uint64_t sum = 0;
  for (const auto& n : run["per_lt_acquisitions"]) sum += n.get<std::uint64_t>();
  EXPECT_EQ(sum, acquisitions);
  ASSERT_TRUE(run["bypass_max"].is_number());
  // Between two of one LT's acquisitions of a shard, the others made at most
  // all of theirs.
  EXPECT_LT(run["bypass_max"].get<double>(), static_cast<double>(acquisitions));
  EXPECT_LT(run["bypass_mean"].get<double>(), static_cast<double>(acquisitions) / 16);
  EXPECT_TRUE(run["verified"].get<bool>());
}
