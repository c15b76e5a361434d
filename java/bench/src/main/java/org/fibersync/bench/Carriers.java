package org.fibersync.bench;

import java.time.Duration;
import org.fibersync.locks.numa.CarrierPinning;
import org.fibersync.locks.numa.NativeCpu;

/** Carrier-related helpers for the benchmark states. */
final class Carriers {
    private Carriers() {
    }

    /** The virtual-thread scheduler's parallelism in this JVM. */
    static int parallelism() {
        String p = System.getProperty("jdk.virtualThreadScheduler.parallelism");
        if (p != null) {
            try {
                return Integer.parseInt(p.trim());
            } catch (NumberFormatException ignored) {
                // fall through: the JDK ignores it as well
            }
        }
        return Runtime.getRuntime().availableProcessors();
    }

    /**
     * Pins each carrier to one allowed cpu. Called before every iteration:
     * the scheduler replaces carriers that idled out, and new ones are not
     * pinned.
     */
    static void pin() {
        try {
            CarrierPinning.pinCarriers(parallelism(), NativeCpu.allowedCpus(), Duration.ofSeconds(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
