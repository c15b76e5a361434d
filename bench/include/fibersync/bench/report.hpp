// report.hpp: CSV and JSON result files, written atomically (temp + rename).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fibersync::bench {

// The CSV columns, in order (the fixed interface of issue 3).
const std::vector<std::string>& csv_columns();

// One CSV line for a run object (null / missing = empty cell).
std::string csv_row(const nlohmann::json& run);
std::string csv_text(const std::vector<nlohmann::json>& runs);

// Writes text to path via path.tmp + rename. Throws std::runtime_error.
void write_atomically(const std::string& path, const std::string& text);

// Machine and build facts for the JSON "context" block.
nlohmann::json machine_context(const std::string& command);

// Fills speedup_vs_1 of each run from the median throughput of the matching
// 1-LT runs (same scenario fields except lts and repetition).
void fill_speedups(std::vector<nlohmann::json>& runs);

// Median and spread per configuration (all repetitions of one sweep point).
nlohmann::json summarize(const std::vector<nlohmann::json>& runs);

}  // namespace fibersync::bench
