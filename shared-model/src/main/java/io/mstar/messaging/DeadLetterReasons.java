package io.mstar.messaging;

import io.mstar.wire.WireFormatException;

/** The one place that maps the codec's failure reasons onto dead-letter reasons. */
public final class DeadLetterReasons {

    private DeadLetterReasons() {
    }

    /** Same-named reason; a codec reason this build does not know yet becomes {@link DeadLetterReason#UNKNOWN}. */
    public static DeadLetterReason fromWire(WireFormatException.Reason reason) {
        if (reason == null) {
            return DeadLetterReason.UNKNOWN;
        }
        try {
            return DeadLetterReason.valueOf(reason.name());
        } catch (IllegalArgumentException e) {
            return DeadLetterReason.UNKNOWN;
        }
    }
}
