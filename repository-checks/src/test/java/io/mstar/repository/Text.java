package io.mstar.repository;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** A text file's content and where its lines start. */
record Text(String content, int[] lineStarts) {
    static Text of(String content) {
        List<Integer> starts = new ArrayList<>();
        starts.add(0);
        for (int i = 0; i < content.length(); i++) {
            if (content.charAt(i) == '\n') {
                starts.add(i + 1);
            }
        }
        return new Text(content, starts.stream().mapToInt(Integer::intValue).toArray());
    }

    int lineOf(int offset) {
        int i = Arrays.binarySearch(lineStarts, offset);
        return (i >= 0 ? i : -i - 2) + 1;
    }

    String lineText(int offset) {
        int start = lineStarts[lineOf(offset) - 1];
        int end = content.indexOf('\n', start);
        return content.substring(start, end < 0 ? content.length() : end).strip();
    }
}
