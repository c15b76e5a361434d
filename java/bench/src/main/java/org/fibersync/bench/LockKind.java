package org.fibersync.bench;

import java.util.Locale;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import org.fibersync.locks.McsLock;
import org.fibersync.locks.NumaMcsLock;
import org.fibersync.locks.TtasLock;

/** The locks the harness knows, under their CSV names. */
public enum LockKind {
    NUMA_MCS("NumaMcsLock", "numa_mcs", "numamcs"),
    MCS("McsLock", "mcs"),
    TTAS("TtasLock", "ttas"),
    REENTRANT_FAIR("ReentrantLockFair", "fair_reentrant", "reentrant_fair", "fairreentrant"),
    REENTRANT_UNFAIR("ReentrantLockUnfair", "unfair_reentrant", "reentrant_unfair", "unfairreentrant", "reentrantlock"),
    SYNCHRONIZED("synchronized", "sync", "monitor");

    /** The name in configs and in the CSV {@code lock} column. */
    public final String csvName;
    private final String[] aliases;

    LockKind(String csvName, String... aliases) {
        this.csvName = csvName;
        this.aliases = aliases;
    }

    /**
     * Resolves a config name: the CSV name (case-insensitive) or a thesis
     * spelling such as {@code NUMA_MCS}, {@code "NUMA MCS"},
     * {@code UNFAIR_REENTRANT}, {@code FAIR_REENTRANT}.
     *
     * @throws IllegalArgumentException for an unknown name, listing the known ones
     */
    public static LockKind parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT).replace(' ', '_').replace('-', '_');
        for (LockKind k : values()) {
            if (k.csvName.toLowerCase(Locale.ROOT).equals(n)) {
                return k;
            }
            for (String a : k.aliases) {
                if (a.equals(n)) {
                    return k;
                }
            }
        }
        throw new IllegalArgumentException("unknown lock '" + name + "' (known: " + knownNames() + ")");
    }

    public static String knownNames() {
        StringBuilder sb = new StringBuilder();
        for (LockKind k : values()) {
            sb.append(sb.isEmpty() ? "" : ", ").append(k.csvName);
        }
        return sb.toString();
    }

    /** A fresh lock, or null for {@link #SYNCHRONIZED} (the caller synchronizes on a monitor). */
    public Lock newLock() {
        return switch (this) {
            case NUMA_MCS -> new NumaMcsLock();
            case MCS -> new McsLock();
            case TTAS -> new TtasLock();
            case REENTRANT_FAIR -> new ReentrantLock(true);
            case REENTRANT_UNFAIR -> new ReentrantLock(false);
            case SYNCHRONIZED -> null;
        };
    }
}
