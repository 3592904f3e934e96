// Conformance adapter for Guava 31.1's in-memory com.google.common.hash.BloomFilter<byte[]>
// (the system jar, checked by scripts/conform-deps.sh). Start it with
// `scripts/conform/adapter guava`.
//
// Speaks protocol version 1 of crates/conform/src/process/mod.rs on stdin/stdout through
// buffered streams; one JVM per build, so its startup is paid once per filter.
//
// What the library does, reported as is:
// - BloomFilter.create(Funnels.byteArrayFunnel(), n, p) with n as a long: a u64 n of 2^63 or more
//   arrives negative, which Guava refuses like any negative n.
// - Bad arguments throw IllegalArgumentException: answered ERROR with `Type: message`, as is any
//   other Throwable from the library (an OutOfMemoryError for a huge filter included).
// - A bad frame or key list from bloomlab ends the adapter (stderr, exit status 3); as the spec
//   decides, an unknown opcode is answered UNSUPPORTED and a HELLO with other magic bytes or
//   version ERROR.
// - Persistence: writeTo / readFrom. Guava keeps the bit count package-private, so STATS reads
//   it from the writeTo header (strategy byte, k byte, int count of longs, all big-endian;
//   crates/filters/src/guava.rs documents the format): bits = 64 x the count.
import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.jar.JarFile;

public final class GuavaAdapter {
    static final int PROTOCOL = 1;
    static final byte[] MAGIC = "bloomlab-conform".getBytes(StandardCharsets.US_ASCII);
    static final int MAX_FRAME = 1 << 30;
    static final int HELLO = 1, CREATE = 2, INSERT = 3, QUERY = 4, STATS = 5, SERIALIZE = 6,
            DESERIALIZE = 7, CLOSE = 8;
    static final byte OK = 0, ERROR = 1, UNSUPPORTED = 2;
    static final String[] NAMES = {"?", "HELLO", "CREATE", "INSERT", "QUERY", "STATS",
        "SERIALIZE", "DESERIALIZE", "CLOSE"};
    static final Funnel<byte[]> FUNNEL = Funnels.byteArrayFunnel();

    /** bloomlab broke the protocol: the adapter stops with exit status 3. */
    static final class Violation extends Exception {
        Violation(String message) {
            super(message);
        }
    }

    /** A request this adapter does not offer: answered UNSUPPORTED with its name. */
    static final class Unsupported extends Exception {
        Unsupported(String message) {
            super(message);
        }
    }

    private final DataInputStream in;
    private final OutputStream out;
    private BloomFilter<byte[]> filter;

    GuavaAdapter(InputStream in, OutputStream out) {
        this.in = new DataInputStream(new BufferedInputStream(in, 1 << 16));
        this.out = new BufferedOutputStream(out, 1 << 16);
    }

    public static void main(String[] args) throws IOException {
        GuavaAdapter adapter = new GuavaAdapter(System.in, System.out);
        try {
            adapter.serve();
        } catch (Violation e) {
            System.err.println("java/guava adapter: protocol violation by bloomlab: " + e.getMessage());
            System.exit(3);
        }
    }

    /** Answers requests until CLOSE or end of input between frames. */
    void serve() throws IOException, Violation {
        while (true) {
            byte[] head = new byte[4];
            int got = in.readNBytes(head, 0, 4);
            if (got == 0) {
                return;
            }
            if (got != 4) {
                throw new Violation("input ended inside a frame's length");
            }
            long size = Integer.toUnsignedLong(le(head).getInt());
            if (size < 1 || size > MAX_FRAME) {
                throw new Violation("frame length " + size + " outside 1..=2^30");
            }
            byte[] frame = new byte[(int) size];
            try {
                in.readFully(frame);
            } catch (EOFException e) {
                throw new Violation("input ended inside a frame of " + size + " bytes");
            }
            int op = frame[0] & 0xff;
            ByteBuffer payload = le(frame).position(1).slice().order(ByteOrder.LITTLE_ENDIAN);
            if (op == HELLO) {
                hello(payload);
            } else if (op == CLOSE) {
                send(OK, new byte[0]);
                return;
            } else {
                byte status = OK;
                byte[] body;
                try {
                    body = answer(op, payload);
                } catch (Violation e) {
                    throw e;
                } catch (Unsupported e) {
                    status = UNSUPPORTED;
                    body = e.getMessage().getBytes(StandardCharsets.UTF_8);
                } catch (Throwable e) { // the library refused (or ran out of memory)
                    status = ERROR;
                    body = (e.getClass().getSimpleName() + ": " + e.getMessage())
                            .getBytes(StandardCharsets.UTF_8);
                }
                if (body == null) {
                    status = ERROR;
                    body = (NAMES[op] + " before any CREATE or DESERIALIZE").getBytes(StandardCharsets.UTF_8);
                }
                send(status, body);
            }
        }
    }

    static ByteBuffer le(byte[] bytes) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    void send(byte status, byte[] body) throws IOException {
        byte[] head = new byte[5];
        le(head).putInt(body.length + 1).put(status);
        out.write(head);
        out.write(body);
        out.flush();
    }

    /**
     * Answers HELLO: other magic bytes or another version are answered ERROR (the spec's
     * decision: bloomlab then reports a refusal and stops the adapter).
     */
    void hello(ByteBuffer payload) throws IOException {
        byte[] magic = new byte[16];
        if (payload.remaining() == 18) {
            payload.get(magic);
        }
        if (!java.util.Arrays.equals(magic, MAGIC) || Short.toUnsignedInt(payload.getShort(16)) != PROTOCOL) {
            send(ERROR, ("this adapter speaks bloomlab-conform protocol " + PROTOCOL)
                    .getBytes(StandardCharsets.UTF_8));
            return;
        }
        String json = "{\"protocol\": 1, \"name\": \"java/guava\", \"version\": \"" + guavaVersion()
                + "\", \"language\": \"java\", \"capabilities\": [\"serialize\", \"stats\"]}";
        send(OK, json.getBytes(StandardCharsets.UTF_8));
    }

    /** Guava's Bundle-Version, read from the manifest of the jar BloomFilter was loaded from. */
    static String guavaVersion() {
        try (JarFile jar = new JarFile(new File(
                BloomFilter.class.getProtectionDomain().getCodeSource().getLocation().toURI()))) {
            String version = jar.getManifest().getMainAttributes().getValue("Bundle-Version");
            return version == null ? "unknown" : version;
        } catch (Exception e) {
            return "unknown (" + e + ")";
        }
    }

    /** The OK answer's payload, or null when no filter exists yet. */
    byte[] answer(int op, ByteBuffer payload) throws Violation, Unsupported, IOException {
        switch (op) {
            case CREATE: {
                if (payload.remaining() != 16) {
                    throw new Violation("CREATE payload of " + payload.remaining() + " bytes, not 16");
                }
                long n = payload.getLong();
                double p = payload.getDouble();
                filter = null;
                filter = BloomFilter.create(FUNNEL, n, p);
                return new byte[0];
            }
            case DESERIALIZE: {
                filter = null;
                byte[] bytes = new byte[payload.remaining()];
                payload.get(bytes);
                filter = BloomFilter.readFrom(new ByteArrayInputStream(bytes), FUNNEL);
                return new byte[0];
            }
            case INSERT:
            case QUERY:
            case STATS:
            case SERIALIZE:
                break;
            default:
                // A later protocol version's request: UNSUPPORTED, as the spec decides.
                throw new Unsupported("opcode " + op);
        }
        if (filter == null) {
            return null;
        }
        switch (op) {
            case INSERT:
                for (byte[] key : keyList(payload)) {
                    filter.put(key);
                }
                return new byte[0];
            case QUERY: {
                byte[][] keys = keyList(payload);
                byte[] bits = new byte[(keys.length + 7) >>> 3];
                for (int i = 0; i < keys.length; i++) {
                    if (filter.mightContain(keys[i])) {
                        bits[i >>> 3] |= (byte) (1 << (i & 7));
                    }
                }
                return bits;
            }
            case STATS:
                return stats();
            default:
                ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                filter.writeTo(bytes);
                return bytes.toByteArray();
        }
    }

    /** Memory and the Classic layout, from the writeTo header (the rest is discarded). */
    byte[] stats() throws IOException {
        HeaderOnly header = new HeaderOnly();
        filter.writeTo(header);
        ByteBuffer h = ByteBuffer.wrap(header.head); // big-endian, as DataOutputStream writes
        h.get(); // strategy ordinal
        int hashes = h.get() & 0xff;
        long words = Integer.toUnsignedLong(h.getInt());
        String json = "{\"memory_bytes\": " + (words * 8) + ", \"layout\": {\"layout\": \"classic\", "
                + "\"bits\": " + (words * 64) + ", \"hashes\": " + hashes + "}}";
        return json.getBytes(StandardCharsets.UTF_8);
    }

    /** Keeps the first 6 bytes written to it (the writeTo header) and drops the rest. */
    static final class HeaderOnly extends OutputStream {
        final byte[] head = new byte[6];
        long written;

        @Override
        public void write(int b) {
            if (written < head.length) {
                head[(int) written] = (byte) b;
            }
            written++;
        }
    }

    static byte[][] keyList(ByteBuffer payload) throws Violation {
        if (payload.remaining() < 4) {
            throw new Violation("key list shorter than its count");
        }
        long count = Integer.toUnsignedLong(payload.getInt());
        // Each key takes at least its 4-byte length, which bounds the count by the frame.
        if (count > payload.remaining() / 4) {
            throw new Violation("key list of " + count + " keys in " + payload.remaining() + " bytes");
        }
        byte[][] keys = new byte[(int) count][];
        for (int i = 0; i < count; i++) {
            if (payload.remaining() < 4) {
                throw new Violation("key list ends before its key " + i + " of " + count);
            }
            long size = Integer.toUnsignedLong(payload.getInt());
            if (size > payload.remaining()) {
                throw new Violation("key " + i + " of " + count + " runs past the frame");
            }
            keys[i] = new byte[(int) size];
            payload.get(keys[i]);
        }
        if (payload.hasRemaining()) {
            throw new Violation(payload.remaining() + " bytes after the key list");
        }
        return keys;
    }
}
