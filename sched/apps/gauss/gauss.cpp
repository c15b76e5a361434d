// gauss.cpp: run_gauss(), see gauss.hpp for the algorithm and the task order.
#include "gauss/gauss.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include <sys/resource.h>

#include <string>

#include <fibersync/sched/scheduler.hpp>

namespace fibersync::gauss {

const char* to_string(distribution d) noexcept { return d == distribution::block ? "block" : "cyclic"; }

bool parse_distribution(const std::string& s, distribution& out) noexcept {
  if (s == "block") { out = distribution::block; return true; }
  if (s == "cyclic") { out = distribution::cyclic; return true; }
  return false;
}

namespace {

using clock_type = std::chrono::steady_clock;

struct problem {
  unsigned n = 0, nb = 0, lts = 0;
  distribution dist = distribution::block;
  std::vector<double> a, a0, b0, y, x, partial;  // partial[J*n + i]: U_IJ x_J for row i
  std::vector<unsigned> bounds;                   // tile I covers rows [bounds[I], bounds[I+1])
  std::vector<std::unique_ptr<sched::event>> done, pdone, yready, xready;

  double& at(unsigned i, unsigned j) { return a[std::size_t(i) * n + j]; }
  unsigned lo(unsigned t) const { return bounds[t]; }
  unsigned hi(unsigned t) const { return bounds[t + 1]; }
  unsigned owner(unsigned I, unsigned J) const {
    const std::size_t q = std::size_t(I) * nb + J, tiles = std::size_t(nb) * nb;
    return dist == distribution::block ? unsigned(q * lts / tiles) : unsigned(q % lts);
  }

  void lu(unsigned K) {
    for (unsigned k = lo(K); k < hi(K); ++k) {
      const double piv = at(k, k);
      for (unsigned i = k + 1; i < hi(K); ++i) {
        const double l = (at(i, k) /= piv);
        for (unsigned j = k + 1; j < hi(K); ++j) at(i, j) -= l * at(k, j);
      }
    }
  }
  void row_panel(unsigned K, unsigned J) {  // A_KJ = L_KK^-1 A_KJ
    for (unsigned k = lo(K); k < hi(K); ++k)
      for (unsigned i = k + 1; i < hi(K); ++i) {
        const double l = at(i, k);
        for (unsigned j = lo(J); j < hi(J); ++j) at(i, j) -= l * at(k, j);
      }
  }
  void col_panel(unsigned I, unsigned K) {  // A_IK = A_IK U_KK^-1
    for (unsigned k = lo(K); k < hi(K); ++k) {
      const double piv = at(k, k);
      for (unsigned i = lo(I); i < hi(I); ++i) {
        const double l = (at(i, k) /= piv);
        for (unsigned j = k + 1; j < hi(K); ++j) at(i, j) -= l * at(k, j);
      }
    }
  }
  void update(unsigned I, unsigned J, unsigned K) {  // A_IJ -= A_IK A_KJ
    for (unsigned i = lo(I); i < hi(I); ++i)
      for (unsigned k = lo(K); k < hi(K); ++k) {
        const double l = at(i, k);
        double* ai = &a[std::size_t(i) * n];
        const double* ak = &a[std::size_t(k) * n];
        for (unsigned j = lo(J); j < hi(J); ++j) ai[j] -= l * ak[j];
      }
  }
};

// Tiles owned by thread `me`, in row-major order.
std::vector<std::pair<unsigned, unsigned>> owned(const problem& p, unsigned me) {
  std::vector<std::pair<unsigned, unsigned>> v;
  const std::size_t tiles = std::size_t(p.nb) * p.nb;
  if (p.dist == distribution::block) {
    // owner(q) = q * lts / tiles: q in [ceil(me*tiles/lts), ceil((me+1)*tiles/lts))
    const std::size_t q0 = (std::size_t(me) * tiles + p.lts - 1) / p.lts;
    const std::size_t q1 = (std::size_t(me + 1) * tiles + p.lts - 1) / p.lts;
    for (std::size_t q = q0; q < q1 && q < tiles; ++q) v.emplace_back(unsigned(q / p.nb), unsigned(q % p.nb));
  } else {
    for (std::size_t q = me; q < tiles; q += p.lts) v.emplace_back(unsigned(q / p.nb), unsigned(q % p.nb));
  }
  return v;
}

void forward(problem& p, unsigned me, const std::vector<std::pair<unsigned, unsigned>>& mine) {
  const unsigned nb = p.nb;
  for (unsigned K = 0; K < nb; ++K) {
    const std::size_t kk = std::size_t(K) * nb + K;
    bool diag = false;
    for (auto [I, J] : mine) {  // phase 0: all updates of (K,K) are ours and done
      if (I == K && J == K) {
        diag = true;
        p.lu(K);
        p.done[kk]->set();
      }
    }
    for (auto [I, J] : mine) {  // phase 1: panels of step K
      if (std::min(I, J) != K || I == J) continue;
      p.done[kk]->wait();
      if (I == K) p.row_panel(K, J); else p.col_panel(I, K);
      p.done[std::size_t(I) * nb + J]->set();
    }
    for (auto [I, J] : mine) {  // phase 2: trailing updates
      if (std::min(I, J) <= K) continue;
      p.done[std::size_t(I) * nb + K]->wait();
      p.done[std::size_t(K) * nb + J]->wait();
      p.update(I, J, K);
    }
    if (diag) {  // phase 3: y_K = L_KK^-1 (b_K - sum_L L_KL y_L)
      for (unsigned L = 0; L < K; ++L) {
        p.yready[L]->wait();
        p.done[std::size_t(K) * nb + L]->wait();
        for (unsigned i = p.lo(K); i < p.hi(K); ++i) {
          double s = 0;
          for (unsigned j = p.lo(L); j < p.hi(L); ++j) s += p.at(i, j) * p.y[j];
          p.y[i] -= s;
        }
      }
      for (unsigned i = p.lo(K); i < p.hi(K); ++i)
        for (unsigned j = p.lo(K); j < i; ++j) p.y[i] -= p.at(i, j) * p.y[j];
      p.yready[K]->set();
    }
  }
  (void)me;
}

// The back-substitution tasks of one thread, in the global order: step s
// handles column J = nb-1-s, the solve of x_J (diagonal tile) before the
// partial products U_IJ x_J (tiles above the diagonal). Tiles below the
// diagonal have no back-substitution task. Built once, before the timed
// phases, so a thread wakes only for work it has (a scan of every step per
// thread would cost the same as the synchronisation being measured).
struct back_task {
  unsigned I, J;
};
std::vector<back_task> back_tasks(const std::vector<std::pair<unsigned, unsigned>>& mine) {
  std::vector<back_task> v;
  for (auto [I, J] : mine)
    if (I <= J) v.push_back({I, J});
  std::sort(v.begin(), v.end(), [](const back_task& a, const back_task& b) {
    if (a.J != b.J) return a.J > b.J;  // earlier step first
    if ((a.I == a.J) != (b.I == b.J)) return a.I == a.J;  // within a step: the solve first
    return a.I < b.I;
  });
  return v;
}

void back(problem& p, const std::vector<back_task>& tasks) {
  const unsigned nb = p.nb, n = p.n;
  for (const auto [I, J] : tasks) {
    if (I == J) {  // x_J = U_JJ^-1 (y_J - sum_L p_JL)
      std::vector<double> r(p.y.begin() + p.lo(J), p.y.begin() + p.hi(J));
      for (unsigned L = J + 1; L < nb; ++L) {
        p.pdone[std::size_t(J) * nb + L]->wait();
        for (unsigned i = p.lo(J); i < p.hi(J); ++i) r[i - p.lo(J)] -= p.partial[std::size_t(L) * n + i];
      }
      for (unsigned i = p.hi(J); i-- > p.lo(J);) {
        double v = r[i - p.lo(J)];
        for (unsigned j = i + 1; j < p.hi(J); ++j) v -= p.at(i, j) * p.x[j];
        p.x[i] = v / p.at(i, i);
      }
      p.xready[J]->set();
    } else {  // partial product p_IJ = U_IJ x_J
      p.xready[J]->wait();
      for (unsigned i = p.lo(I); i < p.hi(I); ++i) {
        double v = 0;
        for (unsigned j = p.lo(J); j < p.hi(J); ++j) v += p.at(i, j) * p.x[j];
        p.partial[std::size_t(J) * n + i] = v;
      }
      p.pdone[std::size_t(I) * nb + J]->set();
    }
  }
}

double ms_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

result run_gauss(const config& c) {
  if (c.lts == 0 || c.n == 0 || c.carriers == 0) throw std::invalid_argument("gauss: lts, n and carriers must be positive");
  problem p;
  p.n = c.n;
  p.lts = c.lts;
  p.dist = c.dist;
  p.nb = c.tiles_per_dim != 0 ? c.tiles_per_dim : unsigned(std::ceil(std::sqrt(double(c.lts))));
  p.nb = std::clamp(p.nb, 1u, c.n);
  for (unsigned t = 0; t <= p.nb; ++t) p.bounds.push_back(unsigned(std::size_t(t) * c.n / p.nb));

  // A diagonally dominant random system.
  std::mt19937_64 rng(c.seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::size_t nn = std::size_t(c.n) * c.n;
  p.a.resize(nn);
  p.b0.resize(c.n);
  for (unsigned i = 0; i < c.n; ++i) {
    double row = 0;
    for (unsigned j = 0; j < c.n; ++j) row += std::fabs(p.at(i, j) = u(rng));
    p.at(i, i) = row + 1.0;
    p.b0[i] = u(rng);
  }
  p.a0 = p.a;
  p.y = p.b0;
  p.x.assign(c.n, 0.0);
  p.partial.assign(std::size_t(p.nb) * c.n, 0.0);

  // A0 events are kernel objects (one eventfd each): make sure the process
  // may open that many descriptors, raising the soft limit up to the hard one.
  if (c.arch == sched::arch::a0) {
    const std::size_t need = 2 * std::size_t(p.nb) * p.nb + 2 * p.nb + 2 + 64;
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
      rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? need : std::min<rlim_t>(rl.rlim_max, need);
      ::setrlimit(RLIMIT_NOFILE, &rl);
      if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need)
        throw std::runtime_error("gauss: architecture A0 needs " + std::to_string(need) +
                                 " file descriptors (one eventfd per event) but the limit is " +
                                 std::to_string(rl.rlim_cur) + " (raise ulimit -n)");
    }
  }

  sched::scheduler_options so;
  so.carriers = c.carriers;
  if (c.pin) for (unsigned k = 0; k < c.carriers; ++k) so.cpus.push_back(int(k));
  result r;
  r.tiles_per_dim = p.nb;
  {
    sched::scheduler s(so);
    const std::size_t tiles = std::size_t(p.nb) * p.nb;
    auto make = [&](std::vector<std::unique_ptr<sched::event>>& v, std::size_t count) {
      v.reserve(count);
      for (std::size_t i = 0; i < count; ++i) v.push_back(std::make_unique<sched::event>(s, c.arch));
    };
    make(p.done, tiles);
    make(p.pdone, tiles);
    make(p.yready, p.nb);
    make(p.xready, p.nb);
    sched::event start(s, c.arch), forward_done(s, c.arch);
    std::atomic<unsigned> arrived{0}, finished{0};
    clock_type::time_point t0, t_forward, t_end;
    std::vector<sched::task> tasks;
    tasks.reserve(c.lts);
    for (unsigned me = 0; me < c.lts; ++me) {
      tasks.push_back(s.spawn([&, me] {
        const auto mine = owned(p, me);
        const auto mine_back = back_tasks(mine);
        start.wait();
        forward(p, me, mine);
        if (arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == c.lts) {
          t_forward = clock_type::now();
          if (c.corrupt) p.at(0, c.n - 1) += 1.0;  // test hook: a wrong U entry
          forward_done.set();
        } else {
          forward_done.wait();
        }
        back(p, mine_back);
        if (finished.fetch_add(1, std::memory_order_acq_rel) + 1 == c.lts) t_end = clock_type::now();
      }));
    }
    t0 = clock_type::now();
    start.set();
    // Wait for all of them at once, then collect: joining one by one would
    // wake this OS thread whenever the task it waits on ends, and each such
    // wake-up takes a core from a carrier in the middle of the timed phases.
    s.wait_idle();
    for (auto& t : tasks) t.join();
    r.forward_ms = ms_between(t0, t_forward);
    r.back_ms = ms_between(t_forward, t_end);
    r.total_ms = ms_between(t0, t_end);
  }

  double rn = 0, bn = 0;
  for (unsigned i = 0; i < c.n; ++i) {
    double v = -p.b0[i];
    const double* ai = &p.a0[std::size_t(i) * c.n];
    for (unsigned j = 0; j < c.n; ++j) v += ai[j] * p.x[j];
    rn += v * v;
    bn += p.b0[i] * p.b0[i];
  }
  r.residual = std::sqrt(rn) / std::sqrt(bn);
  r.ok = r.residual < 1e-8;  // NaN fails too
  return r;
}

}  // namespace fibersync::gauss
