// The Java half of scripts/guava-timing.sh: times Guava 31.1's BloomFilter (stringFunnel(UTF_8),
// MURMUR128_MITZ_64, Guava's sizing) and bloomlab's `classic/murmur3/mitz64/flat` (the Rust half,
// examples/guava_peer.rs, started here as a child process) on the same string keys, part by part,
// alternating, so that each round's ratio compares two timings taken within a second of each other.
//
// Usage: GuavaTiming PEER N P WARMUP ROUNDS OUT_JSON
//   PEER     the guava_peer binary; it writes the key batches to a temp directory this reads
//   WARMUP   untimed rounds of every Guava operation before measuring (JIT compilation)
//   ROUNDS   measured rounds; each times, for insert, lookup-present and lookup-absent, one pass
//            of Guava and one of bloomlab (the order alternating from round to round), each pass
//            after an untimed pass over the same batch
// System properties written to the JSON as they are: revision, guava.version, jvm.flags.
//
// Before timing it checks that both filters have the same size and k, that both find every present
// key, and that both report the same number of absent keys present (the same filter bit for bit
// gives the same false positives); a difference exits with status 1.

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

public final class GuavaTiming {
  static final String PREFIX = "article-content-hash-";
  static final String[] OPS = {"insert", "lookup-present", "lookup-absent"};
  // Results go here so the JIT cannot drop the loops.
  static volatile long sink;

  static String[] readKeys(Path path) throws IOException {
    List<String> keys = Files.readAllLines(path, StandardCharsets.UTF_8);
    return keys.toArray(new String[0]);
  }

  static long pass(BloomFilter<CharSequence> bf, String op, String[] present, String[] absent) {
    long acc = 0;
    switch (op) {
      case "insert":
        for (String k : present) {
          if (bf.put(k)) {
            acc++;
          }
        }
        break;
      case "lookup-present":
        for (String k : present) {
          if (bf.mightContain(k)) {
            acc++;
          }
        }
        break;
      default:
        for (String k : absent) {
          if (bf.mightContain(k)) {
            acc++;
          }
        }
    }
    return acc;
  }

  // One untimed pass, then one timed: ns per key.
  static double timeGuava(
      BloomFilter<CharSequence> bf, String op, String[] present, String[] absent) {
    sink += pass(bf, op, present, absent);
    long start = System.nanoTime();
    sink += pass(bf, op, present, absent);
    long elapsed = System.nanoTime() - start;
    int len = op.equals("lookup-absent") ? absent.length : present.length;
    return (double) elapsed / len;
  }

  static double timePeer(PrintWriter to, BufferedReader from, String op) throws IOException {
    to.println("time " + op);
    to.flush();
    String line = from.readLine();
    if (line == null) {
      throw new IOException("guava_peer ended before answering `time " + op + "`");
    }
    return Double.parseDouble(line.trim());
  }

  static String json(List<Double> xs) {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < xs.size(); i++) {
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(String.format("%.3f", xs.get(i)));
    }
    return sb.append("]").toString();
  }

  static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 6) {
      System.err.println("usage: GuavaTiming PEER N P WARMUP ROUNDS OUT_JSON");
      System.exit(2);
    }
    String peer = args[0];
    long n = Long.parseLong(args[1]);
    double p = Double.parseDouble(args[2]);
    int warmup = Integer.parseInt(args[3]);
    int rounds = Integer.parseInt(args[4]);
    Path out = Paths.get(args[5]);

    Path dir = Files.createTempDirectory("guava-timing");
    Process proc =
        new ProcessBuilder(peer, Long.toString(n), Double.toString(p), dir.toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    PrintWriter to =
        new PrintWriter(new OutputStreamWriter(proc.getOutputStream(), StandardCharsets.UTF_8));
    BufferedReader from =
        new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8));
    String ready = from.readLine();
    if (ready == null || !ready.startsWith("ready ")) {
      System.err.println("guava_peer did not start: " + ready);
      System.exit(2);
    }
    String[] r = ready.split(" ");
    long peerBits = Long.parseLong(r[1]);
    int peerK = Integer.parseInt(r[2]);
    long peerPresentHits = Long.parseLong(r[3]);
    long peerAbsentHits = Long.parseLong(r[4]);

    String[] present = readKeys(dir.resolve("present.txt"));
    String[] absent = readKeys(dir.resolve("absent.txt"));
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    }

    BloomFilter<CharSequence> bf =
        BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), n, p);
    long buildStart = System.nanoTime();
    for (long i = 0; i < n; i++) {
      bf.put(PREFIX + i);
    }
    double buildNs = (double) (System.nanoTime() - buildStart) / n;
    // writeTo: strategy byte, k byte, int count of longs, the longs.
    ByteArrayOutputStream file = new ByteArrayOutputStream();
    bf.writeTo(file);
    byte[] bytes = file.toByteArray();
    int guavaK = bytes[1] & 0xff;
    long guavaBits = (long) (bytes.length - 6) * 8;
    long presentHits = pass(bf, "lookup-present", present, absent);
    long absentHits = pass(bf, "lookup-absent", present, absent);
    if (guavaBits != peerBits
        || guavaK != peerK
        || presentHits != present.length
        || peerPresentHits != present.length
        || absentHits != peerAbsentHits) {
      System.err.printf(
          "FAIL: the filters differ: Guava %d bits, k = %d, %d/%d present found, %d/%d absent"
              + " positive; bloomlab %d bits, k = %d, %d present found, %d absent positive%n",
          guavaBits, guavaK, presentHits, present.length, absentHits, absent.length, peerBits,
          peerK, peerPresentHits, peerAbsentHits);
      System.exit(1);
    }
    System.err.printf(
        "same filter: %d bits, k = %d; %d of %d absent keys positive on both sides%n",
        guavaBits, guavaK, absentHits, absent.length);

    for (int w = 0; w < warmup; w++) {
      for (String op : OPS) {
        sink += pass(bf, op, present, absent);
      }
    }
    List<List<Double>> guava = new ArrayList<>();
    List<List<Double>> ours = new ArrayList<>();
    for (int i = 0; i < OPS.length; i++) {
      guava.add(new ArrayList<>());
      ours.add(new ArrayList<>());
    }
    for (int round = 0; round < rounds; round++) {
      for (int i = 0; i < OPS.length; i++) {
        String op = OPS[i];
        if (round % 2 == 0) {
          guava.get(i).add(timeGuava(bf, op, present, absent));
          ours.get(i).add(timePeer(to, from, op));
        } else {
          ours.get(i).add(timePeer(to, from, op));
          guava.get(i).add(timeGuava(bf, op, present, absent));
        }
      }
      System.err.printf(
          "round %d/%d: lookup-present Guava %.1f ns, bloomlab %.1f ns%n",
          round + 1, rounds, guava.get(1).get(round), ours.get(1).get(round));
    }
    to.println("quit");
    to.flush();
    proc.waitFor();

    StringBuilder sb = new StringBuilder("{\n");
    sb.append("  \"revision\": ").append(quote(System.getProperty("revision", "unknown"))).append(",\n");
    sb.append("  \"unix_time\": ").append(System.currentTimeMillis() / 1000).append(",\n");
    sb.append("  \"java\": ").append(quote(System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"))).append(",\n");
    sb.append("  \"jvm_flags\": ").append(quote(System.getProperty("jvm.flags", ""))).append(",\n");
    sb.append("  \"guava\": ").append(quote(System.getProperty("guava.version", "unknown"))).append(",\n");
    sb.append("  \"n\": ").append(n).append(",\n");
    sb.append("  \"p\": ").append(p).append(",\n");
    sb.append("  \"bits\": ").append(guavaBits).append(",\n");
    sb.append("  \"hashes\": ").append(guavaK).append(",\n");
    sb.append("  \"present_batch\": ").append(present.length).append(",\n");
    sb.append("  \"absent_batch\": ").append(absent.length).append(",\n");
    sb.append("  \"absent_positives\": ").append(absentHits).append(",\n");
    sb.append("  \"guava_build_ns_per_key\": ").append(String.format("%.3f", buildNs)).append(",\n");
    sb.append("  \"warmup_rounds\": ").append(warmup).append(",\n");
    sb.append("  \"ops\": [\n");
    for (int i = 0; i < OPS.length; i++) {
      sb.append("    {\"op\": ").append(quote(OPS[i]))
          .append(", \"guava_ns\": ").append(json(guava.get(i)))
          .append(", \"bloomlab_ns\": ").append(json(ours.get(i))).append("}")
          .append(i + 1 < OPS.length ? ",\n" : "\n");
    }
    sb.append("  ]\n}\n");
    Path parent = out.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.write(out, sb.toString().getBytes(StandardCharsets.UTF_8));
    System.err.println("wrote " + out);
  }
}
