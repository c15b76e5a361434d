// The gauss workload: correct in every architecture and distribution, and
// the residual check catches a deliberately corrupted run.
#include <gtest/gtest.h>

#include <chrono>

#include "gauss/gauss.hpp"
#include "support/watchdog.hpp"

namespace fibersync::test {
namespace {
using namespace std::chrono_literals;

TEST(gauss, solves_in_every_architecture_and_distribution) {
  watchdog dog("gauss", 300s);
  for (auto a : {sched::arch::a0, sched::arch::a1, sched::arch::a2})
    for (auto d : {gauss::distribution::block, gauss::distribution::cyclic})
      for (unsigned lts : {1u, 7u, 64u, 300u}) {
        gauss::config c;
        c.lts = lts;
        c.arch = a;
        c.dist = d;
        c.n = 203;  // not a multiple of the tile count: ragged tiles
        const gauss::result r = gauss::run_gauss(c);
        EXPECT_TRUE(r.ok) << sched::to_string(a) << " " << gauss::to_string(d) << " lts=" << lts
                          << " residual=" << r.residual;
        EXPECT_GT(r.total_ms, 0.0);
      }
}

TEST(gauss, residual_check_fails_a_corrupted_run) {
  watchdog dog("gauss corrupt", 60s);
  gauss::config c;
  c.lts = 32;
  c.n = 128;
  c.corrupt = true;
  const gauss::result r = gauss::run_gauss(c);
  EXPECT_FALSE(r.ok);
  EXPECT_GE(r.residual, 1e-8);
}

}  // namespace
}  // namespace fibersync::test
