package io.mstar.conductor.api;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;
import io.mstar.conductor.lifecycle.Submission;
import io.mstar.request.SamplingConfig;

/** Validates a {@link SubmitRequest} and decodes its inputs into a {@link Submission}, off the loop. Stateless. */
public final class SubmissionMapping {

    static final Pattern REQUEST_ID = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
    static final Map<String, Integer> DTYPE_SIZES = Map.of("int8", 1, "uint8", 1, "bool", 1, "int16", 2,
            "float16", 2, "bfloat16", 2, "int32", 4, "float32", 4, "int64", 8, "float64", 8);
    static final int MAX_DIMS = 8;

    private final ApiProperties limits;

    public SubmissionMapping(ApiProperties limits) {
        this.limits = limits;
    }

    public Submission map(SubmitRequest body) {
        if (body == null) {
            throw malformed("a JSON object body is required");
        }
        if (body.model() == null || body.model().isBlank()) {
            throw malformed("'model' is required");
        }
        if (body.inputs() == null || body.inputs().isEmpty()) {
            throw malformed("'inputs' is required and must name at least one input");
        }
        String id = body.requestId() == null ? UUID.randomUUID().toString() : body.requestId();
        if (!REQUEST_ID.matcher(id).matches()) {
            throw malformed("'request_id' must be 1-128 characters of [A-Za-z0-9._:-]");
        }
        int maxTokens = body.maxTokens() == null ? limits.defaultMaxTokens() : body.maxTokens();
        if (maxTokens < 1 || maxTokens > limits.maxTokens()) {
            throw new ConductorException(ErrorType.INVALID_INPUT, "'max_tokens' must be 1.." + limits.maxTokens());
        }
        Duration deadline = null;
        if (body.deadlineMs() != null) {
            if (body.deadlineMs() < 1) {
                throw malformed("'deadline_ms' must be positive");
            }
            deadline = Duration.ofMillis(body.deadlineMs());
        }
        long budget = limits.maxInputBytes().toBytes();
        Map<String, Submission.InputTensor> inputs = new LinkedHashMap<>();
        for (Map.Entry<String, SubmitRequest.Input> e : body.inputs().entrySet()) {
            Submission.InputTensor tensor = decode(e.getKey(), e.getValue());
            budget -= tensor.data().length;
            if (budget < 0) {
                throw new ConductorException(ErrorType.PAYLOAD_TOO_LARGE, "inputs exceed "
                        + limits.maxInputBytes().toBytes() + " decoded bytes");
            }
            inputs.put(e.getKey(), tensor);
        }
        Map<String, String> kwargs = new LinkedHashMap<>();
        if (body.modelKwargs() != null) {
            body.modelKwargs().forEach((k, v) -> {
                if (v instanceof Map || v instanceof List) {
                    throw malformed("'model_kwargs." + k + "' must be a scalar");
                }
                if (v != null) {
                    kwargs.put(k, String.valueOf(v));
                }
            });
        }
        return new Submission(id, body.model(), inputs, maxTokens, sampling(body.sampling()), kwargs, body.seed(), deadline);
    }

    private static SamplingConfig sampling(SubmitRequest.Sampling s) {
        if (s == null) {
            return null;
        }
        SamplingConfig d = SamplingConfig.DEFAULT;
        return new SamplingConfig(null, s.temperature() == null ? d.temperature() : s.temperature(),
                s.topK() == null ? d.topK() : s.topK(), s.topP() == null ? d.topP() : s.topP(),
                s.ignoreEos() == null ? d.ignoreEos() : s.ignoreEos(),
                s.repetitionPenalty() == null ? d.repetitionPenalty() : s.repetitionPenalty(), d.seed());
    }

    private Submission.InputTensor decode(String name, SubmitRequest.Input input) {
        if (input == null) {
            throw malformed("input '" + name + "' is null");
        }
        int given = (input.text() != null ? 1 : 0) + (input.tokens() != null ? 1 : 0) + (input.base64() != null ? 1 : 0);
        if (given != 1) {
            throw malformed("input '" + name + "' needs exactly one of 'text', 'tokens', 'base64'");
        }
        if (input.text() != null) {
            byte[] bytes = input.text().getBytes(StandardCharsets.UTF_8);
            checkSize(bytes.length);
            return new Submission.InputTensor("uint8", List.of((long) bytes.length), bytes);
        }
        if (input.tokens() != null) {
            checkSize(4L * input.tokens().size());
            ByteBuffer b = ByteBuffer.allocate(4 * input.tokens().size()).order(ByteOrder.LITTLE_ENDIAN);
            for (Long t : input.tokens()) {
                if (t == null || t < Integer.MIN_VALUE || t > Integer.MAX_VALUE) {
                    throw malformed("input '" + name + "' tokens must be int32 values");
                }
                b.putInt(t.intValue());
            }
            return new Submission.InputTensor("int32", List.of((long) input.tokens().size()), b.array());
        }
        Integer size = input.dtype() == null ? null : DTYPE_SIZES.get(input.dtype());
        if (size == null) {
            throw malformed("input '" + name + "' base64 needs a 'dtype' of " + DTYPE_SIZES.keySet());
        }
        if (input.shape() == null || input.shape().size() > MAX_DIMS || input.shape().stream().anyMatch(d -> d == null || d < 0)) {
            throw malformed("input '" + name + "' base64 needs a 'shape' of at most " + MAX_DIMS + " non-negative dims");
        }
        checkSize(input.base64().length() / 4L * 3);
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(input.base64());
        } catch (IllegalArgumentException e) {
            throw malformed("input '" + name + "' is not valid base64");
        }
        long elements = 1;
        for (long d : input.shape()) {
            elements = Math.multiplyExact(elements, d);
        }
        if (elements * size != bytes.length) {
            throw malformed("input '" + name + "' has " + bytes.length + " bytes; shape " + input.shape() + " of "
                    + input.dtype() + " needs " + elements * size);
        }
        return new Submission.InputTensor(input.dtype(), input.shape(), bytes);
    }

    private void checkSize(long bytes) {
        if (bytes > limits.maxInputBytes().toBytes()) {
            throw new ConductorException(ErrorType.PAYLOAD_TOO_LARGE, "an input exceeds "
                    + limits.maxInputBytes().toBytes() + " decoded bytes");
        }
    }

    private static ConductorException malformed(String detail) {
        return new ConductorException(ErrorType.MALFORMED_REQUEST, detail);
    }
}
