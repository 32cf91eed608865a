package io.mstar.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The launcher's output carries no terminal escape sequences, whatever the text it is given holds. */
class ProgressLineTests {

    private static final String ESC = "\u001b";

    @Test
    void outsideATerminalTheLineIsPlainTextPrintedOncePerSubject() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ProgressLine progress = new ProgressLine(new PrintStream(bytes, true, StandardCharsets.UTF_8), false);

        progress.update("waiting for \u001b[1mconductor\u001b[0m (0 s)");
        progress.update("waiting for \u001b[1mconductor\u001b[0m (1 s)");
        progress.update("ready\rafter 2 s");
        progress.finish();

        String out = bytes.toString(StandardCharsets.UTF_8);
        assertThat(out).isEqualTo("waiting for conductor (0 s)\nreadyafter 2 s\n".replace("\n", System.lineSeparator()));
        assertThat(out).doesNotContain(ESC).doesNotContain("\r");
    }

    @Test
    void onATerminalTheLineIsRewrittenWithCarriageReturnsOnly() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ProgressLine progress = new ProgressLine(new PrintStream(bytes, true, StandardCharsets.UTF_8), true);

        progress.update("waiting for worker-0 (0 s)");
        progress.update("\u001b[32mready\u001b[m");
        progress.finish();

        assertThat(bytes.toString(StandardCharsets.UTF_8)).doesNotContain(ESC)
                .startsWith("\rwaiting for worker-0 (0 s)\rready ");
    }

    @Test
    void theStrippingStreamDropsEverySequenceEvenSplitAcrossWrites() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = AnsiFree.wrap(new PrintStream(bytes, true, StandardCharsets.UTF_8));

        out.print("a\u001b[");
        out.print("1;31mred\u001b");
        out.print("[0m é\u001b7\n");
        out.print("\u001b[0m\u001b[0m");
        out.flush();

        assertThat(bytes.toString(StandardCharsets.UTF_8)).isEqualTo("ared é\n");
        assertThat(AnsiFree.strip("x\u001b[0my")).isEqualTo("xy");
        assertThat(AnsiFree.plain("x\u001b[0m\ry\u0007\n")).isEqualTo("xy\n");
    }
}
