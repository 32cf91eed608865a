package io.mstar.tensor;

import io.mstar.tensor.bookkeeping.FastTensorBookkeeping;
import io.mstar.tensor.bookkeeping.PlainTensorBookkeeping;
import org.junit.jupiter.api.Nested;

/**
 * The store's contracts on each bookkeeping backend: the store must behave the same whichever one holds the
 * reference state (the fast one copies descriptors in and takes columnar puts; the plain one keeps the caller's).
 */
class StoreOnEachBookkeeperTests {

    @Nested
    class TensorStoreOnPlain extends TensorStoreContract {
        TensorStoreOnPlain() {
            super(new PlainTensorBookkeeping());
        }
    }

    @Nested
    class TensorStoreOnFast extends TensorStoreContract {
        TensorStoreOnFast() {
            super(new FastTensorBookkeeping());
        }
    }

    @Nested
    class RequestTeardownOnPlain extends RequestTeardownContract {
        RequestTeardownOnPlain() {
            super(new PlainTensorBookkeeping());
        }
    }

    @Nested
    class RequestTeardownOnFast extends RequestTeardownContract {
        RequestTeardownOnFast() {
            super(new FastTensorBookkeeping());
        }
    }

    @Nested
    class RandomizedLifetimeOnPlain extends RandomizedStoreLifetimeContract {
        RandomizedLifetimeOnPlain() {
            super(new PlainTensorBookkeeping());
        }
    }

    @Nested
    class RandomizedLifetimeOnFast extends RandomizedStoreLifetimeContract {
        RandomizedLifetimeOnFast() {
            super(new FastTensorBookkeeping());
        }
    }
}
