package io.mstar.worker.engine;

import io.mstar.tensor.device.DeviceException;
import io.mstar.wire.WorkerErrorType;

/** How the engine's parts fail requests ({@link RequestTeardown} is the one implementation). Called on the loop. */
interface RequestFailures {

    /** {@code request} fails alone: the conductor is told once, with the error's stable type. */
    void fail(WorkerRequest request, WorkerErrorType type, String error);

    /** A sticky device error: every request here fails and liveness goes down. */
    void fatal(DeviceException e);

    /** Fails {@code request} with {@code e}, typed by its class. */
    default void fail(WorkerRequest request, RuntimeException e) {
        fail(request, EngineException.typeOf(e), e.toString());
    }
}
