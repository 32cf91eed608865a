package io.mstar.conductor.model;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;

/** A client's inputs or kwargs that the model cannot take: the client's to fix (400). */
public final class ModelInputException extends ConductorException {

    public ModelInputException(String detail) {
        super(ErrorType.INVALID_INPUT, detail);
    }
}
