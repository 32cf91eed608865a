package io.mstar.wire;

import io.mstar.graph.TensorPointerInfo;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A new request handed to the conductor's lifecycle after the front end stored its inputs.
 *
 * <p>{@code inputMetadata} and {@code modelKwargs} are free-form JSON as in the reference system;
 * they are normalized as {@link JsonValues} describes (integers become {@code Long}, floats
 * {@code Double}, maps sorted unmodifiable maps), so build them from those types to compare equal
 * after a round trip.
 *
 * @param requestId                the request
 * @param initialSignals           signal name to the descriptors of the client's stored inputs
 * @param initialInputModalities   modalities of the inputs, in order
 * @param initialOutputModalities  modalities the client asked for
 * @param inputMetadata            signal name to one metadata object per input
 * @param modelKwargs              model-specific options, free-form JSON object
 */
public record NewRequestConductor(
        String requestId,
        Map<String, List<TensorPointerInfo>> initialSignals,
        List<String> initialInputModalities,
        List<String> initialOutputModalities,
        Map<String, List<Map<String, Object>>> inputMetadata,
        Map<String, Object> modelKwargs) implements ConductorMessageBody, RequestScoped {

    public NewRequestConductor {
        Objects.requireNonNull(requestId, "request_id");
        initialSignals = Canonical.listValues(initialSignals, "initial_signals", true);
        initialInputModalities = Canonical.requiredList(initialInputModalities, "initial_input_modalities");
        initialOutputModalities = Canonical.requiredList(initialOutputModalities, "initial_output_modalities");
        Objects.requireNonNull(inputMetadata, "input_metadata");
        TreeMap<String, List<Map<String, Object>>> metadata = new TreeMap<>();
        for (Map.Entry<String, List<Map<String, Object>>> e : inputMetadata.entrySet()) {
            Objects.requireNonNull(e.getValue(), "input_metadata value");
            List<Map<String, Object>> objects = new ArrayList<>(e.getValue().size());
            for (Map<String, Object> o : e.getValue()) {
                objects.add(JsonValues.object(Objects.requireNonNull(o, "input_metadata element")));
            }
            metadata.put(e.getKey(), Collections.unmodifiableList(objects));
        }
        inputMetadata = Collections.unmodifiableSortedMap(metadata);
        modelKwargs = JsonValues.object(Objects.requireNonNull(modelKwargs, "model_kwargs"));
    }
}
