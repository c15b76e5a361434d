// trace.cpp: the per-carrier trace buffers and the Chrome trace-event writer.
//
// From records to events: the records of all buffers are put on one timeline
// per carrier (sorted by tick; a carrier's own buffer is already in order).
// On a carrier only the running LT records, so a run stretch ("X" span) is a
// maximal sequence of one LT's records on that carrier, ended by its yield /
// suspend / exit record or by the first record of another LT (a switch the
// harness did not see, e.g. inside the runtime's own mutex). Spans on one
// carrier therefore never overlap. A migration record becomes a flow "s" on
// the carrier the LT was last seen on (at the tick it was seen there, which is
// inside one of its spans) and an "f" where it was seen next.
#include "fibersync/bench/trace.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace fibersync::bench::trace {

namespace {

struct buffer_registry {
  std::mutex guard;
  std::size_t capacity = default_buffer_records;
  std::vector<std::unique_ptr<carrier_buffer>> buffers;
  // Bumped by start() and collect(), so that a thread's buffer from an
  // earlier recording is never written again.
  std::atomic<unsigned> generation{1};
};

buffer_registry& the_registry() {
  static buffer_registry* reg = new buffer_registry;  // never freed: carriers may outlive statics
  return *reg;
}

}  // namespace

// Not inlined (DESIGN.md 7): must resolve the carrier running the caller now.
FIBERSYNC_CARRIER_LOCAL carrier_buffer& detail::local_buffer() {
  struct slot {
    carrier_buffer* buffer = nullptr;
    unsigned generation = 0;
  };
  thread_local slot mine;
  buffer_registry& reg = the_registry();
  const unsigned gen = reg.generation.load(std::memory_order_relaxed);
  if (mine.generation != gen) {
    // First record of this thread in this recording: the only allocation.
    std::lock_guard<std::mutex> g(reg.guard);
    auto b = std::make_unique<carrier_buffer>(reg.capacity);
    mine.buffer = b.get();
    mine.generation = gen;
    reg.buffers.push_back(std::move(b));
  }
  return *mine.buffer;
}

// Anonymous memory that the kernel commits as records fill it, so a large
// limit costs address space, not memory, on threads that record little; in
// huge pages where the kernel allows it, so that filling it takes a page
// fault per 2 MiB, not per 4 KiB (~100 records), in the middle of a run.
carrier_buffer::carrier_buffer(std::size_t records_wanted) {
  const std::size_t bytes = records_wanted * sizeof(record);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;  // capacity 0: every record is dropped and counted
#ifdef MADV_HUGEPAGE
  ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: fine if refused
#endif
  // Commit the first pages now, at the carrier's first record (its LT's start,
  // before the warm-up), so that a short run takes no page fault inside the
  // measured part: 8 MiB = ~200 000 records, what a 300 ms hot-handover run
  // writes per carrier. A carrier that records more faults in the rest.
  const std::size_t prefault = std::min<std::size_t>(bytes, std::size_t{8} << 20);
  for (std::size_t off = 0; off < prefault; off += 4096) static_cast<volatile char*>(p)[off] = 0;
  records = static_cast<record*>(p);
  capacity = records_wanted;
}

carrier_buffer::~carrier_buffer() {
  if (records != nullptr) ::munmap(records, capacity * sizeof(record));
}

std::uint64_t recording::dropped() const noexcept {
  std::uint64_t n = 0;
  for (const auto& b : buffers) n += b->dropped;
  return n;
}

std::uint64_t recording::records() const noexcept {
  std::uint64_t n = 0;
  for (const auto& b : buffers) n += b->size;
  return n;
}

void start(std::size_t buffer_records) {
  buffer_registry& reg = the_registry();
  {
    std::lock_guard<std::mutex> g(reg.guard);
    reg.capacity = buffer_records;
    reg.buffers.clear();
  }
  reg.generation.fetch_add(1, std::memory_order_relaxed);
  detail::recording.store(true, std::memory_order_relaxed);
}

recording collect() {
  detail::recording.store(false, std::memory_order_relaxed);
  buffer_registry& reg = the_registry();
  reg.generation.fetch_add(1, std::memory_order_relaxed);
  recording rec;
  std::lock_guard<std::mutex> g(reg.guard);
  rec.buffers = std::move(reg.buffers);
  reg.buffers.clear();
  return rec;
}

namespace {

// One point on a carrier's timeline.
struct entry {
  std::uint64_t ticks;
  std::uint64_t who;
  std::uint64_t other;
  std::uint32_t carrier;
  kind what;
  bool flow_finish = false;  // migration: false = where the LT left, true = where it arrived
  std::uint64_t flow = 0;    // migration: flow id
};

// Buffered writer over a FILE* that remembers the first error.
class event_writer {
 public:
  event_writer(std::FILE* f, double ticks_per_ns, std::uint64_t origin)
      : f_(f), ns_per_tick_(1.0 / ticks_per_ns), origin_(origin) {}

  // Whole nanoseconds since the first record. Spans and flows are placed
  // in these units, so that ts + dur of a span is exactly the ts of a flow
  // at its end (no rounding of its own).
  std::uint64_t ns(std::uint64_t ticks) const {
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(ticks - origin_) * ns_per_tick_));
  }
  // Microseconds (the format's unit) as exact decimal text: "12.345".
  static std::string us(std::uint64_t ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
    return buf;
  }
  std::string us_at(std::uint64_t ticks) const { return us(ns(ticks)); }

  // `body` is the event's JSON object without the braces.
  void event(const std::string& body) {
    std::fputs(first_ ? "\n{" : ",\n{", f_);
    std::fputs(body.c_str(), f_);
    std::fputc('}', f_);
    first_ = false;
    ++events_;
  }
  std::uint64_t events() const { return events_; }

 private:
  std::FILE* f_;
  double ns_per_tick_;
  std::uint64_t origin_;
  bool first_ = true;
  std::uint64_t events_ = 0;
};

std::string fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* format, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  if (n < 0) return {};
  if (static_cast<std::size_t>(n) < sizeof buf) return std::string(buf, static_cast<std::size_t>(n));
  std::string big(static_cast<std::size_t>(n) + 1, '\0');
  va_start(ap, format);
  std::vsnprintf(big.data(), big.size(), format, ap);
  va_end(ap);
  big.resize(static_cast<std::size_t>(n));
  return big;
}

std::string lt_name(const std::unordered_map<std::uint64_t, unsigned>& lts, std::uint64_t who) {
  auto it = lts.find(who);
  return it == lts.end() ? std::string("LT ?") : "LT " + std::to_string(it->second);
}

std::string lt_arg(const std::unordered_map<std::uint64_t, unsigned>& lts, std::uint64_t who) {
  auto it = lts.find(who);
  return it == lts.end() ? std::string("null") : std::to_string(it->second);
}

}  // namespace

trace_summary write_chrome_trace(const std::string& path, const recording& rec, const trace_info& info) {
  // The timeline entries of every carrier.
  std::vector<entry> entries;
  entries.reserve(rec.records() * 2);
  std::unordered_map<std::uint64_t, unsigned> lts;  // lt_key -> LT index
  std::uint64_t flows = 0, clamped = 0;
  for (const auto& b : rec.buffers) {
    for (std::size_t i = 0; i < b->size; ++i) {
      const record& r = b->records[i];
      if (r.what == kind::lt_start) lts[r.who] = static_cast<unsigned>(r.other);
      if (r.what == kind::migration) {
        // Tick counters of two cores may disagree by a little; an arrow must
        // not point back in time.
        std::uint64_t arrive = r.ticks;
        if (arrive < r.other) {
          arrive = r.other;
          ++clamped;
        }
        entries.push_back({r.other, r.who, 0, r.from_carrier, r.what, false, flows});
        entries.push_back({arrive, r.who, 0, r.carrier, r.what, true, flows});
        ++flows;
      } else if (r.what == kind::mutex_yield || r.what == kind::mutex_suspend || r.what == kind::harness_yield) {
        // One switch record: where the LT stopped, and where it runs again.
        entries.push_back({r.other, r.who, 0, r.from_carrier, r.what});
        entries.push_back({r.ticks, r.who, 0, r.carrier, kind::running});
      } else {
        entries.push_back({r.ticks, r.who, r.other, r.carrier, r.what});
      }
    }
  }
  std::stable_sort(entries.begin(), entries.end(), [](const entry& a, const entry& b) {
    return a.carrier != b.carrier ? a.carrier < b.carrier : a.ticks < b.ticks;
  });
  std::uint64_t origin = ~std::uint64_t{0};
  for (const entry& e : entries) origin = std::min(origin, e.ticks);
  if (entries.empty()) origin = 0;

  std::error_code ec;
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) throw std::runtime_error("cannot write trace file " + tmp + ": " + std::strerror(errno));
  std::vector<char> iobuf(1 << 20);
  std::setvbuf(f, iobuf.data(), _IOFBF, iobuf.size());

  const unsigned pid = info.pid;
  event_writer out(f, info.ticks_per_ns > 0 ? info.ticks_per_ns : 1.0, origin);
  const std::uint64_t dropped = rec.dropped();
  nlohmann::json other = info.run.is_object() ? info.run : nlohmann::json::object();
  other["tool"] = "fibersync-bench --trace";
  other["clock"] = "CPU tick counter, calibrated";
  other["ticks_per_ns"] = info.ticks_per_ns;
  other["buffer_records_per_carrier"] = info.buffer_records;
  other["carrier_buffers"] = rec.buffers.size();
  other["records"] = rec.records();
  other["dropped_records"] = dropped;
  other["migrations"] = flows;
  other["clamped_arrows"] = clamped;
  std::fprintf(f, "{\"displayTimeUnit\": \"ns\",\n\"otherData\": %s,\n\"traceEvents\": [", other.dump().c_str());

  out.event(fmt("\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":%s}", pid,
                nlohmann::json(info.process_name).dump().c_str()));
  for (std::size_t i = 0; i < entries.size();) {
    const std::uint32_t carrier = entries[i].carrier;
    out.event(fmt("\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%" PRIu32
                  ",\"args\":{\"name\":\"carrier %" PRIu32 "\"}",
                  pid, carrier, carrier));
    out.event(fmt("\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%u,\"tid\":%" PRIu32
                  ",\"args\":{\"sort_index\":%" PRIu32 "}",
                  pid, carrier, carrier));

    bool open = false;
    std::uint64_t span_who = 0, span_start = 0, span_last = 0;
    auto close_span = [&](std::uint64_t end, const char* why) {
      const std::uint64_t from_ns = out.ns(span_start), to_ns = std::max(from_ns, out.ns(end));
      out.event(fmt("\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"run\",\"ts\":%s,\"dur\":%s,\"pid\":%u,\"tid\":%" PRIu32
                    ",\"args\":{\"lt\":%s,\"ended_by\":\"%s\"}",
                    lt_name(lts, span_who).c_str(), event_writer::us(from_ns).c_str(),
                    event_writer::us(to_ns - from_ns).c_str(), pid, carrier, lt_arg(lts, span_who).c_str(), why));
      open = false;
    };
    auto instant = [&](const entry& e, const char* name, const char* cat, const char* scope,
                       const std::string& args) {
      out.event(fmt("\"ph\":\"i\",\"name\":\"%s\",\"cat\":\"%s\",\"s\":\"%s\",\"ts\":%s,\"pid\":%u,\"tid\":%" PRIu32
                    ",\"args\":{%s}",
                    name, cat, scope, out.us_at(e.ticks).c_str(), pid, carrier, args.c_str()));
    };

    for (; i < entries.size() && entries[i].carrier == carrier; ++i) {
      const entry& e = entries[i];
      if (open && e.who != span_who) close_span(span_last, "unseen switch");
      if (!open) {
        open = true;
        span_who = e.who;
        span_start = e.ticks;
      }
      span_last = e.ticks;
      const std::string lt = "\"lt\":" + lt_arg(lts, e.who);
      switch (e.what) {
        case kind::lt_start:
        case kind::running:
          break;
        case kind::lt_exit:
          close_span(e.ticks, "exit");
          break;
        case kind::mutex_yield:
          instant(e, "yield", "mutex", "t", lt);
          close_span(e.ticks, "yield");
          break;
        case kind::mutex_suspend:
          instant(e, "suspend", "mutex", "t", lt);
          close_span(e.ticks, "suspend");
          break;
        case kind::harness_yield:
          instant(e, "yield", "harness", "t", lt);
          close_span(e.ticks, "harness yield");
          break;
        case kind::resume:
          instant(e, "resume", "mutex", "t", lt + ",\"target\":" + lt_arg(lts, e.other));
          break;
        case kind::measuring_begins:
          instant(e, "measuring begins", "phase", "g", lt);
          break;
        case kind::measuring_ends:
          instant(e, "measuring ends", "phase", "g", lt);
          break;
        case kind::migration:
          if (e.flow_finish)
            out.event(fmt("\"ph\":\"f\",\"bp\":\"e\",\"name\":\"migration\",\"cat\":\"migration\",\"id\":%" PRIu64
                          ",\"ts\":%s,\"pid\":%u,\"tid\":%" PRIu32 ",\"args\":{%s}",
                          e.flow, out.us_at(e.ticks).c_str(), pid, carrier, lt.c_str()));
          else
            out.event(fmt("\"ph\":\"s\",\"name\":\"migration\",\"cat\":\"migration\",\"id\":%" PRIu64
                          ",\"ts\":%s,\"pid\":%u,\"tid\":%" PRIu32 ",\"args\":{%s}",
                          e.flow, out.us_at(e.ticks).c_str(), pid, carrier, lt.c_str()));
          break;
      }
    }
    if (open) close_span(span_last, "end of trace");
  }
  std::fputs("\n]}\n", f);

  const bool write_failed = std::ferror(f) != 0;
  const bool close_failed = std::fclose(f) != 0;
  if (write_failed || close_failed) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("cannot write trace file " + tmp);
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
  }
  return {out.events(), flows, dropped};
}

std::string run_trace_path(const std::string& path, std::size_t index, std::size_t runs) {
  if (runs <= 1) return path;
  const std::filesystem::path p(path);
  std::string number = std::to_string(index + 1);
  const std::size_t width = std::max<std::size_t>(3, std::to_string(runs).size());
  if (number.size() < width) number.insert(0, width - number.size(), '0');
  const std::string name = p.stem().string() + "-run" + number + p.extension().string();
  return p.has_parent_path() ? (p.parent_path() / name).string() : name;
}

}  // namespace fibersync::bench::trace
