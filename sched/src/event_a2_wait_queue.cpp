// event_a2_wait_queue.cpp: A2, a wait queue per event, no lock (seed
// figure 4). The state machine and its invariants are drawn in
// include/fibersync/sched/event.hpp.
#include "events.hpp"

namespace fibersync::sched::detail {
namespace {

constexpr std::uintptr_t k_phase_mask = 3;
constexpr std::uintptr_t k_unset = 0;
constexpr std::uintptr_t k_set = 1;
constexpr std::uintptr_t k_setting = 2;
constexpr std::uintptr_t k_reset_pending = 4;
constexpr std::uintptr_t k_ptr_mask = 0x0000'FFFF'FFFF'FFF8ull;
constexpr std::uintptr_t k_join_one = std::uintptr_t{1} << 48;
constexpr std::uintptr_t k_join_mask = ~(k_join_one - 1);
static_assert(sizeof(std::uintptr_t) == 8, "A2 packs a 48-bit pointer and a 16-bit count");
static_assert(alignof(uthread) >= 8, "low pointer bits hold the phase");

class event_a2 final : public event_impl {
 public:
  explicit event_a2(sched_impl&) {}
  ~event_a2() override = default;  // INV3: JOINING==0 and empty stack by then

  void wait() override {
    std::uintptr_t w = word_.load(std::memory_order_acquire);  // acquire: pairs with set()'s release
    for (;;) {
      const std::uintptr_t phase = w & k_phase_mask;
      if (phase == k_set || (phase == k_setting && !(w & k_reset_pending))) return;  // released
      // UNSET, or SETTING|RESET_PENDING (logically unset: a reset already
      // happened) -> JOINING(+1): announce; the carrier links us after the switch.
      if (word_.compare_exchange_weak(w, w + k_join_one, std::memory_order_acq_rel, std::memory_order_acquire)) break;
    }
    uthread* t = current_uthread();
    // Strict joiner: it announced after a reset, so the SETTING in progress
    // must not release it (block_gen is otherwise unused by A2).
    t->block_gen = (w & k_phase_mask) == k_setting ? 1 : 0;
    t->blocking_on = this;
    switch_out(action::block);
  }

  bool enqueue_blocked(carrier&, uthread* t) override {
    std::uintptr_t w = word_.load(std::memory_order_acquire);
    for (;;) {
      if ((w & k_phase_mask) == k_unset) {
        // INV1: link only while UNSET; release publishes t->next to set()'s CAS.
        t->next = reinterpret_cast<uthread*>(w & k_ptr_mask);
        const std::uintptr_t linked = ((w & k_join_mask) - k_join_one) | reinterpret_cast<std::uintptr_t>(t) | k_unset;
        if (word_.compare_exchange_weak(w, linked, std::memory_order_acq_rel, std::memory_order_acquire)) return true;
      } else if ((w & (k_phase_mask | k_reset_pending)) == (k_setting | k_reset_pending) && t->block_gen == 1) {
        // Strict joiner during SETTING|RESET_PENDING: repeat once the setter
        // has finished (seed: "repeat the request"); the setter is running
        // on another carrier and does a bounded amount of work.
        for (unsigned spin = 0; word_.load(std::memory_order_relaxed) == w; ++spin) {
          if (spin > 1000) std::this_thread::yield(); else (cpu_relax)();
        }
        w = word_.load(std::memory_order_acquire);
      } else {
        // A set() overtook us while joining: leave JOINING, run again.
        if (word_.compare_exchange_weak(w, w - k_join_one, std::memory_order_acq_rel, std::memory_order_acquire)) {
          t->next = nullptr;
          return false;
        }
      }
    }
  }

  void set() override {
    std::uintptr_t w = word_.load(std::memory_order_acquire);
    for (;;) {
      const std::uintptr_t phase = w & k_phase_mask;
      if (phase == k_set) return;
      if (phase == k_setting) {
        if ((w & k_reset_pending) == 0) return;  // INV2: the running setter does the work
        if (word_.compare_exchange_weak(w, w & ~k_reset_pending, std::memory_order_acq_rel)) return;
        continue;
      }
      // UNSET -> SETTING: detach the whole stack (INV1), keep JOINING.
      if (word_.compare_exchange_weak(w, (w & k_join_mask) | k_setting, std::memory_order_acq_rel, std::memory_order_acquire)) break;
    }
    // Straight to the ready queues of their carriers, in one pass over the
    // detached stack: split by carrier, prepending each waiter to its
    // carrier's list, which turns the stack (newest first) back into arrival
    // order; then one splice per carrier. (Reversing first and splitting
    // second walked 7 935 cold records twice at gauss's barrier.)
    uthread* head = reinterpret_cast<uthread*>(w & k_ptr_mask);
    if (head != nullptr) {
      sched_impl& s = *head->sched;
      constexpr std::size_t k_max = 64;  // scheduler limit on carriers
      uqueue per[k_max];
      const std::size_t n = s.carriers.size();
      for (uthread* t = head; t != nullptr;) {
        uthread* nx = t->next;
        uqueue& q = per[t->home->index];
        t->next = q.head;
        q.head = t;
        if (q.tail == nullptr) q.tail = t;
        ++q.size;
        t = nx;
      }
      for (std::size_t k = 0; k < n; ++k) s.push_ready_batch(*s.carriers[k], per[k]);
    }
    // SETTING -> SET, or UNSET when a reset() arrived meanwhile.
    w = word_.load(std::memory_order_acquire);
    for (;;) {
      const std::uintptr_t to = (w & k_join_mask) | ((w & k_reset_pending) ? k_unset : k_set);
      if (word_.compare_exchange_weak(w, to, std::memory_order_acq_rel, std::memory_order_acquire)) return;
    }
  }

  void reset() override {
    std::uintptr_t w = word_.load(std::memory_order_acquire);
    for (;;) {
      const std::uintptr_t phase = w & k_phase_mask;
      if (phase == k_unset) return;
      const std::uintptr_t to = phase == k_set ? ((w & k_join_mask) | k_unset) : (w | k_reset_pending);
      if (word_.compare_exchange_weak(w, to, std::memory_order_acq_rel, std::memory_order_acquire)) return;
    }
  }

  bool is_set() const noexcept override {
    const std::uintptr_t w = word_.load(std::memory_order_acquire);
    return (w & k_phase_mask) == k_set || ((w & k_phase_mask) == k_setting && !(w & k_reset_pending));
  }

 private:
  std::atomic<std::uintptr_t> word_{k_unset};  // see event.hpp: phase | RESET_PENDING | stack head | JOINING
};

}  // namespace

std::unique_ptr<event_impl> make_event_a2(sched_impl& s) { return std::make_unique<event_a2>(s); }

}  // namespace fibersync::sched::detail
