package io.mstar.conductor.model;

import io.mstar.conductor.error.ConductorException;
import io.mstar.conductor.error.ErrorType;

/** A pass result the policy cannot continue from (a signal it needs is missing): the request fails. */
public final class PolicyException extends ConductorException {

    public PolicyException(String detail) {
        super(ErrorType.MODEL_ERROR, detail);
    }
}
