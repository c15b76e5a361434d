// event_a0_os.cpp: A0, waits and wakes mediated by the OS (seed figure 1).
//
// The seed's A0 event is an OS synchronisation object: its state lives in
// the kernel and every operation on it is a system call (wait, set, reset,
// query); a uthread blocked on it comes back through the kernel's one
// process-wide completion list, which scheduler threads are notified of and
// drain. Here:
//   - the state is an eventfd owned by the event (readable = set): set()
//     writes it, reset() reads it, wait() and is_set() poll it, each a
//     system call, as WaitForSingleObject / SetEvent / ResetEvent are;
//   - the waiters of an event are kept under an OS mutex (std::mutex, a
//     futex under contention), with a generation word so that a set() that
//     overtakes a blocking uthread is never lost;
//   - set() moves its waiters to the scheduler's one completion list (under
//     another OS mutex) and writes the scheduler's completion eventfd (the
//     kernel's notification of the scheduler threads); carriers read that
//     eventfd and drain the list into their own ready queues
//     (sched_impl::drain_completions).
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "events.hpp"

namespace fibersync::sched::detail {
namespace {

class event_a0 final : public event_impl {
 public:
  explicit event_a0(sched_impl& s) : s_(s), fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "A0 event: eventfd");
  }
  ~event_a0() override { ::close(fd_); }

  void wait() override {
    // The generation first, then the kernel's answer: a set() after the
    // read moves the generation, so enqueue_blocked() will not park us.
    const std::uint64_t w = word_.load(std::memory_order_acquire);  // acquire: pairs with set()'s release
    if (kernel_is_set()) return;
    uthread* t = current_uthread();
    t->block_gen = generation(w);
    t->blocking_on = this;
    switch_out(action::block);
  }

  bool enqueue_blocked(carrier&, uthread* t) override {
    std::lock_guard<std::mutex> g(m_);
    if (generation(word_.load(std::memory_order_relaxed)) != t->block_gen) return false;  // set() overtook the waiter
    waiters_.push(t);
    return true;
  }

  void set() override {
    uqueue released;
    {
      std::lock_guard<std::mutex> g(m_);
      const std::uint64_t one = 1;
      [[maybe_unused]] ssize_t n = ::write(fd_, &one, sizeof one);  // SetEvent: the kernel object
      const std::uint64_t w = word_.load(std::memory_order_relaxed);
      if (w & k_set_bit) return;
      word_.store(((generation(w) + 1) << 1) | k_set_bit, std::memory_order_release);
      released = waiters_;
      waiters_ = uqueue{};
    }
    if (released.empty()) return;
    {
      std::lock_guard<std::mutex> g(s_.completion_mutex);
      if (s_.completions.empty()) {
        s_.completions = released;
      } else {
        s_.completions.tail->next = released.head;
        s_.completions.tail = released.tail;
        s_.completions.size += released.size;
      }
      s_.completions_pending.store(true, std::memory_order_relaxed);
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(s_.completion_fd, &one, sizeof one);  // the kernel notifies the carriers
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the sleep path's fence
    if (s_.sleepers.load(std::memory_order_relaxed) != 0) s_.wake_any();
  }

  void reset() override {
    std::lock_guard<std::mutex> g(m_);
    std::uint64_t v;
    [[maybe_unused]] ssize_t n = ::read(fd_, &v, sizeof v);  // ResetEvent (EAGAIN when already unset)
    word_.fetch_and(~k_set_bit, std::memory_order_relaxed);
  }

  bool is_set() const noexcept override { return kernel_is_set(); }

 private:
  bool kernel_is_set() const noexcept {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
  }

  sched_impl& s_;
  int fd_;                               // the kernel object: readable while set
  std::atomic<std::uint64_t> word_{0};  // set bit + generation; written under m_
  std::mutex m_;                         // guards waiters_, word_ and the fd's transitions
  uqueue waiters_;
};

}  // namespace

std::unique_ptr<event_impl> make_event_a0(sched_impl& s) { return std::make_unique<event_a0>(s); }

}  // namespace fibersync::sched::detail
