package org.fibersync.locks.numa;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.IntSupplier;

/**
 * NUMA topology as seen by a lock: how many nodes, and which node the
 * calling thread's carrier runs on now.
 *
 * <p>{@link #system()} reads the node count from
 * {@code /sys/devices/system/node/online} and the current node from
 * {@code getcpu} (FFM, see {@link NativeCpu}), cached per carrier (see
 * {@code CarrierCache}). The system property {@code fibersync.topology}
 * replaces it, so that the NUMA code paths run on a one-node machine:
 * <ul>
 *   <li>unset, {@code sys} or {@code auto}: the operating system's topology;</li>
 *   <li>{@code N} (an integer {@code >= 1}): N virtual nodes, cpu {@code c}
 *       belongs to node {@code c % N} (on a 2-cpu machine {@code 2} puts each
 *       cpu in a node of its own);</li>
 *   <li>{@code 0-3,8;4-7,9}: explicit cpu lists, one per node, separated by
 *       {@code ;} (cpus not listed fall back to {@code c % N}).</li>
 * </ul>
 * {@code fibersync.topology.refresh} (default 64) sets how many look-ups a
 * carrier's cached answer serves before {@code getcpu} is called again.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class Topology {
    /** System property that overrides the topology. */
    public static final String PROPERTY = "fibersync.topology";

    private static final int KIND_OS = 0;
    private static final int KIND_MODULO = 1;
    private static final int KIND_MAP = 2;
    private static final int KIND_CUSTOM = 3;

    private final int kind;
    private final int nodeCount;
    private final int[] cpuToNode;      // KIND_MAP only
    private final IntSupplier custom;   // KIND_CUSTOM only
    private final String description;

    private Topology(int kind, int nodeCount, int[] cpuToNode, IntSupplier custom, String description) {
        this.kind = kind;
        this.nodeCount = nodeCount;
        this.cpuToNode = cpuToNode;
        this.custom = custom;
        this.description = description;
    }

    private static final class Holder {
        static final Topology SYSTEM = parse(System.getProperty(PROPERTY));
    }

    /** The process-wide topology: the OS one unless {@value #PROPERTY} overrides it. */
    public static Topology system() {
        return Holder.SYSTEM;
    }

    /** The operating system's topology, ignoring the property. */
    public static Topology os() {
        int n = readNodeCount(Path.of("/sys/devices/system/node/online"));
        return new Topology(KIND_OS, n, null, null, "os: " + n + " node(s) from /sys/devices/system/node, node of carrier via getcpu, cache "
                + CarrierCache.mode());
    }

    /** {@code nodes} virtual nodes; cpu c is in node {@code c % nodes}. */
    public static Topology virtual(int nodes) {
        if (nodes < 1) {
            throw new IllegalArgumentException("node count must be >= 1: " + nodes);
        }
        return new Topology(KIND_MODULO, nodes, null, null, "virtual: " + nodes + " node(s), node = cpu % " + nodes);
    }

    /**
     * A topology whose current node is whatever {@code currentNode} says
     * (tests, or a caller that knows better, e.g. one that pins carriers).
     */
    public static Topology custom(int nodes, IntSupplier currentNode) {
        if (nodes < 1) {
            throw new IllegalArgumentException("node count must be >= 1: " + nodes);
        }
        return new Topology(KIND_CUSTOM, nodes, null, Objects.requireNonNull(currentNode), "custom: " + nodes + " node(s)");
    }

    /**
     * Parses a {@value #PROPERTY} value (see the class comment).
     *
     * @throws IllegalArgumentException on a malformed value
     */
    public static Topology parse(String spec) {
        if (spec == null || spec.isBlank() || spec.trim().equalsIgnoreCase("sys") || spec.trim().equalsIgnoreCase("auto")) {
            return os();
        }
        String s = spec.trim();
        if (s.matches("\\d+")) {
            return virtual(Integer.parseInt(s));
        }
        String[] parts = s.split(";");
        List<int[]> lists = new ArrayList<>();
        int maxCpu = -1;
        for (String p : parts) {
            int[] cpus = parseCpuList(p.trim());
            for (int c : cpus) {
                maxCpu = Math.max(maxCpu, c);
            }
            lists.add(cpus);
        }
        int nodes = lists.size();
        int[] map = new int[maxCpu + 1];
        Arrays.fill(map, -1);
        for (int node = 0; node < nodes; node++) {
            for (int c : lists.get(node)) {
                if (map[c] != -1) {
                    throw new IllegalArgumentException(PROPERTY + ": cpu " + c + " listed in two nodes: " + spec);
                }
                map[c] = node;
            }
        }
        return new Topology(KIND_MAP, nodes, map, null, "explicit: " + nodes + " node(s) " + s);
    }

    /** Number of nodes, {@code >= 1}. */
    public int nodeCount() {
        return nodeCount;
    }

    /** The node of the calling thread's carrier, in {@code [0, nodeCount)}. */
    public int currentNode() {
        switch (kind) {
            case KIND_OS -> {
                int n = CarrierCache.node(CarrierCache.cpuAndNode());
                return (n >= 0 && n < nodeCount) ? n : Math.floorMod(n, nodeCount);
            }
            case KIND_CUSTOM -> {
                return Math.floorMod(custom.getAsInt(), nodeCount);
            }
            default -> {
                return nodeOfCpu(CarrierCache.cpu(CarrierCache.cpuAndNode()));
            }
        }
    }

    /** The cpu of the calling thread's carrier (possibly a cached answer), or -1. */
    public int currentCpu() {
        return CarrierCache.cpu(CarrierCache.cpuAndNode());
    }

    /** The node this topology assigns to {@code cpu} (not meaningful for os/custom kinds: -1). */
    public int nodeOfCpu(int cpu) {
        if (cpu < 0) {
            return 0;
        }
        if (kind == KIND_MAP && cpu < cpuToNode.length && cpuToNode[cpu] >= 0) {
            return cpuToNode[cpu];
        }
        if (kind == KIND_MAP || kind == KIND_MODULO) {
            return cpu % nodeCount;
        }
        return -1;
    }

    /** Whether node look-ups of virtual threads are served from a per-carrier cache. */
    public static boolean cachedPerCarrier() {
        return CarrierCache.perCarrier();
    }

    @Override
    public String toString() {
        return description;
    }

    static int readNodeCount(Path online) {
        try {
            String text = Files.readString(online).trim();
            int max = -1;
            for (int n : parseCpuList(text)) {
                max = Math.max(max, n);
            }
            return Math.max(1, max + 1);
        } catch (IOException | RuntimeException e) {
            return 1;
        }
    }

    /** Parses a Linux cpu/node list such as {@code 0-3,8,10-11}. */
    static int[] parseCpuList(String text) {
        if (text.isEmpty()) {
            throw new IllegalArgumentException("empty cpu list");
        }
        List<Integer> out = new ArrayList<>();
        for (String r : text.split(",")) {
            r = r.trim();
            int dash = r.indexOf('-');
            try {
                if (dash < 0) {
                    out.add(Integer.parseInt(r));
                } else {
                    int lo = Integer.parseInt(r.substring(0, dash).trim());
                    int hi = Integer.parseInt(r.substring(dash + 1).trim());
                    if (lo > hi || hi - lo > 65536) {
                        throw new IllegalArgumentException("bad cpu range '" + r + "'");
                    }
                    for (int c = lo; c <= hi; c++) {
                        out.add(c);
                    }
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad cpu list '" + text + "'", e);
            }
        }
        int[] a = new int[out.size()];
        for (int i = 0; i < a.length; i++) {
            if (out.get(i) < 0) {
                throw new IllegalArgumentException("negative cpu in '" + text + "'");
            }
            a[i] = out.get(i);
        }
        return a;
    }
}
