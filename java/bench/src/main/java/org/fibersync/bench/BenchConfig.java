package org.fibersync.bench;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The JSON config, in the shape of the thesis' appendix A:
 * <pre>
 * { "profilers": [...], "jvmArgs": [...],          (optional, for every bench)
 *   "benches": [ { "name": "consumeCpu" | "textStat",   (the benchmark type)
 *                  "payload": { ...fields of {@link Bench}... } } ] }
 * </pre>
 * Every field is described in java/README.md. Parsing is strict: unknown
 * fields, wrong types and out-of-range values are errors, so that a typo does
 * not silently run a different experiment.
 */
public record BenchConfig(List<Bench> benches) {

    /** Benchmark types (the thesis' bench "name"). */
    public static final String CONSUME_CPU = "consumeCpu";
    public static final String TEXT_STAT = "textStat";

    /** One bench entry, defaults filled in. */
    public record Bench(
            String type, String id, String title, boolean skip,
            int actionsCount, int beforeCpuTokens, int inCpuTokens, int yieldsBefore, boolean yieldInCrit,
            int lines, int shards,
            int warmupIterations, int measurementIterations, int forks,
            String warmupTime, String measurementTime,
            List<Integer> threads, boolean threadsDerived, int carriers, boolean pinCarriers,
            List<LockKind> locks, List<String> profilers, List<String> jvmArgs, String mode,
            boolean interleaveForks) {

        /** JMH's benchmark mode label: thrpt for consumeCpu, avgt for textStat unless overridden. */
        public String jmhMode() {
            return mode;
        }
    }

    private static final Set<String> TOP_FIELDS = Set.of("benches", "profilers", "jvmArgs", "comment");
    private static final Set<String> BENCH_FIELDS = Set.of("name", "payload", "comment");
    private static final Set<String> PAYLOAD_FIELDS = Set.of("id", "title", "skip", "comment",
            "actionsCount", "beforeCpuTokens", "inCpuTokens", "yieldsBefore", "yieldInCrit",
            "lines", "shards",
            "warmupIterations", "measurementIterations", "forks", "warmupTime", "measurementTime",
            "threads", "carriers", "pinCarriers", "locks", "profilers", "jvmArgs", "mode", "interleaveForks");

    /**
     * Parses and validates a config.
     *
     * @param text        the JSON text
     * @param machineCpus carrier count to assume when a bench gives none
     */
    public static BenchConfig parse(String text, int machineCpus) throws ConfigException {
        JsonNode root;
        try {
            ObjectMapper om = new ObjectMapper();
            om.enable(JsonParser.Feature.ALLOW_COMMENTS);
            om.enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
            root = om.readTree(text);
        } catch (JsonProcessingException e) {
            String loc = e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr()
                    + ", column " + e.getLocation().getColumnNr();
            throw new ConfigException("malformed JSON" + loc + ": " + e.getOriginalMessage().split("\n")[0]);
        }
        if (root == null || !root.isObject()) {
            throw new ConfigException("config must be a JSON object with a \"benches\" array");
        }
        checkFields(root, TOP_FIELDS, "config");
        List<String> topProfilers = stringList(root, "profilers", "config");
        List<String> topJvmArgs = stringList(root, "jvmArgs", "config");
        JsonNode benches = root.get("benches");
        if (benches == null || !benches.isArray() || benches.isEmpty()) {
            throw new ConfigException("config needs a non-empty \"benches\" array");
        }
        List<Bench> out = new ArrayList<>();
        Set<String> ids = new LinkedHashSet<>();
        for (int i = 0; i < benches.size(); i++) {
            Bench b = parseBench(benches.get(i), i, machineCpus, topProfilers, topJvmArgs);
            if (!ids.add(b.id())) {
                throw new ConfigException("benches[" + i + "]: duplicate id '" + b.id() + "'");
            }
            out.add(b);
        }
        return new BenchConfig(List.copyOf(out));
    }

    private static Bench parseBench(JsonNode node, int index, int machineCpus,
                                    List<String> topProfilers, List<String> topJvmArgs) throws ConfigException {
        String where = "benches[" + index + "]";
        if (!node.isObject()) {
            throw new ConfigException(where + " must be an object");
        }
        checkFields(node, BENCH_FIELDS, where);
        String type = string(node, "name", where, null);
        if (type == null) {
            throw new ConfigException(where + ": missing \"name\" (benchmark type: consumeCpu or textStat)");
        }
        if (!type.equals(CONSUME_CPU) && !type.equals(TEXT_STAT)) {
            throw new ConfigException(where + ": unknown benchmark type '" + type + "' (known: consumeCpu, textStat)");
        }
        JsonNode p = node.get("payload");
        if (p == null || !p.isObject()) {
            throw new ConfigException(where + ": missing \"payload\" object");
        }
        where = where + ".payload";
        checkFields(p, PAYLOAD_FIELDS, where);
        boolean cpu = type.equals(CONSUME_CPU);

        String id = string(p, "id", where, type + (index == 0 ? "" : "-" + index));
        if (!id.matches("[A-Za-z0-9_.-]+")) {
            throw new ConfigException(where + ".id: use letters, digits, '_', '-', '.' only: '" + id + "'");
        }
        String title = string(p, "title", where, id);
        boolean skip = bool(p, "skip", where, false);
        int actions = integer(p, "actionsCount", where, 64_000, 1);
        int before = integer(p, "beforeCpuTokens", where, 0, 0);
        int in = integer(p, "inCpuTokens", where, 1_000, 0);
        int yieldsBefore = integer(p, "yieldsBefore", where, 1, 0);
        boolean yieldInCrit = bool(p, "yieldInCrit", where, true);
        int lines = integer(p, "lines", where, 100_000, 1);
        int shards = integer(p, "shards", where, 16, 1);
        if (Integer.bitCount(shards) != 1) {
            throw new ConfigException(where + ".shards must be a power of two, got " + shards);
        }
        int wi = integer(p, "warmupIterations", where, 5, 0);
        int mi = integer(p, "measurementIterations", where, 5, 1);
        int forks = integer(p, "forks", where, 3, 0);
        String wt = time(p, "warmupTime", where, "1s");
        String mt = time(p, "measurementTime", where, "1s");
        int carriers = integer(p, "carriers", where, machineCpus, 1);
        boolean pin = bool(p, "pinCarriers", where, false);

        List<Integer> threads;
        boolean derived;
        JsonNode tn = p.get("threads");
        if (tn == null || tn.isNull()) {
            threads = deriveThreads(carriers);
            derived = true;
        } else {
            if (!tn.isArray() || tn.isEmpty()) {
                throw new ConfigException(where + ".threads must be a non-empty array of positive integers");
            }
            threads = new ArrayList<>();
            for (JsonNode t : tn) {
                if (!t.isIntegralNumber() || !t.canConvertToInt() || t.asInt() <= 0) {
                    throw new ConfigException(where + ".threads: thread count must be a positive integer, got " + t);
                }
                threads.add(t.asInt());
            }
            derived = false;
        }
        if (cpu) {
            for (int t : threads) {
                if (t > actions) {
                    throw new ConfigException(where + ": " + t + " threads need actionsCount >= " + t + ", got " + actions);
                }
            }
        }

        JsonNode ln = p.get("locks");
        if (ln == null || !ln.isArray() || ln.isEmpty()) {
            throw new ConfigException(where + ".locks must be a non-empty array (known: " + LockKind.knownNames() + ")");
        }
        List<LockKind> locks = new ArrayList<>();
        for (JsonNode l : ln) {
            String name = l.isTextual() ? l.asText() : (l.isObject() && l.path("name").isTextual() ? l.get("name").asText() : null);
            if (name == null) {
                throw new ConfigException(where + ".locks: each entry is a name or {\"name\": ...}, got " + l);
            }
            try {
                LockKind k = LockKind.parse(name);
                if (!locks.contains(k)) {
                    locks.add(k);
                }
            } catch (IllegalArgumentException e) {
                throw new ConfigException(where + ".locks: " + e.getMessage());
            }
        }
        List<String> profilers = new ArrayList<>(topProfilers);
        profilers.addAll(stringList(p, "profilers", where));
        List<String> jvmArgs = new ArrayList<>(topJvmArgs);
        jvmArgs.addAll(stringList(p, "jvmArgs", where));
        String mode = string(p, "mode", where, cpu ? "thrpt" : "avgt").toLowerCase(Locale.ROOT);
        if (!Set.of("thrpt", "avgt").contains(mode)) {
            throw new ConfigException(where + ".mode must be thrpt or avgt, got '" + mode + "'");
        }
        return new Bench(type, id, title, skip, actions, before, in, yieldsBefore, yieldInCrit, lines, shards,
                wi, mi, forks, wt, mt, List.copyOf(threads), derived, carriers, pin, List.copyOf(locks),
                List.copyOf(profilers), List.copyOf(jvmArgs), mode, bool(p, "interleaveForks", where, true));
    }

    /**
     * The thread list used when a bench gives none (thesis section 2.1): 1, 2,
     * 4, ... doubling up to four times the carrier count, so the sweep goes
     * past the point where every carrier is busy; the carrier count itself is
     * included when it is not a power of two.
     */
    public static List<Integer> deriveThreads(int carriers) {
        Set<Integer> s = new java.util.TreeSet<>();
        for (int t = 1; t <= 4 * carriers; t *= 2) {
            s.add(t);
        }
        s.add(carriers);
        return List.copyOf(s);
    }

    private static void checkFields(JsonNode n, Set<String> allowed, String where) throws ConfigException {
        Iterator<Map.Entry<String, JsonNode>> it = n.fields();
        while (it.hasNext()) {
            String f = it.next().getKey();
            if (!allowed.contains(f)) {
                throw new ConfigException(where + ": unknown field \"" + f + "\" (allowed: " + String.join(", ", new java.util.TreeSet<>(allowed)) + ")");
            }
        }
    }

    private static String string(JsonNode n, String f, String where, String def) throws ConfigException {
        JsonNode v = n.get(f);
        if (v == null || v.isNull()) {
            return def;
        }
        if (!v.isTextual()) {
            throw new ConfigException(where + "." + f + " must be a string, got " + v);
        }
        return v.asText();
    }

    private static boolean bool(JsonNode n, String f, String where, boolean def) throws ConfigException {
        JsonNode v = n.get(f);
        if (v == null || v.isNull()) {
            return def;
        }
        if (!v.isBoolean()) {
            throw new ConfigException(where + "." + f + " must be true or false, got " + v);
        }
        return v.asBoolean();
    }

    private static int integer(JsonNode n, String f, String where, int def, int min) throws ConfigException {
        JsonNode v = n.get(f);
        if (v == null || v.isNull()) {
            return def;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt()) {
            throw new ConfigException(where + "." + f + " must be an integer, got " + v);
        }
        if (v.asInt() < min) {
            throw new ConfigException(where + "." + f + " must be >= " + min + ", got " + v.asInt());
        }
        return v.asInt();
    }

    private static String time(JsonNode n, String f, String where, String def) throws ConfigException {
        String s = string(n, f, where, def);
        if (!s.matches("\\d+(ns|us|ms|s|m|min)")) {
            throw new ConfigException(where + "." + f + " must look like 500ms, 1s or 2m, got '" + s + "'");
        }
        return s;
    }

    private static List<String> stringList(JsonNode n, String f, String where) throws ConfigException {
        JsonNode v = n.get(f);
        if (v == null || v.isNull()) {
            return List.of();
        }
        if (!v.isArray()) {
            throw new ConfigException(where + "." + f + " must be an array of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode e : v) {
            if (!e.isTextual()) {
                throw new ConfigException(where + "." + f + " must be an array of strings, got " + e);
            }
            out.add(e.asText());
        }
        return out;
    }
}
