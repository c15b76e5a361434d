// placement.cpp: topology installation and carrier pinning policies.
#include "fibersync/bench/placement.hpp"

#include <algorithm>
#include <numeric>

#include "fibersync/bench/scenario.hpp"

namespace fibersync::bench {

void validate_placement(const std::string& topology_description, const std::string& pinning) {
  if (pinning != "none" && pinning != "compact" && pinning != "scatter")
    throw config_error("unknown pinning '" + pinning + "' (known: none, compact, scatter)");
  if (topology_description == "machine") return;
  try {
    topology::parse(topology_description);
  } catch (const topology_error& e) {
    throw config_error(std::string("topology: ") + e.what());
  }
}

const topology& install_topology(const std::string& topology_description) {
  if (topology_description != "machine") topology::set_current(topology::parse(topology_description));
  return topology::current();
}

std::vector<int> carrier_cpus(const std::string& pinning, unsigned carriers, const topology& t, unsigned hardware_cpus) {
  if (pinning == "none" || carriers == 0) return {};
  std::vector<unsigned> order(t.cpus());
  std::iota(order.begin(), order.end(), 0u);
  auto key = [&](unsigned c) { return std::make_tuple(t.place(c).node, t.place(c).cluster, c); };
  std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) { return key(a) < key(b); });
  if (pinning == "scatter") {
    // Deal the node-ordered list out round robin: node 0's first cpu, node
    // 1's first cpu, ..., node 0's second cpu, ...
    std::vector<std::vector<unsigned>> by_node(t.nodes());
    for (unsigned c : order) by_node[t.place(c).node].push_back(c);
    order.clear();
    for (std::size_t i = 0; order.size() < t.cpus(); ++i)
      for (const auto& cpus : by_node)
        if (i < cpus.size()) order.push_back(cpus[i]);
  }
  const unsigned hw = std::max(1u, hardware_cpus);
  std::vector<int> cpus;
  for (unsigned k = 0; k < carriers; ++k) cpus.push_back(static_cast<int>(order[k % order.size()] % hw));
  return cpus;
}

}  // namespace fibersync::bench
