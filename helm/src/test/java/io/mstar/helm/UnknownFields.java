package io.mstar.helm;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Finds fields the typed models did not know. fabric8 does not reject a misspelled key (say
 * {@code readinesProbe}): it parks it in {@code getAdditionalProperties()}, so a chart typo would parse
 * cleanly. This walks every model object reachable through getters and reports each such key by path.
 */
final class UnknownFields {

    private UnknownFields() {
    }

    static List<String> in(Object root) {
        List<String> found = new ArrayList<>();
        walk(root, root.getClass().getSimpleName(), found, java.util.Collections.newSetFromMap(new IdentityHashMap<>()));
        return found;
    }

    private static void walk(Object value, String path, List<String> found, Set<Object> seen) {
        if (value == null || !seen.add(value)) {
            return;
        }
        if (value instanceof Collection<?> items) {
            int i = 0;
            for (Object item : items) {
                walk(item, path + "[" + i++ + "]", found, seen);
            }
            return;
        }
        if (value instanceof Map<?, ?> map) {
            map.forEach((k, v) -> walk(v, path + "[" + k + "]", found, seen));
            return;
        }
        if (!isModel(value)) {
            return;
        }
        for (Method getter : value.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers())
                    || getter.getDeclaringClass() == Object.class) {
                continue;
            }
            String name = getter.getName();
            // Derived views (getFullResourceName, getPlural...) are not fields and may throw on generic kinds.
            if ((!name.startsWith("get") && !name.startsWith("is")) || getter.getDeclaringClass().isInterface()) {
                continue;
            }
            Object child = invoke(getter, value);
            if (name.equals("getAdditionalProperties")) {
                // A generic resource keeps its whole body there; its spec is checked by the tests that render it.
                if (!(value instanceof GenericKubernetesResource) && child instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    found.add(path + ": " + extra.keySet());
                }
                continue;
            }
            walk(child, path + "." + propertyName(name), found, seen);
        }
    }

    private static boolean isModel(Object value) {
        return value.getClass().getName().startsWith("io.fabric8.kubernetes.api.model");
    }

    private static Object invoke(Method getter, Object target) {
        try {
            return getter.invoke(target);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException("cannot read " + getter + " of " + target.getClass(), e);
        }
    }

    private static String propertyName(String getter) {
        String bare = getter.startsWith("is") ? getter.substring(2) : getter.substring(3);
        return bare.isEmpty() ? bare : Character.toLowerCase(bare.charAt(0)) + bare.substring(1);
    }
}
