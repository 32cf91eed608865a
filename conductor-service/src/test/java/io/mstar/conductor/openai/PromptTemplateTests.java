package io.mstar.conductor.openai;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class PromptTemplateTests {

    @Test
    void everyMessageIsRoleColonContentOnItsOwnLineThenTheAssistantTurn() {
        String prompt = PromptTemplate.render(List.of(
                new ChatRequest.Message("system", "Be terse.", null),
                new ChatRequest.Message("developer", "No emoji.", null),
                new ChatRequest.Message("user", "Hi\nthere", null),
                new ChatRequest.Message("assistant", "Hello.", null),
                new ChatRequest.Message("user", List.of(Map.of("type", "text", "text", "Zwei "),
                        Map.of("type", "text", "text", "Teile: äß€😀")), "bob")));
        assertThat(prompt).isEqualTo("system: Be terse.\nsystem: No emoji.\nuser: Hi\nthere\nassistant: Hello.\n"
                + "user: Zwei Teile: äß€😀\nassistant:");
    }

    @Test
    void anEmptyContentStillGetsItsLine() {
        assertThat(PromptTemplate.render(List.of(new ChatRequest.Message("user", "", null))))
                .isEqualTo("user: \nassistant:");
        assertThat(PromptTemplate.render(List.of(new ChatRequest.Message("user", List.of(), null))))
                .isEqualTo("user: \nassistant:");
    }
}
