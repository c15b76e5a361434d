package org.fibersync.locks.numa;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Linux calls through the FFM API (no JNI): {@code getcpu(3)},
 * {@code sched_setaffinity(2)} and {@code sched_getaffinity(2)} from libc.
 *
 * <p>Everything degrades instead of failing: when a symbol is missing, the
 * platform is not Linux, or native access is denied
 * ({@code --enable-native-access} not given under
 * {@code --illegal-native-access=deny}), {@link #available()} is false and the
 * callers fall back (node 0, no pinning).
 */
public final class NativeCpu {
    private NativeCpu() {
    }

    /** cpu_set_t of glibc: 1024 bits. */
    private static final int CPU_SET_BYTES = 128;

    private static final MethodHandle GETCPU;            // int getcpu(unsigned *cpu, unsigned *node)
    private static final MethodHandle SCHED_SETAFFINITY; // int sched_setaffinity(pid_t, size_t, const cpu_set_t *)
    private static final MethodHandle SCHED_GETAFFINITY; // int sched_getaffinity(pid_t, size_t, cpu_set_t *)
    private static final VarHandle ERRNO;
    private static final long ERRNO_BYTES;
    private static final String UNAVAILABLE_REASON;

    static {
        MethodHandle getcpu = null;
        MethodHandle set = null;
        MethodHandle get = null;
        VarHandle errno = null;
        long errnoBytes = 0;
        String reason = null;
        try {
            if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
                throw new UnsupportedOperationException("not Linux");
            }
            Linker linker = Linker.nativeLinker();
            SymbolLookup libc = linker.defaultLookup();
            // critical(true): getcpu is a vDSO call of ~20 ns that never
            // blocks, so skip the thread-state transition and let it write
            // straight into a Java int[] (no native allocation per call).
            getcpu = libc.find("getcpu").map(a -> linker.downcallHandle(a,
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS),
                    Linker.Option.critical(true))).orElse(null);
            Linker.Option ccs = Linker.Option.captureCallState("errno");
            MemoryLayout stateLayout = Linker.Option.captureStateLayout();
            errno = stateLayout.varHandle(MemoryLayout.PathElement.groupElement("errno"));
            errnoBytes = stateLayout.byteSize();
            FunctionDescriptor affinity = FunctionDescriptor.of(ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS);
            set = libc.find("sched_setaffinity").map(a -> linker.downcallHandle(a, affinity, ccs)).orElse(null);
            get = libc.find("sched_getaffinity").map(a -> linker.downcallHandle(a, affinity, ccs)).orElse(null);
            if (getcpu == null) {
                reason = "libc has no getcpu (glibc < 2.29)";
            }
        } catch (Throwable t) { // IllegalCallerException, UnsupportedOperationException, LinkageError
            reason = t.toString();
            getcpu = null;
            set = null;
            get = null;
        }
        GETCPU = getcpu;
        SCHED_SETAFFINITY = set;
        SCHED_GETAFFINITY = get;
        ERRNO = errno;
        ERRNO_BYTES = errnoBytes;
        UNAVAILABLE_REASON = reason;
    }

    /** Whether {@link #getcpu(int[])} works on this platform and JVM. */
    public static boolean available() {
        return GETCPU != null;
    }

    /** Why {@link #available()} is false, or null. */
    public static String unavailableReason() {
        return UNAVAILABLE_REASON;
    }

    /**
     * Stores the calling OS thread's cpu in {@code out[0]} and NUMA node in
     * {@code out[1]}. Called from a virtual thread it reports its carrier
     * (the call does not yield).
     *
     * @param out an array of at least two ints
     * @return true on success; false (out untouched) when unavailable or failed
     */
    public static boolean getcpu(int[] out) {
        if (GETCPU == null) {
            return false;
        }
        MemorySegment seg = MemorySegment.ofArray(out);
        try {
            return (int) GETCPU.invokeExact(seg, seg.asSlice(4)) == 0;
        } catch (Throwable t) {
            return false;
        }
    }

    /**
     * Pins the calling OS thread (the carrier, when called from a virtual
     * thread) to one cpu.
     *
     * @throws IllegalStateException with errno when the kernel refuses,
     *         or when the call is unavailable
     */
    public static void pinCurrentThread(int cpu) {
        if (SCHED_SETAFFINITY == null) {
            throw new IllegalStateException("sched_setaffinity unavailable: " + UNAVAILABLE_REASON);
        }
        if (cpu < 0 || cpu >= CPU_SET_BYTES * 8) {
            throw new IllegalArgumentException("cpu out of range: " + cpu);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment set = arena.allocate(CPU_SET_BYTES, 8);
            set.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            MemorySegment state = arena.allocate(ERRNO_BYTES, 8);
            int rc = (int) SCHED_SETAFFINITY.invokeExact(state, 0, (long) CPU_SET_BYTES, set);
            if (rc != 0) {
                throw new IllegalStateException("sched_setaffinity(cpu " + cpu + ") failed, errno "
                        + (int) ERRNO.get(state, 0L));
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * The cpus the calling OS thread may run on, in increasing order; falls
     * back to {@code 0 .. availableProcessors-1} when unavailable.
     */
    public static int[] allowedCpus() {
        if (SCHED_GETAFFINITY != null) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment set = arena.allocate(CPU_SET_BYTES, 8);
                MemorySegment state = arena.allocate(ERRNO_BYTES, 8);
                int rc = (int) SCHED_GETAFFINITY.invokeExact(state, 0, (long) CPU_SET_BYTES, set);
                if (rc == 0) {
                    int[] tmp = new int[CPU_SET_BYTES * 8];
                    int n = 0;
                    for (int cpu = 0; cpu < CPU_SET_BYTES * 8; cpu++) {
                        if ((set.get(ValueLayout.JAVA_BYTE, cpu / 8) & (1 << (cpu % 8))) != 0) {
                            tmp[n++] = cpu;
                        }
                    }
                    if (n > 0) {
                        return java.util.Arrays.copyOf(tmp, n);
                    }
                }
            } catch (Throwable ignored) {
                // fall through to the portable answer
            }
        }
        int n = Runtime.getRuntime().availableProcessors();
        int[] all = new int[n];
        for (int i = 0; i < n; i++) {
            all[i] = i;
        }
        return all;
    }
}
