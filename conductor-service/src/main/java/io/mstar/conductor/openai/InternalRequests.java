package io.mstar.conductor.openai;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.mstar.conductor.api.ApiProperties;
import io.mstar.conductor.api.SubmissionMapping;
import io.mstar.conductor.api.SubmitRequest;
import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.lifecycle.AbortReason;
import io.mstar.conductor.lifecycle.LifecycleLoop;
import io.mstar.conductor.lifecycle.RequestLifecycle;
import io.mstar.conductor.lifecycle.Submission;
import io.mstar.conductor.model.ConductorPolicies;
import io.mstar.conductor.model.ConductorPolicy;
import reactor.core.publisher.Mono;

/**
 * The routes' way in: the same {@link SubmitRequest} → {@link SubmissionMapping} → {@code RequestLifecycle.submit}
 * path as {@code POST /v1/requests}, in process. Mapping runs on the caller's thread; submission on the lifecycle
 * loop.
 */
final class InternalRequests {

    private final LifecycleLoop loop;
    private final ConductorPolicies policies;
    private final SubmissionMapping mapping;

    InternalRequests(LifecycleLoop loop, ConductorPolicies policies, ApiProperties api) {
        this.loop = loop;
        this.policies = policies;
        this.mapping = new SubmissionMapping(api);
    }

    /**
     * The model's prompt input: its one input, as UTF-8 bytes for a uint8 input, or one int32 token per UTF-8 byte
     * for an int32 input (a byte-level vocabulary).
     */
    Map<String, SubmitRequest.Input> textInput(String model, String text) {
        ConductorPolicy policy = policies.of(model).orElseThrow(() -> new OpenAiException(ErrorType.UNKNOWN_MODEL,
                "model", "model '" + model + "' is not served"));
        Map<String, String> inputs = policy.inputDtypes();
        if (inputs.size() == 1) {
            Map.Entry<String, String> input = inputs.entrySet().iterator().next();
            if ("uint8".equals(input.getValue())) {
                return Map.of(input.getKey(), new SubmitRequest.Input(text, null, null, null, null));
            }
            if ("int32".equals(input.getValue())) {
                List<Long> tokens = new ArrayList<>();
                for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
                    tokens.add((long) (b & 0xff));
                }
                return Map.of(input.getKey(), new SubmitRequest.Input(null, tokens, null, null, null));
            }
        }
        throw new OpenAiException(ErrorType.INVALID_INPUT, "model", "model '" + model + "' takes no text input "
                + "(inputs " + inputs + ")");
    }

    /** Maps and submits one request. */
    Mono<RequestLifecycle.Admission> submit(SubmitRequest body) {
        Submission submission = mapping.map(body);
        return loop.askRequests(requests -> requests.submit(submission));
    }

    /**
     * Submits every request in one turn of the loop: all are admitted (or queued), or, when one is refused, the ones
     * before it are aborted ({@code client_cancel}) and the refusal is the answer, naming the input.
     */
    Mono<List<RequestLifecycle.Admission>> submitAll(List<SubmitRequest> bodies, String param) {
        List<Submission> submissions = new ArrayList<>(bodies.size());
        for (int i = 0; i < bodies.size(); i++) {
            try {
                submissions.add(mapping.map(bodies.get(i)));
            } catch (ConductorException e) {
                throw new OpenAiException(e.type(), param, param + "[" + i + "]: " + e.getMessage());
            }
        }
        return loop.askRequests(requests -> {
            List<RequestLifecycle.Admission> admitted = new ArrayList<>(submissions.size());
            for (int i = 0; i < submissions.size(); i++) {
                try {
                    admitted.add(requests.submit(submissions.get(i)));
                } catch (ConductorException e) {
                    admitted.forEach(a -> requests.abort(a.requestId(), AbortReason.CLIENT_CANCEL));
                    throw new OpenAiException(e.type(), param, param + "[" + i + "]: " + e.getMessage());
                }
            }
            return admitted;
        });
    }

    /** Aborts without waiting; an unknown or ended request is left as it is. */
    void abort(String requestId, AbortReason reason) {
        loop.askRequests(requests -> requests.abort(requestId, reason)).timeout(Duration.ofSeconds(5))
                .onErrorResume(e -> Mono.empty()).subscribe();
    }

    Mono<List<String>> models() {
        return loop.askRequests(RequestLifecycle::models);
    }
}
