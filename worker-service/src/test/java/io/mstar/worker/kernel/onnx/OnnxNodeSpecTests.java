package io.mstar.worker.kernel.onnx;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import ai.onnxruntime.OnnxJavaType;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** An {@link OnnxNodeSpec} that cannot describe a node is refused when made, naming the offending key. */
class OnnxNodeSpecTests {

    private static final Map<String, String> IN = Map.of("text", "input_ids");
    private static final Map<String, String> OUT = Map.of("last_hidden_state", "hidden");
    private static final Map<String, OnnxJavaType> TYPES = Map.of("text", OnnxJavaType.INT64);

    @Test
    void aWellFormedSpecKeepsWhatItWasGiven() {
        OnnxNodeSpec spec = OnnxNodeSpec.padded("classpath:m.onnx", IN, OUT, TYPES, Set.of("sequence_length"),
                "attention_mask");
        assertThat(spec.batching()).isEqualTo(OnnxNodeSpec.Batching.PAD);
        assertThat(spec.intraOpThreads()).isEqualTo(Runtime.getRuntime().availableProcessors());
        assertThat(spec.withIntraOpThreads(1).intraOpThreads()).isEqualTo(1);
        assertThat(OnnxNodeSpec.perRequest("m.onnx", IN, OUT, TYPES).padAxes()).isEmpty();
    }

    @Test
    void eachBadSettingIsRefusedNamingItsKey() {
        refused(() -> OnnxNodeSpec.perRequest(" ", IN, OUT, TYPES), "model");
        refused(() -> OnnxNodeSpec.perRequest("m.onnx", Map.of(), OUT, TYPES), "inputs");
        refused(() -> OnnxNodeSpec.perRequest("m.onnx", IN, Map.of(), TYPES), "outputs");
        refused(() -> OnnxNodeSpec.perRequest("m.onnx", Map.of("text", " "), OUT, TYPES), "inputs maps a blank name");
        // a signal without a declared type takes the graph's: no refusal
        assertThat(OnnxNodeSpec.perRequest("m.onnx", IN, OUT, Map.of()).dtypes()).isEmpty();
        Map<String, OnnxJavaType> extra = new HashMap<>(TYPES);
        extra.put("image", OnnxJavaType.FLOAT);
        refused(() -> OnnxNodeSpec.perRequest("m.onnx", IN, OUT, extra), "dtypes names 'image'");
        refused(() -> OnnxNodeSpec.perRequest("m.onnx", IN, OUT, Map.of("text", OnnxJavaType.STRING)),
                "dtypes['text'] is STRING");
        refused(() -> OnnxNodeSpec.perRequest("m.onnx", Map.of("a", "x", "b", "x"), OUT,
                Map.of("a", OnnxJavaType.FLOAT, "b", OnnxJavaType.FLOAT)), "inputs feed one graph input from two");
        refused(() -> OnnxNodeSpec.perRequest("m.onnx", IN, Map.of("y", "s", "z", "s"), TYPES),
                "outputs give one signal from two");
        refused(() -> new OnnxNodeSpec("m.onnx", IN, OUT, TYPES, OnnxNodeSpec.Batching.PER_REQUEST,
                Set.of("sequence_length"), null, 1), "padAxes and mask are for PAD");
        refused(() -> new OnnxNodeSpec("m.onnx", IN, OUT, TYPES, null, Set.of(), null, 1), "batching");
        refused(() -> OnnxNodeSpec.padded("m.onnx", IN, OUT, TYPES, Set.of(), "attention_mask"),
                "mask 'attention_mask' needs a name and padAxes");
        refused(() -> OnnxNodeSpec.padded("m.onnx", IN, OUT, TYPES, Set.of("s"), "input_ids"),
                "mask 'input_ids' is also fed");
        refused(() -> OnnxNodeSpec.padded("m.onnx", IN, OUT, TYPES, Set.of(" "), null), "padAxes holds a blank");
        refused(() -> OnnxNodeSpec.perRequest("m.onnx", IN, OUT, TYPES).withIntraOpThreads(0),
                "intraOpThreads must be at least 1, was 0");
    }

    private static void refused(Runnable make, String message) {
        assertThatThrownBy(make::run).isInstanceOfAny(IllegalArgumentException.class, NullPointerException.class)
                .hasMessageContaining(message);
    }
}
