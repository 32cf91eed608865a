package io.mstar.tensor.collective;

import static org.bytedeco.cuda.global.nccl.NCCL_API_MAGIC;
import static org.bytedeco.cuda.global.nccl.NCCL_UNIQUE_ID_BYTES;
import static org.bytedeco.cuda.global.nccl.NCCL_VERSION_CODE;
import static org.bytedeco.cuda.global.nccl.ncclGetErrorString;
import static org.bytedeco.cuda.global.nccl.ncclGetVersion;

import java.util.Optional;

import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclConfig_t;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.Pointer;

/**
 * NCCL as the JavaCPP CUDA presets bind it ({@code org.bytedeco.cuda.global.nccl}, JNI built against NCCL 2.29 and
 * CUDA 13): whether it loads, the communicator configuration, the unique id's bytes, result codes as text.
 * {@code libnccl.so.2} itself comes from the machine, as cuBLAS does (docs/tensor-runtime.md#collectives).
 */
final class NcclLibrary {

    /** NCCL reads it at its first communicator; "0" keeps NVLink multicast (NVLS) off. */
    static final String NVLS_VARIABLE = "NCCL_NVLS_ENABLE";

    /** {@code NCCL_CONFIG_UNDEF_INT}: a field NCCL fills with its default. */
    private static final int UNDEFINED = Integer.MIN_VALUE;

    private NcclLibrary() {
    }

    /** Why NCCL does not load here, or empty when it does; asked once per process. */
    static Optional<String> unavailableReason() {
        return Availability.REASON;
    }

    /** Whether the process's environment keeps NVLink multicast off, as every NCCL user here must. */
    static boolean multicastOff() {
        return "0".equals(System.getenv(NVLS_VARIABLE));
    }

    /**
     * {@code NCCL_CONFIG_INITIALIZER} with {@code blocking = 0}: init and collectives return {@code ncclInProgress}
     * instead of blocking, so that every wait for a peer is a poll this side can bound and abort.
     */
    static ncclConfig_t nonBlockingConfig() {
        ncclConfig_t config = new ncclConfig_t();
        config.size(Loader.sizeof(ncclConfig_t.class)).magic(NCCL_API_MAGIC).version(NCCL_VERSION_CODE);
        config.cgaClusterSize(UNDEFINED).minCTAs(UNDEFINED).maxCTAs(UNDEFINED).splitShare(UNDEFINED)
                .trafficClass(UNDEFINED).collnetEnable(UNDEFINED).CTAPolicy(UNDEFINED).shrinkShare(UNDEFINED)
                .nvlsCTAs(UNDEFINED).nChannelsPerNetPeer(UNDEFINED).nvlinkCentricSched(UNDEFINED)
                .graphUsageMode(UNDEFINED).numRmaCtx(UNDEFINED);
        config.netName(null).commName(null);
        return config.blocking(0);
    }

    static ncclUniqueId uniqueId(byte[] bytes) {
        ncclUniqueId id = new ncclUniqueId();
        id.internal().put(bytes, 0, NCCL_UNIQUE_ID_BYTES);
        return id;
    }

    static byte[] bytes(ncclUniqueId id) {
        byte[] bytes = new byte[NCCL_UNIQUE_ID_BYTES];
        id.internal().get(bytes);
        return bytes;
    }

    /** A pointer at a numeric address (device memory, a stream handle) that owns nothing. */
    static Pointer at(long address) {
        return new Pointer() {
            {
                this.address = address;
            }
        };
    }

    /** {@code ncclInvalidUsage (5): invalid usage (run with NCCL_DEBUG=WARN for details)}. */
    static String describe(int result) {
        BytePointer text = ncclGetErrorString(result);
        return "nccl result " + result + ": " + (text == null ? "?" : text.getString());
    }

    /** The linked library's version, {@code 2.29.3}. */
    static String version() {
        int[] code = new int[1];
        ncclGetVersion(code);
        return code[0] / 10000 + "." + code[0] / 100 % 100 + "." + code[0] % 100;
    }

    /** The load result, computed once when first asked (class initialization is thread-safe). */
    private static final class Availability {
        static final Optional<String> REASON = load();

        private static Optional<String> load() {
            try {
                Loader.load(nccl.class);
                return Optional.empty();
            } catch (UnsatisfiedLinkError | NoClassDefFoundError | ExceptionInInitializerError e) {
                return Optional.of("NCCL unavailable: " + e + " (put the folders of libnccl.so.2 and libcudart.so.13 "
                        + "on LD_LIBRARY_PATH)");
            }
        }
    }
}
