// gauss.hpp: block-parallel Gaussian elimination on fibersync::sched, the
// workload that compares the event architectures A0/A1/A2 (seed 002).
//
// The n x n system is diagonally dominant and random (seeded), so
// elimination needs no pivoting. The matrix is cut into nb x nb tiles
// (nb = ceil(sqrt(lts)) unless given, so there are at least as many tiles as
// user threads) and the tiles are dealt to the user threads either in
// contiguous runs of the row-major tile order (`block`) or round-robin
// (`cyclic`). Every tile that becomes final (diagonal LU, row/column panel,
// right-hand-side segment, back-substitution partial product, solution
// segment) sets one event of the chosen architecture; every consumer waits
// on it. Each uthread runs its tasks in the global order (step, phase), so
// the earliest unfinished task is always runnable: no deadlock.
//
//   forward:  for K: LU(K,K) -> row panels (K,J), column panels (I,K)
//             -> trailing updates (I,J) -= (I,K)(K,J); rhs y_K = L_KK^-1(...)
//   back:     partial p_IJ = U_IJ x_J (J>I, waits x_J); x_I = U_II^-1(y_I - sum p_IJ)
// Forward and back are separated by a barrier made of one event and timed
// separately. The result is checked by ||Ax-b||_2 / ||b||_2 < 1e-8.
#pragma once

#include <cstdint>
#include <string>

#include <fibersync/sched/event.hpp>

namespace fibersync::gauss {

enum class distribution { block, cyclic };

struct config {
  unsigned lts = 32;               // user threads
  unsigned carriers = 2;
  bool pin = false;                // pin carrier k to CPU k
  sched::arch arch = sched::arch::a2;
  distribution dist = distribution::block;
  unsigned n = 1024;               // matrix order
  unsigned tiles_per_dim = 0;      // 0: ceil(sqrt(lts)), at most n
  std::uint64_t seed = 42;
  bool corrupt = false;            // test hook: perturb one entry of the factor mid-run
};

struct result {
  double forward_ms = 0;
  double back_ms = 0;
  double total_ms = 0;
  double residual = 0;   // ||Ax-b||_2 / ||b||_2
  bool ok = false;       // residual < 1e-8
  unsigned tiles_per_dim = 0;
};

result run_gauss(const config& c);

const char* to_string(distribution d) noexcept;
bool parse_distribution(const std::string& s, distribution& out) noexcept;

}  // namespace fibersync::gauss
