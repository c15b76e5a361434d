package org.fibersync.bench;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The CSV the Python report tool reads: one row per (bench, lock, threads),
 * written as soon as that run finished so that a long sweep that dies keeps
 * what it measured.
 */
public final class CsvOut implements AutoCloseable {
    /** The header row, exactly. */
    public static final String HEADER =
            "source,bench,lock,threads,carriers,score,score_error,unit,forks,median_over_forks,mode";

    /** One result row. */
    public record Row(String bench, String lock, int threads, int carriers, double score, double scoreError,
                      String unit, int forks, double medianOverForks, String mode) {
        String toCsv() {
            return String.join(",", "java", bench, lock, Integer.toString(threads), Integer.toString(carriers),
                    num(score), num(scoreError), unit, Integer.toString(forks), num(medianOverForks), mode);
        }
    }

    private final Writer out;

    public CsvOut(Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        out = Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
        out.write(HEADER);
        out.write('\n');
        out.flush();
    }

    public void write(Row r) throws IOException {
        out.write(r.toCsv());
        out.write('\n');
        out.flush();
    }

    @Override
    public void close() throws IOException {
        out.close();
    }

    /** Plain decimal notation (no exponent), NaN as "NaN": both parse in Python's float(). */
    static String num(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "NaN";
        }
        return String.format(Locale.ROOT, "%.6f", v).replaceAll("0+$", "").replaceAll("\\.$", "");
    }

    /** Median; the mean of the two middle values for an even count. */
    public static double median(List<Double> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        double[] a = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(a);
        int n = a.length;
        return n % 2 == 1 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
    }
}
