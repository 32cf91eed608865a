package io.mstar.conductor.model;

import java.util.List;
import java.util.Objects;

import io.mstar.graph.TensorPointerInfo;

/**
 * What a partition does after a pass, as its policy decides.
 *
 * @param kind      what happens next
 * @param next      the next step for {@link Kind#NEXT}, null otherwise
 * @param unpersist descriptors the model no longer needs; the conductor turns those of workers into
 *                  {@code UnpersistTensors(uuid -> hand-out count)} to their producers (its own inputs live until
 *                  the request is removed)
 */
public record Transition(Kind kind, Step next, List<TensorPointerInfo> unpersist) {

    public enum Kind {
        /** Run {@link #next()}: the conductor sends its inputs as {@code InputSignals}. */
        NEXT,
        /**
         * Stay in the walk and send nothing: the partition is fed by a stream buffer on its worker, which starts
         * its passes by itself (counter's {@code detok}).
         */
        AWAIT_STREAM,
        /** The partition is done. */
        DONE
    }

    public Transition {
        Objects.requireNonNull(kind, "kind");
        if ((kind == Kind.NEXT) != (next != null)) {
            throw new IllegalArgumentException("a " + kind + " transition " + (next == null ? "needs" : "takes no") + " step");
        }
        unpersist = List.copyOf(unpersist);
    }

    public static Transition next(Step step, List<TensorPointerInfo> unpersist) {
        return new Transition(Kind.NEXT, step, unpersist);
    }

    public static Transition awaitStream() {
        return new Transition(Kind.AWAIT_STREAM, null, List.of());
    }

    public static Transition done(List<TensorPointerInfo> unpersist) {
        return new Transition(Kind.DONE, null, unpersist);
    }
}
