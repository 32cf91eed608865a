package io.mstar.conductor.openai;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The body of {@code POST /v1/audio/speech} (OpenAI's shape).
 *
 * @param voice          accepted and ignored (the model has one voice)
 * @param responseFormat {@code wav} (default) or {@code pcm}; others are refused
 * @param speed          absent or 1.0
 * @param stream         extension: stream the audio as it is synthesised (chunked, WAV sizes 0xFFFFFFFF)
 * @param seed           extension: the sampling seed, for reproducible audio
 */
public record SpeechRequest(@JsonProperty("model") String model, @JsonProperty("input") String input,
        @JsonProperty("voice") Object voice, @JsonProperty("response_format") String responseFormat,
        @JsonProperty("speed") Double speed, @JsonProperty("stream") Boolean stream,
        @JsonProperty("stream_format") String streamFormat, @JsonProperty("seed") Long seed,
        @JsonProperty("instructions") String instructions) {
}
