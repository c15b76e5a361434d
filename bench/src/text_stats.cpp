// text_stats.cpp: corpus generation and verification for the text_stats workload.
#include "fibersync/bench/text_stats.hpp"

#include <cmath>
#include <random>
#include <unordered_map>

namespace fibersync::bench {

text_corpus make_corpus(unsigned lines, unsigned vocabulary, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Vocabulary: distinct lowercase words of 2..10 letters.
  std::vector<std::string> words;
  std::unordered_map<std::uint64_t, std::size_t> seen;
  while (words.size() < vocabulary) {
    std::string w(2 + rng() % 9, 'a');
    for (char& c : w) c = static_cast<char>('a' + rng() % 26);
    if (seen.emplace(word_hash(w), words.size()).second) words.push_back(std::move(w));
  }
  // Zipf-like ranks: P(rank r) ~ 1 / r.
  std::vector<double> weights(vocabulary);
  for (unsigned r = 0; r < vocabulary; ++r) weights[r] = 1.0 / (r + 1);
  std::discrete_distribution<unsigned> pick(weights.begin(), weights.end());
  text_corpus c;
  c.lines.reserve(lines);
  std::vector<std::uint64_t> counts(vocabulary, 0);
  for (unsigned i = 0; i < lines; ++i) {
    const unsigned n = 4 + static_cast<unsigned>(rng() % 13);
    std::string line;
    for (unsigned j = 0; j < n; ++j) {
      const unsigned r = pick(rng);
      if (j) line += ' ';
      line += words[r];
      ++counts[r];
    }
    c.total_words += n;
    c.lines.push_back(std::move(line));
  }
  for (unsigned r = 0; r < vocabulary; ++r) {
    if (counts[r] == 0) continue;
    c.word_hashes.push_back(word_hash(words[r]));
    c.word_counts.push_back(counts[r]);
  }
  return c;
}

shard_table::shard_table(std::size_t capacity_pow2) : slots_(capacity_pow2), mask_(capacity_pow2 - 1) {}

void shard_table::add(std::uint64_t key) noexcept {
  std::size_t i = static_cast<std::size_t>(key) & mask_;
  for (std::size_t probes = 0; probes <= mask_; ++probes, i = (i + 1) & mask_) {
    slot& s = slots_[i];
    const std::uint64_t k = s.key.load(std::memory_order_relaxed);
    if (k == key || k == 0) {
      if (k == 0) s.key.store(key, std::memory_order_relaxed);
      s.count.store(s.count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return;
    }
  }
  // Full (only reachable with a broken mutex): the word is lost; verification reports it.
}

bool verify_counts(const text_corpus& corpus, const std::vector<const shard_table*>& shards, std::string* why) {
  std::unordered_map<std::uint64_t, std::uint64_t> got;
  for (const shard_table* t : shards) t->for_each([&](std::uint64_t k, std::uint64_t n) { got[k] += n; });
  std::uint64_t total = 0;
  for (auto& [k, n] : got) total += n;
  if (got.size() != corpus.word_hashes.size() || total != corpus.total_words) {
    if (why)
      *why = "counted " + std::to_string(total) + " words (" + std::to_string(got.size()) + " distinct), expected " +
             std::to_string(corpus.total_words) + " (" + std::to_string(corpus.word_hashes.size()) + " distinct)";
    return false;
  }
  for (std::size_t i = 0; i < corpus.word_hashes.size(); ++i) {
    auto it = got.find(corpus.word_hashes[i]);
    if (it == got.end() || it->second != corpus.word_counts[i]) {
      if (why) *why = "count mismatch for a word";
      return false;
    }
  }
  return true;
}

}  // namespace fibersync::bench
