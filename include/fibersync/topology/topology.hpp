// topology.hpp: fibersync::topology, the machine as NUMA locks see it:
// cpus -> cache clusters -> NUMA nodes -> packages.
//
// Sources, in order of precedence (topology::current()):
//   1. the FIBERSYNC_TOPOLOGY environment variable (or topology::set_current(),
//      which the harness' --topology flag uses): a *virtual* topology, so that
//      every NUMA code path runs on a one-node machine;
//   2. hwloc (when fibersync was built with it: FIBERSYNC_WITH_HWLOC);
//   3. a flat machine: one package, one node, one cluster, all cpus.
//
// Description syntax (parse()):
//   compact   "N"        N nodes of 1 cpu
//             "NxC"      N nodes of C cpus, one cluster per node
//             "NxKxC"    N nodes of K clusters of C cpus
//   explicit  nodes separated by '/', clusters inside a node by '|', cpus by
//             ',', e.g. "0,1|2,3/4,5|6,7" (2 nodes x 2 clusters x 2 cpus).
//             Every cpu index must appear once, and the set must be 0..n-1.
// Invalid descriptions throw topology_error with a message naming the fault.
//
// A virtual topology numbers its own cpus 0..n-1; the calling LT's cpu is
// sched_getcpu() modulo n, so on a 2-core machine with "2x1" and pinned
// carriers, carrier k runs on virtual node k.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#if defined(FIBERSYNC_WITH_HWLOC)
#include <hwloc.h>
#endif

#include "fibersync/detail/carrier_local.hpp"

namespace fibersync {

struct topology_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class topology {
 public:
  struct cpu_place {
    unsigned cluster;  // global cluster index
    unsigned node;     // NUMA node index
    unsigned package;
  };

  // A flat machine of `cpus` cpus.
  static topology flat(unsigned cpus) {
    topology t;
    t.source_ = "flat";
    t.clusters_ = t.nodes_ = t.packages_ = 1;
    t.cpus_.assign(cpus == 0 ? 1 : cpus, cpu_place{0, 0, 0});
    t.describe_();
    return t;
  }

  static topology parse(std::string_view text) {
    const std::string_view desc = trim(text);
    if (desc.empty()) throw topology_error("empty topology description");
    if (desc.find_first_of("/|,") == std::string_view::npos && desc.find_first_not_of("0123456789x") == std::string_view::npos) {
      return parse_compact(desc);
    }
    return parse_explicit(desc);
  }

  static topology detect() {
#if defined(FIBERSYNC_WITH_HWLOC)
    return from_hwloc();
#else
    return flat(std::thread::hardware_concurrency());
#endif
  }

  // The topology NUMA locks use: the override if one is set, else detected.
  static const topology& current() {
    holder& h = the_holder();
    if (const topology* t = h.current.load(std::memory_order_acquire)) return *t;
    std::lock_guard<std::mutex> g(h.guard);
    if (const topology* t = h.current.load(std::memory_order_relaxed)) return *t;
    std::unique_ptr<topology> made;
    if (const char* env = std::getenv("FIBERSYNC_TOPOLOGY"); env != nullptr && *env != '\0') {
      made = std::make_unique<topology>(parse(env));  // throws topology_error on a bad value
      made->source_ = "FIBERSYNC_TOPOLOGY";
    } else {
      made = std::make_unique<topology>(detect());
    }
    h.current.store(made.get(), std::memory_order_release);
    h.keep.push_back(std::move(made));
    return *h.current.load(std::memory_order_relaxed);
  }

  // Replaces the current topology (the harness' --topology). Call before any
  // NUMA lock is constructed: locks size their queues at construction.
  static void set_current(topology t) {
    holder& h = the_holder();
    std::lock_guard<std::mutex> g(h.guard);
    h.keep.push_back(std::make_unique<topology>(std::move(t)));
    h.current.store(h.keep.back().get(), std::memory_order_release);
  }

  unsigned cpus() const noexcept { return static_cast<unsigned>(cpus_.size()); }
  unsigned clusters() const noexcept { return clusters_; }
  unsigned nodes() const noexcept { return nodes_; }
  unsigned packages() const noexcept { return packages_; }
  const cpu_place& place(unsigned cpu) const noexcept { return cpus_[cpu % cpus_.size()]; }
  unsigned node_of_cluster(unsigned cluster) const noexcept { return cluster_node_[cluster]; }
  const std::string& source() const noexcept { return source_; }
  // Canonical explicit description, e.g. "0,1|2,3/4,5|6,7".
  const std::string& description() const noexcept { return description_; }

  // The virtual cpu running the caller now. Not inlined: the answer changes
  // whenever the LT migrates (DESIGN.md section 7).
  FIBERSYNC_CARRIER_LOCAL unsigned current_cpu() const noexcept {
    const int c = ::sched_getcpu();
    return c < 0 ? 0u : static_cast<unsigned>(c) % cpus();
  }
  const cpu_place& current_place() const noexcept { return place(current_cpu()); }

 private:
  struct holder {
    std::mutex guard;
    std::atomic<const topology*> current{nullptr};
    std::vector<std::unique_ptr<topology>> keep;  // never freed: locks keep references
  };
  static holder& the_holder() {
    static holder* h = new holder{};
    return *h;
  }

  static std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
    return s;
  }

  static unsigned number(std::string_view s, std::string_view whole, const char* what) {
    s = trim(s);
    unsigned v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) {
      throw topology_error("invalid topology '" + std::string(whole) + "': '" + std::string(s) + "' is not a " + what);
    }
    return v;
  }

  static std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    for (;;) {
      const size_t at = s.find(sep, start);
      parts.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
      if (at == std::string_view::npos) return parts;
      start = at + 1;
    }
  }

  static topology parse_compact(std::string_view desc) {
    const auto parts = split(desc, 'x');
    if (parts.size() > 3) throw topology_error("invalid topology '" + std::string(desc) + "': at most NxKxC");
    std::vector<unsigned> dims;
    for (auto p : parts) {
      const unsigned v = number(p, desc, "positive count");
      if (v == 0) throw topology_error("invalid topology '" + std::string(desc) + "': counts must be positive");
      dims.push_back(v);
    }
    const unsigned nodes = dims[0];
    const unsigned clusters_per_node = dims.size() == 3 ? dims[1] : 1;
    const unsigned cpus_per_cluster = dims.size() == 1 ? 1 : dims.back();
    if (static_cast<unsigned long long>(nodes) * clusters_per_node * cpus_per_cluster > 65536) {
      throw topology_error("invalid topology '" + std::string(desc) + "': more than 65536 cpus");
    }
    topology t;
    t.source_ = "virtual";
    t.nodes_ = nodes;
    t.packages_ = 1;
    t.clusters_ = nodes * clusters_per_node;
    for (unsigned n = 0; n < nodes; ++n) {
      for (unsigned k = 0; k < clusters_per_node; ++k) {
        t.cluster_node_.push_back(n);
        for (unsigned c = 0; c < cpus_per_cluster; ++c) t.cpus_.push_back({n * clusters_per_node + k, n, 0});
      }
    }
    t.describe_();
    return t;
  }

  static topology parse_explicit(std::string_view desc) {
    topology t;
    t.source_ = "virtual";
    t.packages_ = 1;
    std::vector<int> cluster_of(65536, -1);
    std::vector<unsigned> node_of_cluster;
    unsigned max_cpu = 0, count = 0;
    const auto nodes = split(desc, '/');
    for (unsigned n = 0; n < nodes.size(); ++n) {
      if (trim(nodes[n]).empty()) throw topology_error("invalid topology '" + std::string(desc) + "': empty node");
      for (auto cluster : split(nodes[n], '|')) {
        if (trim(cluster).empty()) throw topology_error("invalid topology '" + std::string(desc) + "': empty cluster");
        const unsigned k = static_cast<unsigned>(node_of_cluster.size());
        node_of_cluster.push_back(n);
        for (auto cpu_text : split(cluster, ',')) {
          const unsigned cpu = number(cpu_text, desc, "cpu index");
          if (cpu >= cluster_of.size()) throw topology_error("invalid topology '" + std::string(desc) + "': cpu index too large");
          if (cluster_of[cpu] != -1) {
            throw topology_error("invalid topology '" + std::string(desc) + "': cpu " + std::to_string(cpu) + " appears twice");
          }
          cluster_of[cpu] = static_cast<int>(k);
          max_cpu = std::max(max_cpu, cpu);
          ++count;
        }
      }
    }
    if (count != max_cpu + 1) {
      throw topology_error("invalid topology '" + std::string(desc) + "': cpus must be numbered 0.." +
                           std::to_string(count - 1) + " without gaps");
    }
    t.nodes_ = static_cast<unsigned>(nodes.size());
    t.clusters_ = static_cast<unsigned>(node_of_cluster.size());
    t.cluster_node_ = node_of_cluster;
    for (unsigned cpu = 0; cpu < count; ++cpu) {
      const unsigned k = static_cast<unsigned>(cluster_of[cpu]);
      t.cpus_.push_back({k, node_of_cluster[k], 0});
    }
    t.describe_();
    return t;
  }

#if defined(FIBERSYNC_WITH_HWLOC)
  static topology from_hwloc() {
    hwloc_topology_t h;
    if (hwloc_topology_init(&h) != 0 || hwloc_topology_load(h) != 0) return flat(std::thread::hardware_concurrency());
    topology t;
    t.source_ = "hwloc";
    const int pus = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
    const int nodes = std::max(1, hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE));
    const int packages = std::max(1, hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PACKAGE));
    int max_os = 0;
    for (int i = 0; i < pus; ++i) max_os = std::max(max_os, static_cast<int>(hwloc_get_obj_by_type(h, HWLOC_OBJ_PU, i)->os_index));
    t.cpus_.assign(static_cast<size_t>(max_os) + 1, cpu_place{0, 0, 0});
    std::vector<int> cluster_ids;  // hwloc logical index of the L3 (or L2) cache -> our cluster index
    for (int i = 0; i < pus; ++i) {
      hwloc_obj_t pu = hwloc_get_obj_by_type(h, HWLOC_OBJ_PU, i);
      cpu_place p{0, 0, 0};
      hwloc_obj_t cache = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_L3CACHE, pu);
      if (cache == nullptr) cache = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_L2CACHE, pu);
      const int cache_id = cache != nullptr ? static_cast<int>(cache->logical_index) : 0;
      auto it = std::find(cluster_ids.begin(), cluster_ids.end(), cache_id);
      p.cluster = static_cast<unsigned>(it - cluster_ids.begin());
      if (it == cluster_ids.end()) cluster_ids.push_back(cache_id);
      for (int n = 0; n < nodes; ++n) {
        hwloc_obj_t node = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, n);
        if (node != nullptr && hwloc_bitmap_isset(node->cpuset, pu->os_index)) p.node = static_cast<unsigned>(n);
      }
      if (hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_PACKAGE, pu)) p.package = pkg->logical_index;
      t.cpus_[pu->os_index] = p;
    }
    t.nodes_ = static_cast<unsigned>(nodes);
    t.packages_ = static_cast<unsigned>(packages);
    t.clusters_ = std::max<unsigned>(1, static_cast<unsigned>(cluster_ids.size()));
    hwloc_topology_destroy(h);
    t.cluster_node_.assign(t.clusters_, 0);
    for (const auto& p : t.cpus_) t.cluster_node_[p.cluster] = p.node;
    t.describe_();
    return t;
  }
#endif

  void describe_() {
    if (cluster_node_.empty()) cluster_node_.assign(clusters_, 0);
    std::string d;
    for (unsigned n = 0; n < nodes_; ++n) {
      if (n) d += '/';
      bool first_cluster = true;
      for (unsigned k = 0; k < clusters_; ++k) {
        if (cluster_node_[k] != n) continue;
        if (!first_cluster) d += '|';
        first_cluster = false;
        bool first_cpu = true;
        for (unsigned c = 0; c < cpus_.size(); ++c) {
          if (cpus_[c].cluster != k) continue;
          if (!first_cpu) d += ',';
          first_cpu = false;
          d += std::to_string(c);
        }
      }
    }
    description_ = d;
  }

  std::vector<cpu_place> cpus_;
  std::vector<unsigned> cluster_node_;
  unsigned clusters_ = 1, nodes_ = 1, packages_ = 1;
  std::string source_, description_;
};

}  // namespace fibersync
