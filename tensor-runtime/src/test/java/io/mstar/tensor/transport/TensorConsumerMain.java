package io.mstar.tensor.transport;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mstar.graph.TensorPointerInfo;
import io.mstar.tensor.TestPattern;
import io.mstar.tensor.arena.ArenaReader;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Child process: a consumer reading a producer's published tensors with a real {@link TensorReader}. Commands on
 * stdin, one per line, one answer line each:
 * <ul>
 *   <li>{@code READ policy uuid nbytes session segment|- shmOffset} – reads with that {@link SameHostPolicy} and
 *       checks the {@link TestPattern}: {@code OK transport}, {@code MISMATCH index} or {@code FAILED reason};</li>
 *   <li>{@code HOLD host port uuid} – a raw HTTP GET through a tiny receive buffer, stopping after the status
 *       line so the server's write (and its pin) stays open: {@code HELD status};</li>
 *   <li>{@code DRAIN uuid} – reads the held response to its end and checks it: {@code OK nbytes} or
 *       {@code MISMATCH index};</li>
 *   <li>{@code QUIT} – {@code BYE}.</li>
 * </ul>
 */
public final class TensorConsumerMain {

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        ReaderSettings base = ReaderSettings.defaults("worker", Set.of("127.0.0.1")).withArenaDirectory(dir);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Socket held = null;
        InputStream heldIn = null;
        try (TensorReader shm = new TensorReader(base, new ArenaReader(dir), new SimpleMeterRegistry());
             TensorReader http = new TensorReader(base.withSameHost(SameHostPolicy.NEVER), new ArenaReader(dir),
                     new SimpleMeterRegistry())) {
            System.out.println("READY");
            for (String line; (line = in.readLine()) != null; ) {
                String[] cmd = line.split(" ");
                switch (cmd[0]) {
                    case "READ" -> {
                        TensorReader reader = SameHostPolicy.valueOf(cmd[1]) == SameHostPolicy.NEVER ? http : shm;
                        long uuid = Long.parseLong(cmd[2]);
                        long nbytes = Long.parseLong(cmd[3]);
                        TensorPointerInfo info = new TensorPointerInfo(uuid, List.of(nbytes), List.of(1L), "uint8",
                                nbytes, 0L, 0L, cmd[4], "producer", 1, 0, "-".equals(cmd[5]) ? null : cmd[5],
                                Long.parseLong(cmd[6]), null, null);
                        ByteBuffer dst = ByteBuffer.allocateDirect((int) nbytes);
                        try {
                            ReadResult r = reader.read("r", info, dst).get(30, TimeUnit.SECONDS);
                            long bad = TestPattern.firstMismatch(dst, uuid, 0);
                            System.out.println(bad < 0 ? "OK " + r.transport() : "MISMATCH " + bad);
                        } catch (ExecutionException e) {
                            System.out.println("FAILED " + (e.getCause() instanceof TensorTransportException t
                                    ? t.reason() : e.getCause().toString()));
                        }
                    }
                    case "HOLD" -> {
                        held = new Socket();
                        held.setReceiveBufferSize(4096); // the server cannot flush a large body into this
                        held.connect(new InetSocketAddress(cmd[1], Integer.parseInt(cmd[2])));
                        held.getOutputStream().write(("GET /tensors/" + cmd[3] + " HTTP/1.1\r\nHost: x\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                        held.getOutputStream().flush();
                        heldIn = held.getInputStream();
                        byte[] status = heldIn.readNBytes(12); // "HTTP/1.1 200"
                        System.out.println("HELD " + new String(status, StandardCharsets.US_ASCII).substring(9));
                    }
                    case "DRAIN" -> {
                        long uuid = Long.parseLong(cmd[1]);
                        String headers = headers(heldIn);
                        int length = contentLength(headers);
                        byte[] body = heldIn.readNBytes(length);
                        held.close();
                        held = null;
                        long bad = body.length < length ? body.length
                                : TestPattern.firstMismatch(ByteBuffer.wrap(body), uuid, 0);
                        System.out.println(bad < 0 ? "OK " + body.length : "MISMATCH " + bad);
                    }
                    case "QUIT" -> {
                        System.out.println("BYE");
                        return;
                    }
                    default -> System.out.println("ERROR unknown command " + line);
                }
                System.out.flush();
            }
        } finally {
            if (held != null) {
                held.close();
            }
        }
    }

    /** The rest of the header block after the status code, up to and including the blank line. */
    private static String headers(InputStream in) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        while (matched < end.length) {
            int b = in.read();
            if (b < 0) {
                throw new IllegalStateException("connection closed inside the headers");
            }
            out.write(b);
            matched = b == end[matched] ? matched + 1 : (b == end[0] ? 1 : 0);
        }
        return out.toString(StandardCharsets.US_ASCII);
    }

    private static int contentLength(String headers) {
        for (String h : headers.split("\r\n")) {
            int colon = h.indexOf(':');
            if (colon > 0 && h.substring(0, colon).trim().equalsIgnoreCase("content-length")) {
                return Integer.parseInt(h.substring(colon + 1).trim());
            }
        }
        throw new IllegalStateException("no content-length in " + headers);
    }
}
