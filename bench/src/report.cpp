// report.cpp: CSV/JSON output, machine context, speed-ups and summaries.
#include "fibersync/bench/report.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "fibersync/bench/metrics.hpp"
#include "fibersync/topology/topology.hpp"

#ifndef FIBERSYNC_BENCH_BUILD_TYPE
#define FIBERSYNC_BENCH_BUILD_TYPE "unknown"
#endif

namespace fibersync::bench {

const char* build_git_revision() noexcept;  // generated at build time (cmake/git_revision.cmake)

using nlohmann::json;

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> cols = {
      "scenario", "runtime", "mutex", "lts", "carriers", "pinning", "topology", "repetition", "duration_ms",
      "acquisitions", "throughput_per_ms", "jain_index", "bypass_mean", "bypass_p99", "bypass_max",
      "latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_samples", "latency_migrated",
      "yields_per_acq", "suspends_per_acq", "migrations_per_acq", "same_node_handover", "same_cluster_handover",
      "remote_handovers_per_1000", "cpu_time_ms", "cpu_utilization", "hold_fraction", "lock_rate_per_ms",
      "speedup_vs_1", "bound_per_ms", "bound_fraction", "arch", "distribution", "matrix_n", "forward_ms",
      "back_ms", "total_ms", "residual", "line_round_trip_ns"};
  return cols;
}

namespace {
std::string cell(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d)) return "";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", d);
    return buf;
  }
  return v.dump();
}
}  // namespace

std::string csv_row(const json& run) {
  std::string line;
  bool first = true;
  for (const auto& c : csv_columns()) {
    if (!first) line += ',';
    first = false;
    if (run.contains(c)) line += cell(run[c]);
  }
  return line;
}

std::string csv_text(const std::vector<json>& runs) {
  std::string out;
  for (std::size_t i = 0; i < csv_columns().size(); ++i) out += (i ? "," : "") + csv_columns()[i];
  out += '\n';
  for (const json& r : runs) out += csv_row(r) + '\n';
  return out;
}

void write_atomically(const std::string& path, const std::string& text) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + ec.message());
  }
}

namespace {
std::string read_first(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      auto c = line.find(':');
      if (c != std::string::npos) {
        auto v = line.substr(c + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        return v;
      }
    }
  }
  return "";
}
}  // namespace

json machine_context(const std::string& command) {
  json c;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  c["host"] = host;
  std::string model = read_first("/proc/cpuinfo", "model name");
  if (model.empty()) model = read_first("/proc/cpuinfo", "CPU part");
  c["cpu_model"] = model;
  c["cores"] = std::thread::hardware_concurrency();
  unsigned nodes = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
    const auto n = e.path().filename().string();
    if (n.rfind("node", 0) == 0 && n.size() > 4 && std::isdigit(static_cast<unsigned char>(n[4]))) ++nodes;
  }
  c["numa_nodes"] = nodes ? nodes : 1;
  utsname u{};
  ::uname(&u);
  c["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  c["compiler"] = std::string("GCC ") + __VERSION__;
  c["build_type"] = FIBERSYNC_BENCH_BUILD_TYPE;
  c["git_revision"] = build_git_revision();
  c["command"] = command;
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&t));
  c["date"] = buf;
  // What "machine" means in the topology column: hwloc's view, or the
  // FIBERSYNC_TOPOLOGY override when it is set.
  const topology& topo = topology::current();
  c["topology"] = {{"source", topo.source()}, {"description", topo.description()}, {"nodes", topo.nodes()},
                   {"clusters", topo.clusters()}, {"cpus", topo.cpus()}};
  std::string gov;
  std::ifstream g("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  if (g >> gov) c["frequency_governor"] = gov;
  return c;
}

namespace {
// The sweep point of a run: its parameters without lts and repetition.
std::string point_key(const json& r, bool drop_lts) {
  json p = r.value("params", json::object());
  p.erase("reps");
  if (drop_lts) p.erase("lts");
  return p.dump();
}
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
}  // namespace

void fill_speedups(std::vector<json>& runs) {
  std::map<std::string, std::vector<double>> one;
  for (const json& r : runs)
    if (r.value("lts", 0u) == 1 && r["throughput_per_ms"].is_number())
      one[point_key(r, true)].push_back(r["throughput_per_ms"].get<double>());
  for (json& r : runs) {
    auto it = one.find(point_key(r, true));
    const double base = it == one.end() ? 0 : median(it->second);
    r["speedup_vs_1"] = base > 0 && r["throughput_per_ms"].is_number()
                            ? json(r["throughput_per_ms"].get<double>() / base)
                            : json(nullptr);
  }
}

json summarize(const std::vector<json>& runs) {
  std::map<std::string, std::vector<const json*>> groups;
  std::vector<std::string> order;
  for (const json& r : runs) {
    const std::string k = point_key(r, false);
    if (!groups.count(k)) order.push_back(k);
    groups[k].push_back(&r);
  }
  json out = json::array();
  for (const auto& k : order) {
    const auto& g = groups[k];
    std::vector<double> t;
    for (const json* r : g)
      if ((*r)["throughput_per_ms"].is_number()) t.push_back((*r)["throughput_per_ms"].get<double>());
    json s = {{"runtime", (*g[0])["runtime"]}, {"mutex", (*g[0])["mutex"]}, {"lts", (*g[0])["lts"]},
              {"carriers", (*g[0])["carriers"]}, {"repetitions", g.size()}, {"params", (*g[0])["params"]}};
    if (!t.empty()) {
      s["throughput_median"] = median(t);
      s["throughput_min"] = *std::min_element(t.begin(), t.end());
      s["throughput_max"] = *std::max_element(t.begin(), t.end());
      if ((*g[0])["bound_per_ms"].is_number() && (*g[0])["bound_per_ms"].get<double>() > 0)
        s["bound_fraction_median"] = median(t) / (*g[0])["bound_per_ms"].get<double>();
    }
    // gauss: phase times instead of a throughput.
    for (const char* key : {"forward_ms", "back_ms", "total_ms"}) {
      std::vector<double> v;
      for (const json* r : g)
        if (r->contains(key) && (*r)[key].is_number()) v.push_back((*r)[key].get<double>());
      if (!v.empty() && (*g[0]).value("params", json::object()).value("workload", "") == "gauss")
        s[std::string(key) + "_median"] = median(v);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace fibersync::bench
