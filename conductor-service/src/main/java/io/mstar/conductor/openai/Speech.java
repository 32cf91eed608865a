package io.mstar.conductor.openai;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.output.Chunk;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SynchronousSink;

/**
 * Turns a speech request's audio chunks (modality {@code audio}, int16 mono/interleaved PCM, metadata
 * {@code sample_rate} and {@code channels}) into a WAV file or raw PCM. The format is the first audio chunk's;
 * a later chunk of another format is a {@code model_error}. A request that produced no audio at all answers an
 * empty file at {@link #DEFAULT_SAMPLE_RATE} Hz mono.
 */
public final class Speech {

    static final String AUDIO_MODALITY = "audio";
    public static final String WAV = "wav";
    public static final String PCM = "pcm";
    public static final int DEFAULT_SAMPLE_RATE = 16000;
    public static final int DEFAULT_CHANNELS = 1;

    private Speech() {
    }

    /** The exact file (header sizes exact for {@code wav}); a failed request is its {@link OpenAiException}. */
    public static Mono<byte[]> collect(String format, Flux<Chunk> chunks) {
        return Mono.defer(() -> {
            Format[] fmt = {null};
            ByteArrayOutputStream samples = new ByteArrayOutputStream();
            return chunks.handle((Chunk c, SynchronousSink<byte[]> sink) -> {
                if (!c.terminal()) {
                    if (AUDIO_MODALITY.equals(c.modality())) {
                        fmt[0] = Format.check(fmt[0], c);
                        samples.writeBytes(pcm(c));
                    }
                } else if (Chunk.DONE.equals(c.type())) {
                    Format f = fmt[0] == null ? Format.DEFAULT : fmt[0];
                    byte[] pcm = samples.toByteArray();
                    if (PCM.equals(format)) {
                        sink.next(pcm);
                        return;
                    }
                    byte[] file = new byte[Wav.HEADER_BYTES + pcm.length];
                    System.arraycopy(Wav.header(f.sampleRate, f.channels, pcm.length), 0, file, 0, Wav.HEADER_BYTES);
                    System.arraycopy(pcm, 0, file, Wav.HEADER_BYTES, pcm.length);
                    sink.next(file);
                } else {
                    sink.error(ChunkData.terminalError(c, "", null));
                }
            }).singleOrEmpty().switchIfEmpty(Mono.error(() -> new OpenAiException(ErrorType.INTERNAL, null,
                    "output stream ended without a terminal chunk")));
        });
    }

    /**
     * The streamed file: for {@code wav} a header with 0xFFFFFFFF sizes before the first samples, then every audio
     * chunk's samples as they arrive. A request that fails before anything was sent errors the flux with its
     * {@link OpenAiException} (an error status); one that fails later errors it too, which cuts the connection
     * short so a client never takes a truncated file for a whole one.
     */
    public static Flux<byte[]> stream(String format, Flux<Chunk> chunks) {
        return Flux.defer(() -> {
            Format[] fmt = {null};
            boolean[] headerSent = {false};
            return chunks.concatMapIterable(c -> {
                List<byte[]> out = new ArrayList<>(2);
                if (!c.terminal()) {
                    if (AUDIO_MODALITY.equals(c.modality())) {
                        fmt[0] = Format.check(fmt[0], c);
                        if (!headerSent[0] && WAV.equals(format)) {
                            out.add(Wav.streamingHeader(fmt[0].sampleRate, fmt[0].channels));
                        }
                        headerSent[0] = true;
                        byte[] pcm = pcm(c);
                        if (pcm.length > 0) {
                            out.add(pcm);
                        }
                    }
                    return out;
                }
                if (!Chunk.DONE.equals(c.type())) {
                    throw ChunkData.terminalError(c, "", null);
                }
                if (!headerSent[0] && WAV.equals(format)) {
                    out.add(Wav.streamingHeader(DEFAULT_SAMPLE_RATE, DEFAULT_CHANNELS));
                }
                return out;
            });
        });
    }

    private static byte[] pcm(Chunk c) {
        if (!"int16".equals(ChunkData.dtype(c))) {
            throw ChunkData.broken(c, "audio must be int16 PCM, was " + ChunkData.dtype(c));
        }
        return ChunkData.rawBytes(c);
    }

    private record Format(int sampleRate, int channels) {
        static final Format DEFAULT = new Format(DEFAULT_SAMPLE_RATE, DEFAULT_CHANNELS);

        static Format check(Format seen, Chunk c) {
            Format f = new Format(ChunkData.metadataInt(c, "sample_rate", DEFAULT_SAMPLE_RATE),
                    ChunkData.metadataInt(c, "channels", DEFAULT_CHANNELS));
            if (f.sampleRate < 1 || f.channels < 1 || f.channels > 64) {
                throw ChunkData.broken(c, "bad audio format " + f);
            }
            if (seen != null && !seen.equals(f)) {
                throw ChunkData.broken(c, "audio format changed from " + seen + " to " + f);
            }
            return f;
        }
    }
}
