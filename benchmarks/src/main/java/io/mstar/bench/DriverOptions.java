package io.mstar.bench;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

import io.mstar.tensor.device.cuda.CudaDevice;

/**
 * A driver's {@code --name value} options (the serving, decode and minilm drivers): each option is declared with its
 * default; an unknown option, one without a value or a value that does not parse is refused with a message naming it
 * and listing the options, and {@code --help} prints them. Call after {@link DriverLogging#configure}, which takes
 * {@code --verbose} out first.
 */
public final class DriverOptions {

    /** Thrown for {@code --help}: its message is the usage, for {@code main} to print and stop. */
    public static final class HelpRequested extends RuntimeException {
        HelpRequested(String usage) {
            super(usage, null, false, false);
        }
    }

    private final String driver;
    private final Map<String, String> values;

    private DriverOptions(String driver, Map<String, String> values) {
        this.driver = driver;
        this.values = values;
    }

    /**
     * @param driver   the driver's class name, for messages
     * @param args     the command line, {@code --verbose} already taken out
     * @param defaults every option the driver takes, in the order to list them, with its default
     * @throws IllegalArgumentException naming the offending option and listing the options
     * @throws HelpRequested            for {@code --help}
     */
    public static DriverOptions parse(String driver, String[] args, Map<String, String> defaults) {
        Map<String, String> values = new LinkedHashMap<>(defaults);
        for (int i = 0; i < args.length; i += 2) {
            String name = args[i];
            if (name.equals("--help")) {
                throw new HelpRequested(usage(driver, defaults));
            }
            if (!defaults.containsKey(name)) {
                throw new IllegalArgumentException("unknown option " + name + "; " + usage(driver, defaults));
            }
            if (i + 1 == args.length || args[i + 1].startsWith("--")) {
                throw new IllegalArgumentException("option " + name + " needs a value; " + usage(driver, defaults));
            }
            values.put(name, args[i + 1]);
        }
        return new DriverOptions(driver, values);
    }

    /** {@link #parse}, for {@code main}: a refused option prints its message and exits 2; {@code --help}, the usage. */
    public static DriverOptions parseOrExit(String driver, String[] args, Map<String, String> defaults) {
        try {
            return parse(driver, args, defaults);
        } catch (HelpRequested help) {
            System.out.println(help.getMessage());
            System.exit(0);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
        }
        throw new AssertionError("unreachable");
    }

    /** {@link #parseOrExit(String, String[], Map)} with the options given as name, default, name, default, ... */
    public static DriverOptions parseOrExit(String driver, String[] args, String... namesAndDefaults) {
        if (namesAndDefaults.length % 2 != 0) {
            throw new IllegalArgumentException("options come as name, default pairs");
        }
        Map<String, String> defaults = new LinkedHashMap<>();
        for (int i = 0; i < namesAndDefaults.length; i += 2) {
            defaults.put(namesAndDefaults[i], namesAndDefaults[i + 1]);
        }
        return parseOrExit(driver, args, defaults);
    }

    public String get(String name) {
        String value = values.get(name);
        if (value == null) {
            throw new IllegalStateException(driver + " declares no option " + name);
        }
        return value;
    }

    /** The option as an integer of at least {@code min}. */
    public int integer(String name, int min) {
        int value;
        try {
            value = Integer.parseInt(get(name));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " takes an integer, not '" + get(name) + "'");
        }
        if (value < min) {
            throw new IllegalArgumentException(name + " must be at least " + min + ", not " + value);
        }
        return value;
    }

    /** The option as a comma-separated list of integers, each at least {@code min}. */
    public int[] integers(String name, int min) {
        int[] list;
        try {
            list = Arrays.stream(get(name).split(",")).mapToInt(s -> Integer.parseInt(s.trim())).toArray();
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " takes integers separated by commas, not '" + get(name) + "'");
        }
        for (int v : list) {
            if (v < min) {
                throw new IllegalArgumentException(name + " takes integers of at least " + min + ", not " + v);
            }
        }
        return list;
    }

    /** The option as {@code true} or {@code false}. */
    public boolean bool(String name) {
        return switch (get(name)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(name + " takes true or false, not '" + get(name) + "'");
        };
    }

    /** The option as a device choice: {@code cuda}, {@code host}, or {@code auto} (CUDA when the machine has a GPU). */
    public boolean cuda(String name) {
        return switch (get(name)) {
            case "cuda" -> true;
            case "host" -> false;
            case "auto" -> CudaDevice.deviceCount() > 0;
            default -> throw new IllegalArgumentException(name + " takes host, cuda or auto, not '" + get(name) + "'");
        };
    }

    private static String usage(String driver, Map<String, String> defaults) {
        return driver + " takes " + defaults.entrySet().stream()
                .map(e -> e.getKey() + " (default " + e.getValue() + ")").collect(Collectors.joining(", "))
                + ", and --verbose";
    }
}
