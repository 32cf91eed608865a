package io.mstar.tensor.arena;

import java.util.Optional;

/**
 * Names of arena files: {@code mstar.<entity>.<pid>.<incarnation>.<part>}, where part is
 * {@code seg<index>} or {@code spill-<uuid hex>}. The owner's pid is in the name so a start-up sweep
 * can tell a dead owner's leftovers from a live one's; the incarnation (random per arena) keeps a
 * restarted process that got the same pid from colliding with its predecessor's files.
 */
record ArenaFileName(String entity, long pid, String incarnation, String part) {

    static final String PREFIX = "mstar";
    private static final String SEGMENT_PART = "seg";

    static String segment(String entity, long pid, String incarnation, int index) {
        return String.join(".", PREFIX, entity, Long.toString(pid), incarnation, SEGMENT_PART + index);
    }

    static String spill(String entity, long pid, String incarnation, long uuid) {
        return String.join(".", PREFIX, entity, Long.toString(pid), incarnation, "spill-" + Long.toHexString(uuid));
    }

    /** Empty for a file that is not an arena file (the sweeper leaves those alone). */
    static Optional<ArenaFileName> parse(String name) {
        String[] parts = name.split("\\.", -1);
        if (parts.length != 5 || !PREFIX.equals(parts[0]) || parts[1].isEmpty() || parts[3].isEmpty()
                || !(parts[4].startsWith(SEGMENT_PART) || parts[4].startsWith("spill-"))) {
            return Optional.empty();
        }
        try {
            return Optional.of(new ArenaFileName(parts[1], Long.parseLong(parts[2]), parts[3], parts[4]));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** A segment, read through a cached mapping; otherwise a spill file, opened for each read. */
    boolean isSegment() {
        return part.startsWith(SEGMENT_PART);
    }

    /**
     * Whether {@code name}'s last part names a segment, without parsing the rest: a per-read check on a name the
     * reader has already found valid and present.
     */
    static boolean namesSegment(String name) {
        return name.startsWith(SEGMENT_PART, name.lastIndexOf('.') + 1);
    }
}
