package io.mstar.conductor.api;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Limits of the public API ({@code mstar.conductor.api.*}); a request beyond them is refused before it reaches the
 * lifecycle loop.
 *
 * @param maxBodySize     largest request body (default 8MB); larger is 413 {@code payload_too_large}. Base64
 *                        inputs are a third larger than their bytes.
 * @param maxInputBytes   largest total of decoded input tensor bytes of one request (default 4MB); larger is 413
 * @param maxTokens       the most {@code max_tokens} a request may ask for (default 4096); more is 400
 * @param defaultMaxTokens {@code max_tokens} when the request gives none (default 16)
 * @param accessLog       one log line per response the HTTP server finished writing (default on;
 *                        {@link AccessLogConfiguration})
 */
@ConfigurationProperties("mstar.conductor.api")
public record ApiProperties(@DefaultValue("8MB") DataSize maxBodySize, @DefaultValue("4MB") DataSize maxInputBytes,
        @DefaultValue("4096") int maxTokens, @DefaultValue("16") int defaultMaxTokens,
        @DefaultValue("true") boolean accessLog) {

    public ApiProperties {
        if (maxTokens < 1 || defaultMaxTokens < 1 || defaultMaxTokens > maxTokens) {
            throw new IllegalArgumentException("mstar.conductor.api: need 1 <= default-max-tokens <= max-tokens");
        }
    }
}
