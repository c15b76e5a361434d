// fibersync-gauss: sweep the gauss workload over user threads, event
// architectures and block distributions; one CSV row per run in the
// harness's format. Exits 1 if any run's relative residual is >= 1e-8.
//
//   fibersync-gauss [--lts 32,64,...] [--arch A0,A1,A2] [--dist block,cyclic]
//                   [--n 1024] [--carriers 2] [--reps 5] [--tiles T] [--pin]
//                   [--seed S] [--corrupt] [--csv FILE] [--no-header]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "gauss/gauss.hpp"

namespace {

const char* k_header =
    "scenario,runtime,mutex,lts,carriers,pinning,topology,repetition,duration_ms,acquisitions,throughput_per_ms,"
    "jain_index,bypass_mean,bypass_p99,bypass_max,latency_p50_ns,latency_p90_ns,latency_p99_ns,latency_samples,"
    "latency_migrated,yields_per_acq,suspends_per_acq,migrations_per_acq,same_node_handover,same_cluster_handover,"
    "remote_handovers_per_1000,cpu_time_ms,cpu_utilization,hold_fraction,lock_rate_per_ms,speedup_vs_1,bound_per_ms,"
    "bound_fraction,arch,distribution,matrix_n,forward_ms,back_ms,total_ms,residual";

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) if (!item.empty()) out.push_back(item);
  return out;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "fibersync-gauss: %s\n", why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fibersync;
  std::vector<unsigned> lts{32, 64, 128, 256, 496, 992, 1984, 3968, 7936};
  std::vector<sched::arch> archs{sched::arch::a0, sched::arch::a1, sched::arch::a2};
  std::vector<gauss::distribution> dists{gauss::distribution::block, gauss::distribution::cyclic};
  gauss::config base;
  unsigned reps = 1;
  bool header = true;
  std::FILE* out = stdout;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value for " + a).c_str());
      return argv[++i];
    };
    if (a == "--lts") {
      lts.clear();
      for (auto& s : split(val())) lts.push_back(unsigned(std::stoul(s)));
    } else if (a == "--arch") {
      archs.clear();
      for (auto& s : split(val())) {
        sched::arch x;
        if (!sched::parse_arch(s, x)) usage("bad --arch");
        archs.push_back(x);
      }
    } else if (a == "--dist") {
      dists.clear();
      for (auto& s : split(val())) {
        gauss::distribution d;
        if (!gauss::parse_distribution(s, d)) usage("bad --dist");
        dists.push_back(d);
      }
    } else if (a == "--n") base.n = unsigned(std::stoul(val()));
    else if (a == "--carriers") base.carriers = unsigned(std::stoul(val()));
    else if (a == "--reps") reps = unsigned(std::stoul(val()));
    else if (a == "--tiles") base.tiles_per_dim = unsigned(std::stoul(val()));
    else if (a == "--seed") base.seed = std::stoull(val());
    else if (a == "--pin") base.pin = true;
    else if (a == "--corrupt") base.corrupt = true;
    else if (a == "--no-header") header = false;
    else if (a == "--csv") {
      out = std::fopen(val().c_str(), "w");
      if (out == nullptr) usage("cannot open --csv file");
    } else if (a == "--help" || a == "-h") {
      std::puts("fibersync-gauss [--lts L,..] [--arch A0,A1,A2] [--dist block,cyclic] [--n N] [--carriers C]\n"
                "                [--reps R] [--tiles T] [--pin] [--seed S] [--corrupt] [--csv FILE] [--no-header]");
      return 0;
    } else {
      usage(("unknown argument " + a).c_str());
    }
  }
  if (header) std::fprintf(out, "%s\n", k_header);
  int status = 0;
  for (unsigned l : lts)
    for (auto d : dists)
      for (unsigned rep = 0; rep < reps; ++rep)
        for (auto ar : archs) {  // architectures interleaved: drift hits all alike
          gauss::config c = base;
          c.lts = l;
          c.arch = ar;
          c.dist = d;
          gauss::result r;
          try {
            r = gauss::run_gauss(c);
          } catch (const std::exception& e) {
            std::fprintf(stderr, "fibersync-gauss: error: %s\n", e.what());
            return 1;
          }
          std::fprintf(out, "gauss,native,,%u,%u,%s,,%u,%.3f,,,,,,,,,,,,,,,,,,,,,,,,,%s,%s,%u,%.3f,%.3f,%.3f,%.3e\n", l,
                       c.carriers, c.pin ? "compact" : "none", rep, r.total_ms, std::string(sched::to_string(ar)).c_str(),
                       gauss::to_string(d), c.n, r.forward_ms, r.back_ms, r.total_ms, r.residual);
          std::fflush(out);
          if (!r.ok) {
            std::fprintf(stderr, "fibersync-gauss: residual %.3e >= 1e-8 (lts=%u arch=%s dist=%s)\n", r.residual, l,
                         std::string(sched::to_string(ar)).c_str(), gauss::to_string(d));
            status = 1;
          }
        }
  if (out != stdout) std::fclose(out);
  return status;
}
