package io.mstar.stack;

import java.io.PrintStream;

/**
 * The "waiting for ..." line of {@code bin/mstar up}. On a terminal it is rewritten in place (a carriage return,
 * never an escape sequence); in a pipe or a log it is printed only when the set of processes waited for changes,
 * plus every ~10 s, so a CI log is not flooded, and as plain text: no escape sequences, no control characters but
 * the line breaks.
 */
final class ProgressLine {

    private final PrintStream out;
    private final boolean terminal;
    private String lastSubject = "";
    private long lastPrintedNanos;
    private int lastWidth;

    ProgressLine(PrintStream out, boolean terminal) {
        this.out = out;
        this.terminal = terminal;
    }

    void update(String text) {
        if (terminal) {
            String line = AnsiFree.strip(text);
            String padded = line + " ".repeat(Math.max(0, lastWidth - line.length()));
            out.print("\r" + padded);
            out.flush();
            lastWidth = line.length();
            return;
        }
        String line = AnsiFree.plain(text);
        // The subject is the line without its trailing "(N s)" counter.
        String subject = line.replaceAll(" \\(\\d+ s\\)$", "");
        long now = System.nanoTime();
        if (!subject.equals(lastSubject) || now - lastPrintedNanos > 10_000_000_000L) {
            out.println(line);
            out.flush();
            lastSubject = subject;
            lastPrintedNanos = now;
        }
    }

    void finish() {
        if (terminal && lastWidth > 0) {
            out.println();
        }
        lastWidth = 0;
    }
}
