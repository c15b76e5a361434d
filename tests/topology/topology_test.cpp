#include <fibersync/topology/topology.hpp>
#include <gtest/gtest.h>

namespace fibersync::test {
namespace {

TEST(topology, compact_forms) {
  const topology a = topology::parse("2x1");
  EXPECT_EQ(a.nodes(), 2u);
  EXPECT_EQ(a.cpus(), 2u);
  EXPECT_EQ(a.place(1).node, 1u);
  EXPECT_EQ(a.description(), "0/1");
  const topology b = topology::parse("2x2x3");
  EXPECT_EQ(b.nodes(), 2u);
  EXPECT_EQ(b.clusters(), 4u);
  EXPECT_EQ(b.cpus(), 12u);
  EXPECT_EQ(b.place(7).cluster, 2u);
  EXPECT_EQ(b.place(7).node, 1u);
  EXPECT_EQ(b.node_of_cluster(3), 1u);
  EXPECT_EQ(topology::parse("3").nodes(), 3u);
}

TEST(topology, explicit_form_round_trips) {
  const topology t = topology::parse("0,1|2,3/4,5|6,7");
  EXPECT_EQ(t.nodes(), 2u);
  EXPECT_EQ(t.clusters(), 4u);
  EXPECT_EQ(t.place(5).node, 1u);
  EXPECT_EQ(t.place(5).cluster, 2u);
  EXPECT_EQ(t.description(), "0,1|2,3/4,5|6,7");
  EXPECT_EQ(topology::parse(t.description()).description(), t.description());
  const topology shuffled = topology::parse("1,3/0,2");
  EXPECT_EQ(shuffled.place(0).node, 1u);
  EXPECT_EQ(shuffled.place(3).node, 0u);
}

TEST(topology, invalid_descriptions_are_rejected_with_a_reason) {
  for (const char* bad : {"", "0x2", "2x", "x2", "2x2x2x2", "a", "0,1/1", "0,2", "0//1", "0||1", "1,-1", "99999999"}) {
    try {
      topology::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const topology_error& e) {
      EXPECT_NE(std::string(e.what()).find("topology"), std::string::npos) << e.what();
    }
  }
}

TEST(topology, current_follows_override_and_maps_every_cpu) {
  topology::set_current(topology::parse("2x1"));
  const topology& t = topology::current();
  EXPECT_EQ(t.nodes(), 2u);
  EXPECT_LT(t.current_place().node, 2u);
  const topology flat = topology::flat(4);
  EXPECT_EQ(flat.nodes(), 1u);
  EXPECT_EQ(flat.place(3).node, 0u);
}

TEST(topology, detect_finds_at_least_one_cpu) {
  const topology t = topology::detect();
  EXPECT_GE(t.cpus(), 1u);
  EXPECT_GE(t.nodes(), 1u);
  EXPECT_FALSE(t.source().empty());
}

}  // namespace
}  // namespace fibersync::test
