// text_stats.hpp: the Java thesis' text-statistics task.
//
// A deterministic corpus of lines of Zipf-like words; each LT takes every
// lts-th line and counts its words into S shard tables, each under its own
// mutex; the merged counts are checked against a single-threaded count.
// Shard tables are fixed-size open-addressing tables keyed by a 64-bit word
// hash whose slots are read and written with relaxed atomics: a broken
// (non-excluding) mutex loses updates, which verification catches, but never
// corrupts memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fibersync::bench {

struct text_corpus {
  std::vector<std::string> lines;
  std::vector<std::uint64_t> word_hashes;  // expected: distinct hashes
  std::vector<std::uint64_t> word_counts;  // expected: count of word_hashes[i]
  std::uint64_t total_words = 0;
};

text_corpus make_corpus(unsigned lines, unsigned vocabulary, std::uint64_t seed);

inline std::uint64_t word_hash(std::string_view w) noexcept {  // FNV-1a, never 0
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : w) h = (h ^ c) * 1099511628211ull;
  return h | 1;
}

// One shard's table. Not thread-safe: callers hold the shard's mutex.
class shard_table {
 public:
  explicit shard_table(std::size_t capacity_pow2);
  void add(std::uint64_t key) noexcept;
  template <class F>
  void for_each(F f) const {
    for (const slot& s : slots_) {
      const std::uint64_t k = s.key.load(std::memory_order_relaxed);
      if (k != 0) f(k, s.count.load(std::memory_order_relaxed));
    }
  }

 private:
  struct slot {
    std::atomic<std::uint64_t> key{0};    // relaxed: ordering comes from the shard mutex
    std::atomic<std::uint64_t> count{0};  // same
  };
  std::vector<slot> slots_;
  std::size_t mask_;
};

// Calls f(word) for each space-separated word of line.
template <class F>
void for_each_word(std::string_view line, F f) {
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) f(line.substr(i, j - i));
    i = j;
  }
}

// Compares merged shard tables with the corpus' expected counts.
bool verify_counts(const text_corpus& corpus, const std::vector<const shard_table*>& shards, std::string* why);

}  // namespace fibersync::bench
