package io.mstar.conductor.openai;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The plain chat template of the chat route: every message as {@code <role>: <content>\n} in order, then
 * {@code assistant:} for the model to continue. Roles are {@code system}, {@code user}, {@code assistant};
 * {@code developer} is written as {@code system}. Content is written as given (no escaping: the byte-level model
 * has no special tokens a client could forge).
 */
public final class PromptTemplate {

    static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant");
    /** The tail the model continues from. */
    public static final String ASSISTANT_TURN = "assistant:";

    private PromptTemplate() {
    }

    /** The prompt of a validated message list. */
    public static String render(List<ChatRequest.Message> messages) {
        StringBuilder prompt = new StringBuilder();
        for (int i = 0; i < messages.size(); i++) {
            ChatRequest.Message m = messages.get(i);
            String role = "developer".equals(m.role()) ? "system" : m.role();
            prompt.append(role).append(": ").append(text(m.content(), "messages[" + i + "].content")).append('\n');
        }
        return prompt.append(ASSISTANT_TURN).toString();
    }

    /** Checks every message: a known role and text content. */
    static void validate(List<ChatRequest.Message> messages) {
        if (messages == null || messages.isEmpty()) {
            throw OpenAiException.invalid("messages", "'messages' must be a non-empty array");
        }
        for (int i = 0; i < messages.size(); i++) {
            ChatRequest.Message m = messages.get(i);
            if (m == null) {
                throw OpenAiException.invalid("messages[" + i + "]", "messages[" + i + "] must be an object");
            }
            if (m.role() == null || !ROLES.contains(m.role())) {
                throw OpenAiException.invalid("messages[" + i + "].role", "messages[" + i + "].role must be one of "
                        + "system, developer, user, assistant (tool messages are not supported); was " + m.role());
            }
            text(m.content(), "messages[" + i + "].content");
        }
    }

    /** A message's text: a string, or the concatenated text of a list of {@code {"type":"text"}} parts. */
    static String text(Object content, String param) {
        if (content instanceof String s) {
            return s;
        }
        if (content instanceof List<?> parts) {
            StringBuilder text = new StringBuilder();
            for (Object part : parts) {
                if (!(part instanceof Map<?, ?> p) || !"text".equals(p.get("type")) || !(p.get("text") instanceof String t)) {
                    throw OpenAiException.invalid(param, param + " parts must be {\"type\":\"text\",\"text\":...}; "
                            + "images, audio and files are not supported");
                }
                text.append(t);
            }
            return text.toString();
        }
        throw OpenAiException.invalid(param, param + " must be a string or an array of text parts");
    }
}
