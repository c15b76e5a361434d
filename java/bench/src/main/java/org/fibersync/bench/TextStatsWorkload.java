package org.fibersync.bench;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The thesis' text-statistics task (section 4.4): count the occurrences of
 * every word of {@code lines} lines of text. The lines are split evenly over
 * the threads; each word goes to one of {@code shards} {@link HashMap}s
 * chosen by its hash (as ConcurrentHashMap spreads its bins), and each map is
 * touched only under its own lock. After a run the counts are compared with a
 * single-threaded count made at construction.
 *
 * <p>The text is synthetic and deterministic (seeded): a vocabulary of 5 000
 * words of 2 to 9 letters, picked with a skewed (roughly Zipf-like)
 * distribution, 5 to 15 words per line, so a few hot words make a few shards
 * hot, as in natural text.
 */
public final class TextStatsWorkload {
    private final String[] lines;
    private final Map<String, Integer> expected;
    private final Guard[] guards;
    @SuppressWarnings("unchecked")
    private final HashMap<String, Integer>[] maps;
    private final int shardMask;
    private final int threads;

    @SuppressWarnings("unchecked")
    public TextStatsWorkload(LockKind kind, int threads, int lineCount, int shards, long seed) {
        if (threads < 1 || lineCount < 1 || shards < 1 || Integer.bitCount(shards) != 1) {
            throw new IllegalArgumentException("threads=" + threads + " lines=" + lineCount
                    + " shards=" + shards + " (a power of two)");
        }
        this.threads = threads;
        this.lines = generate(lineCount, seed);
        this.expected = countSequentially(lines);
        this.shardMask = shards - 1;
        this.guards = new Guard[shards];
        this.maps = new HashMap[shards];
        for (int i = 0; i < shards; i++) {
            guards[i] = new Guard(kind);
            maps[i] = new HashMap<>();
        }
    }

    static String[] generate(int lineCount, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        String[] vocab = new String[5000];
        for (int i = 0; i < vocab.length; i++) {
            int len = 2 + r.nextInt(8);
            char[] w = new char[len];
            for (int c = 0; c < len; c++) {
                w[c] = (char) ('a' + r.nextInt(26));
            }
            vocab[i] = new String(w);
        }
        String[] out = new String[lineCount];
        StringBuilder sb = new StringBuilder(128);
        for (int l = 0; l < lineCount; l++) {
            sb.setLength(0);
            int words = 5 + r.nextInt(11);
            for (int k = 0; k < words; k++) {
                double u = r.nextDouble();
                int idx = (int) (u * u * u * vocab.length); // skew towards low indexes
                if (k > 0) {
                    sb.append(' ');
                }
                sb.append(vocab[idx]);
            }
            out[l] = sb.toString();
        }
        return out;
    }

    static Map<String, Integer> countSequentially(String[] lines) {
        Map<String, Integer> m = new HashMap<>();
        for (String line : lines) {
            for (String w : line.split(" ")) {
                m.merge(w, 1, Integer::sum);
            }
        }
        return m;
    }

    /** Empties the maps (outside the timed part). */
    public void reset() {
        for (HashMap<String, Integer> m : maps) {
            m.clear();
        }
    }

    /** Counts every line once on fresh virtual threads. */
    public void runOnce() throws InterruptedException {
        Thread[] ts = new Thread[threads];
        int n = lines.length;
        for (int t = 0; t < threads; t++) {
            int from = (int) ((long) n * t / threads);
            int to = (int) ((long) n * (t + 1) / threads);
            ts[t] = Thread.ofVirtual().start(() -> count(from, to));
        }
        for (Thread t : ts) {
            t.join();
        }
    }

    private void count(int from, int to) {
        for (int i = from; i < to; i++) {
            String line = lines[i];
            int start = 0;
            int len = line.length();
            while (start < len) {
                int sp = line.indexOf(' ', start);
                int end = sp < 0 ? len : sp;
                String word = line.substring(start, end);
                int h = word.hashCode();
                int shard = (h ^ (h >>> 16)) & shardMask;
                HashMap<String, Integer> m = maps[shard];
                guards[shard].guarded(() -> m.merge(word, 1, Integer::sum));
                start = end + 1;
            }
        }
    }

    /**
     * @throws IllegalStateException when the merged counts differ from the
     *         single-threaded count
     */
    public void verify() {
        int total = 0;
        for (HashMap<String, Integer> m : maps) {
            for (Map.Entry<String, Integer> e : m.entrySet()) {
                if (!e.getValue().equals(expected.get(e.getKey()))) {
                    throw new IllegalStateException("word '" + e.getKey() + "': counted " + e.getValue()
                            + ", expected " + expected.get(e.getKey()));
                }
            }
            total += m.size();
        }
        if (total != expected.size()) {
            throw new IllegalStateException(total + " distinct words counted, " + expected.size() + " expected");
        }
    }

    public int distinctWords() {
        return expected.size();
    }
}
