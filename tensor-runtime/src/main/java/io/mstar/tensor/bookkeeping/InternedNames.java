package io.mstar.tensor.bookkeeping;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Names interned for good as small ids, so an entry record stores an int where a descriptor has a string: the dtype
 * names and the arena segment names of {@link FastTensorBookkeeping}, a handful each. Owned like its bookkeeper.
 */
final class InternedNames {

    private final Map<String, Integer> ids = new HashMap<>();
    private final List<String> names = new ArrayList<>();

    /** The id of {@code name}, interning it on first sight. */
    int id(String name) {
        Integer id = ids.get(name);
        if (id == null) {
            id = names.size();
            names.add(name);
            ids.put(name, id);
        }
        return id;
    }

    String name(int id) {
        return names.get(id);
    }
}
