package io.mstar.loop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class OwnerThreadTests {

    @Test
    void bindsToTheFirstCallerAndRefusesEveryOtherThreadNamingBoth() throws Exception {
        OwnerThread owner = new OwnerThread("stream buffer");
        Thread first = new Thread(owner::check, "the-owner");
        first.start();
        first.join();

        CompletableFuture<Throwable> other = CompletableFuture.supplyAsync(() -> {
            try {
                owner.check();
                return null;
            } catch (IllegalStateException e) {
                return e;
            }
        });

        assertThat(other.get()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("stream buffer").hasMessageContaining("the-owner");
        assertThatThrownBy(owner::check).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theOwnerMayCallAgainAndAgain() {
        OwnerThread owner = new OwnerThread("kv cache");
        owner.check();
        assertThatCode(owner::check).doesNotThrowAnyException();
    }
}
