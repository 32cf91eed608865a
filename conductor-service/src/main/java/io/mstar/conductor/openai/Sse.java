package io.mstar.conductor.openai;

import java.nio.charset.StandardCharsets;

/**
 * OpenAI's server-sent-event framing: each event is one {@code data: <json>} line and a blank line; the stream of
 * a successful call ends with {@code data: [DONE]}. No event names or ids. The JSON is compact (one line), so no
 * payload needs splitting over several {@code data:} lines.
 */
public final class Sse {

    public static final String DONE_PAYLOAD = "[DONE]";

    private Sse() {
    }

    public static byte[] event(String json) {
        if (json.indexOf('\n') >= 0 || json.indexOf('\r') >= 0) {
            throw new IllegalArgumentException("an SSE payload must be one line");
        }
        return ("data: " + json + "\n\n").getBytes(StandardCharsets.UTF_8);
    }

    public static byte[] done() {
        return event(DONE_PAYLOAD);
    }
}
