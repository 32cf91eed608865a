package io.mstar.worker.kernel.onnx;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;

/**
 * Opening an ONNX model on ONNX Runtime's CPU execution provider, with the options every session of the worker (and
 * the benchmarks' ONNX Runtime baselines) shares.
 */
public final class OnnxSessions {

    /** The prefix of a model that is a class path resource rather than a file. */
    public static final String CLASSPATH = "classpath:";

    private OnnxSessions() {
    }

    /**
     * Intra-op threads as given; one inter-op thread and sequential execution, since a node's graph runs on the
     * worker's step thread, which waits for it. Spinning is off: the pool's threads would otherwise spin after each
     * parallel section on the cores the engine loop, the data plane and the tokenizer need. That costs latency on
     * small runs (minilm-embed, one sentence of 19 word-pieces on 2 vCPUs: about 8 ms rather than 5-6.5 ms), nothing
     * measurable from 8 sentences on. The caller closes the options.
     */
    public static OrtSession.SessionOptions options(int intraOpThreads) throws OrtException {
        OrtSession.SessionOptions options = new OrtSession.SessionOptions();
        try {
            options.setIntraOpNumThreads(intraOpThreads);
            options.setInterOpNumThreads(1);
            options.setExecutionMode(OrtSession.SessionOptions.ExecutionMode.SEQUENTIAL);
            options.addConfigEntry("session.intra_op.allow_spinning", "0");
            return options;
        } catch (OrtException | RuntimeException e) {
            options.close();
            throw e;
        }
    }

    /**
     * A session over {@code model} (a path, or {@value #CLASSPATH} and a resource name); a file that is missing or
     * does not load is an {@link OnnxModelException} naming it, with ONNX Runtime's reason.
     */
    public static OrtSession open(String model, int intraOpThreads) {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (OrtSession.SessionOptions options = options(intraOpThreads)) {
            if (!model.startsWith(CLASSPATH)) {
                return env.createSession(model, options);
            }
            String resource = model.substring(CLASSPATH.length());
            URL url = OnnxSessions.class.getClassLoader().getResource(resource);
            if (url == null) {
                throw new OnnxModelException("ONNX model " + model + ": no such resource on the class path");
            }
            if ("file".equals(url.getProtocol())) {
                return env.createSession(Path.of(url.toURI()).toString(), options);
            }
            // inside a jar: ONNX Runtime reads only files and memory
            try (InputStream in = url.openStream()) {
                return env.createSession(in.readAllBytes(), options);
            }
        } catch (OrtException e) {
            throw new OnnxModelException("ONNX model " + model + " could not be loaded: " + e.getMessage(), e);
        } catch (IOException | URISyntaxException e) {
            throw new OnnxModelException("ONNX model " + model + " could not be read: " + e, e);
        }
    }

    /**
     * Closes {@code session} after {@code failure} of whoever opened it, keeping a failure to close as suppressed;
     * answers {@code failure}, to be thrown.
     */
    public static <E extends Exception> E closeAfter(OrtSession session, E failure) {
        try {
            session.close();
        } catch (OrtException e) {
            failure.addSuppressed(e);
        }
        return failure;
    }

    /** Closes {@code session}; ONNX Runtime failing to is an {@link IllegalStateException} naming {@code what}. */
    public static void close(OrtSession session, String what) {
        try {
            session.close();
        } catch (OrtException e) {
            throw new IllegalStateException("closing the ONNX Runtime session of " + what + " failed", e);
        }
    }
}
