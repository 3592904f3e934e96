// The Java half of scripts/guava-crosscheck.sh: builds, reads and queries Guava BloomFilter files
// with the system Guava jar, so that the script can compare them with bloomlab's.
//
// Usage:
//   build FUNNEL STRATEGY N P KEYS OUT        create(funnel, N, P[, strategy]), put every key, writeTo
//   union FUNNEL N P KEYS_A KEYS_B OUT        two MITZ_64 filters, a.putAll(b), writeTo
//   query FUNNEL FILE KEYS ANSWERS REWRITTEN  readFrom FILE; one 1/0 mightContain line per key;
//                                             writeTo REWRITTEN (must equal FILE)
//   corrupt FILE                              prints what readFrom does on corrupted copies of FILE
// FUNNEL: long | int | utf8 | bytes (hex per line); STRATEGY: mitz64 | mitz32.
//
// MURMUR128_MITZ_32: Guava 31 has no public way to create one. The package-private
// BloomFilter.create(Funnel, long, double, Strategy) is marked @VisibleForTesting and is the exact
// code path create() runs with MITZ_64 hard-wired, so it is called through reflection (the jar is
// on the class path, an unnamed module, so setAccessible is permitted).

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import com.google.common.io.BaseEncoding;
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.ByteArrayInputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;

public final class GuavaCrosscheck {
  interface KeyReader {
    Object parse(String line);
  }

  static Funnel<?> funnel(String name) {
    switch (name) {
      case "long":
        return Funnels.longFunnel();
      case "int":
        return Funnels.integerFunnel();
      case "utf8":
        return Funnels.stringFunnel(StandardCharsets.UTF_8);
      case "bytes":
        return Funnels.byteArrayFunnel();
      default:
        throw new IllegalArgumentException("unknown funnel " + name);
    }
  }

  static KeyReader reader(String name) {
    switch (name) {
      case "long":
        return Long::parseLong;
      case "int":
        return Integer::parseInt;
      case "utf8":
        return line -> line;
      case "bytes":
        return line -> BaseEncoding.base16().lowerCase().decode(line.toLowerCase());
      default:
        throw new IllegalArgumentException("unknown funnel " + name);
    }
  }

  interface KeyAction {
    void accept(Object key) throws IOException;
  }

  // Streams the keys: the n > 2^24 combination has too many to hold as boxed objects.
  static void forEachKey(String funnel, String path, KeyAction action) throws IOException {
    KeyReader r = reader(funnel);
    try (BufferedReader in = Files.newBufferedReader(Paths.get(path), StandardCharsets.UTF_8)) {
      String line;
      while ((line = in.readLine()) != null) {
        action.accept(r.parse(line));
      }
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static BloomFilter<Object> create(String funnel, String strategy, long n, double p)
      throws Exception {
    Funnel f = funnel(funnel);
    if (strategy.equals("mitz64")) {
      return BloomFilter.create(f, n, p);
    }
    if (!strategy.equals("mitz32")) {
      throw new IllegalArgumentException("unknown strategy " + strategy);
    }
    Class<?> strategyInterface = Class.forName("com.google.common.hash.BloomFilter$Strategy");
    Class<?> strategies = Class.forName("com.google.common.hash.BloomFilterStrategies");
    Object mitz32 = null;
    for (Object c : strategies.getEnumConstants()) {
      if (((Enum<?>) c).name().equals("MURMUR128_MITZ_32")) {
        mitz32 = c;
      }
    }
    if (mitz32 == null || ((Enum<?>) mitz32).ordinal() != 0) {
      throw new IllegalStateException("MURMUR128_MITZ_32 is not ordinal 0 in this Guava");
    }
    Method m =
        BloomFilter.class.getDeclaredMethod(
            "create", Funnel.class, long.class, double.class, strategyInterface);
    m.setAccessible(true);
    return (BloomFilter<Object>) m.invoke(null, f, n, p, mitz32);
  }

  static void write(BloomFilter<Object> bf, String path) throws IOException {
    try (OutputStream out = new BufferedOutputStream(new FileOutputStream(path))) {
      bf.writeTo(out);
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static BloomFilter<Object> read(String funnel, InputStream in) throws IOException {
    return BloomFilter.readFrom(in, (Funnel) funnel(funnel));
  }

  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "build":
        {
          BloomFilter<Object> bf =
              create(args[1], args[2], Long.parseLong(args[3]), Double.parseDouble(args[4]));
          forEachKey(args[1], args[5], bf::put);
          write(bf, args[6]);
          break;
        }
      case "union":
        {
          long n = Long.parseLong(args[2]);
          double p = Double.parseDouble(args[3]);
          BloomFilter<Object> a = create(args[1], "mitz64", n, p);
          BloomFilter<Object> b = create(args[1], "mitz64", n, p);
          forEachKey(args[1], args[4], a::put);
          forEachKey(args[1], args[5], b::put);
          a.putAll(b);
          write(a, args[6]);
          break;
        }
      case "query":
        {
          BloomFilter<Object> bf;
          try (InputStream in = new FileInputStream(args[2])) {
            bf = read(args[1], in);
          }
          try (BufferedWriter out =
              Files.newBufferedWriter(Paths.get(args[4]), StandardCharsets.US_ASCII)) {
            forEachKey(args[1], args[3], k -> out.write(bf.mightContain(k) ? "1\n" : "0\n"));
          }
          write(bf, args[5]);
          break;
        }
      case "corrupt":
        corrupt(Files.readAllBytes(Paths.get(args[1])));
        break;
      default:
        throw new IllegalArgumentException("unknown command " + args[0]);
    }
  }

  static void tryRead(String what, byte[] bytes) {
    String outcome;
    try {
      ByteArrayInputStream in = new ByteArrayInputStream(bytes);
      BloomFilter<Object> bf = read("long", in);
      outcome = "accepted (expectedFpp " + bf.expectedFpp() + "), " + in.available()
          + " bytes left unread";
    } catch (Throwable t) {
      Throwable cause = t.getCause();
      outcome = t.getClass().getSimpleName() + ": " + t.getMessage()
          + (cause == null ? "" : " <- " + cause.getClass().getSimpleName() + ": "
              + cause.getMessage());
    }
    System.out.println("  " + what + ": " + outcome);
  }

  static void corrupt(byte[] good) {
    System.out.println("Guava 31.1 readFrom on corrupted copies of a " + good.length
        + "-byte file:");
    byte[] b;
    b = good.clone();
    b[0] = 2;
    tryRead("strategy ordinal 2", b);
    b = good.clone();
    b[0] = (byte) 0xff;
    tryRead("strategy ordinal -1", b);
    b = good.clone();
    b[1] = 0;
    tryRead("k = 0", b);
    b = withWords(good, 0);
    tryRead("word count 0", b);
    b = withWords(good, -1);
    tryRead("word count -1", b);
    b = withWords(good, Integer.MAX_VALUE);
    tryRead("word count 2^31-1 (absurd)", b);
    tryRead("truncated by 1 byte", Arrays.copyOf(good, good.length - 1));
    tryRead("header only 3 bytes", Arrays.copyOf(good, 3));
    tryRead("2 trailing bytes", Arrays.copyOf(good, good.length + 2));
  }

  static byte[] withWords(byte[] good, int words) {
    byte[] b = good.clone();
    b[2] = (byte) (words >>> 24);
    b[3] = (byte) (words >>> 16);
    b[4] = (byte) (words >>> 8);
    b[5] = (byte) words;
    return b;
  }
}
