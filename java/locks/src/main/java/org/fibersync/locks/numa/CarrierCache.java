package org.fibersync.locks.numa;

/**
 * The {@code getcpu} answer cached per carrier thread and refreshed every
 * {@code fibersync.topology.refresh} look-ups (default 64).
 *
 * <p>Why per carrier: a virtual thread runs on whatever carrier the scheduler
 * gives it, and the cpu (hence NUMA node) belongs to the carrier. A cache per
 * virtual thread would be wrong after every migration and would cost memory
 * per virtual thread (the thesis' reason to avoid it, section 3.3); there are
 * only as many carriers as the scheduler's parallelism.
 *
 * <p>How: {@code jdk.internal.misc.CarrierThreadLocal}, a ThreadLocal whose
 * value belongs to the carrier when read from a virtual thread. It is used
 * when {@code java.base} exports {@code jdk.internal.misc} to this code
 * ({@code --add-exports java.base/jdk.internal.misc=ALL-UNNAMED}; the build
 * and the bench pass it). Without the export: platform threads use an
 * ordinary ThreadLocal (carrier == thread) and virtual threads call
 * {@code getcpu} on every look-up (a vDSO call, tens of nanoseconds through
 * FFM), which is correct, only slower.
 *
 * <p>A cached answer can be stale for up to {@code refresh} look-ups when the
 * kernel moves a carrier to another cpu; that costs locality, never
 * correctness, since the node only picks which queue a waiter joins. For the
 * same reason it does not matter that a virtual thread may read the slot of
 * one carrier and continue on another after a later yield: callers read the
 * node once, before they wait.
 */
final class CarrierCache {
    private CarrierCache() {
    }

    /** Look-ups between two getcpu calls on one carrier. */
    static final int REFRESH = Math.max(1, Integer.getInteger("fibersync.topology.refresh", 64));

    /** Per-carrier cache line; touched only by code running on that carrier. */
    static final class Slot {
        final int[] buf = new int[2];
        long packed = pack(-1, 0);
        int countdown;
        // Slots of different carriers are allocated by different threads, so
        // in different TLABs; no padding needed.
    }

    private static final ThreadLocal<Slot> CARRIER_LOCAL = carrierLocal();
    private static final ThreadLocal<Slot> THREAD_LOCAL = new ThreadLocal<>();

    @SuppressWarnings("unchecked")
    private static ThreadLocal<Slot> carrierLocal() {
        try {
            Module base = Object.class.getModule();
            if (!base.isExported("jdk.internal.misc", CarrierCache.class.getModule())) {
                return null;
            }
            Class<?> c = Class.forName("jdk.internal.misc.CarrierThreadLocal");
            return (ThreadLocal<Slot>) c.getConstructor().newInstance();
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
        }
    }

    /** "carrier" when the per-carrier cache is active, else what replaces it. */
    static String mode() {
        if (!NativeCpu.available()) {
            return "none (getcpu unavailable: " + NativeCpu.unavailableReason() + ")";
        }
        return CARRIER_LOCAL != null ? "per carrier (CarrierThreadLocal)"
                : "per platform thread; uncached on virtual threads (add --add-exports java.base/jdk.internal.misc=ALL-UNNAMED)";
    }

    static boolean perCarrier() {
        return CARRIER_LOCAL != null;
    }

    /** (cpu, node) of the current carrier, packed; cpu -1 when unknown. */
    static long cpuAndNode() {
        ThreadLocal<Slot> tl = CARRIER_LOCAL;
        if (tl == null) {
            if (Thread.currentThread().isVirtual()) {
                return query(new int[2]);
            }
            tl = THREAD_LOCAL;
        }
        Slot s = tl.get();
        if (s == null) {
            s = new Slot();
            tl.set(s);
        }
        if (--s.countdown < 0) {
            s.packed = query(s.buf);
            s.countdown = REFRESH - 1;
        }
        return s.packed;
    }

    /** Fresh getcpu answer, bypassing the cache. */
    static long query(int[] buf) {
        return NativeCpu.getcpu(buf) ? pack(buf[0], buf[1]) : pack(-1, 0);
    }

    static long pack(int cpu, int node) {
        return ((long) cpu << 32) | (node & 0xffffffffL);
    }

    static int cpu(long packed) {
        return (int) (packed >> 32);
    }

    static int node(long packed) {
        return (int) packed;
    }
}
