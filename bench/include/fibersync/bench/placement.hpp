// placement.hpp: where a run's carriers sit, and on which topology its NUMA
// locks see them.
//
// Scenario fields (sweepable; also --topology and --pinning):
//   topology  "machine" (hwloc, or the FIBERSYNC_TOPOLOGY environment variable
//             when set) or a description for fibersync::topology::parse(),
//             e.g. "2x1": a virtual topology, so NUMA paths run on any machine.
//   pinning   none    carriers float (the kernel places them);
//             compact carrier k on the k-th cpu in (node, cluster, cpu) order:
//                     fills a node before the next;
//             scatter carrier k on node k mod nodes: spreads over the nodes.
// A virtual topology numbers its cpus 0..n-1 and maps the real cpu p to
// virtual cpu p mod n (topology.hpp), so virtual cpu v is pinned as real cpu v
// (or v mod the machine's cpus when the virtual machine is larger).
#pragma once

#include <string>
#include <vector>

#include "fibersync/topology/topology.hpp"

namespace fibersync::bench {

// Throws config_error for an unknown policy or an invalid description.
void validate_placement(const std::string& topology_description, const std::string& pinning);

// In the run's child, before any mutex is built: installs the run's topology
// (no-op for "machine") and returns the one NUMA locks will use.
const topology& install_topology(const std::string& topology_description);

// cpus[k] for carrier k (empty for "none"), real cpu ids.
std::vector<int> carrier_cpus(const std::string& pinning, unsigned carriers, const topology& t, unsigned hardware_cpus);

}  // namespace fibersync::bench
