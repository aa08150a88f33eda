package kassign.broker;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * Loads kassign's native library once per class loader.
 *
 * <p>By default the library bundled in this jar for this JVM's platform
 * ({@code kassign/broker/native/<os>-<arch>/libkassign.so}: {@code linux-x86_64} and
 * {@code linux-aarch64}, see {@link #platform(String, String)}) is copied to a temporary file under
 * {@code java.io.tmpdir} and loaded from there with {@link System#load(String)}; the file is deleted
 * once loaded. The system property {@value #LIBRARY_PROPERTY} names a library on disk to load
 * instead (another platform, a read-only or {@code noexec} temporary directory).
 *
 * <p>Any failure is reported as an {@link IllegalStateException} whose message says what to do.
 * {@link KassignAssignor}'s constructor calls {@link #load()}, so a broker that cannot load the
 * library fails when it starts the assignor, never on a group's first rebalance.
 */
public final class NativeLibrary {

    /** System property: absolute path of a {@code libkassign} to load instead of the bundled one. */
    public static final String LIBRARY_PROPERTY = "kassign.broker.library";

    private static boolean loaded;

    /**
     * The first failure to load, remembered: a later {@link #load()} rethrows it and never loads a
     * second copy of the library (fixing the cause takes a broker restart).
     */
    private static IllegalStateException failure;

    private NativeLibrary() {}

    /** This jar's version (Cargo.toml's, through Maven). */
    public static String jarVersion() {
        Properties p = new Properties();
        try (InputStream in = NativeLibrary.class.getResourceAsStream("kassign-broker.properties")) {
            if (in != null) p.load(in);
        } catch (IOException e) {
            // reported below as a missing version
        }
        return p.getProperty("version", "unknown");
    }

    /**
     * The platforms whose library {@code make broker-plugin} bundles, as {@link #platform(String, String)}
     * names them (the Makefile's BROKER_TARGETS: x86-64 and ARM64 Linux, glibc 2.17 or newer).
     */
    static final List<String> BUILT_PLATFORMS = List.of("linux-x86_64", "linux-aarch64");

    /** The platform directory inside the jar for this JVM, e.g. {@code linux-x86_64}. */
    static String platform() {
        return platform(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
    }

    /**
     * The platform directory inside the jar for an {@code os.name} and {@code os.arch} as the JVM
     * reports them: {@code Linux}/{@code amd64} is {@code linux-x86_64}, {@code Linux}/{@code aarch64}
     * is {@code linux-aarch64}; other values pass through, lower-cased.
     */
    static String platform(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT);
        String arch = osArch.toLowerCase(Locale.ROOT);
        String o = os.startsWith("linux") ? "linux" : os.replace(' ', '_');
        String a = switch (arch) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch;
        };
        return o + "-" + a;
    }

    /** The library's resource name for a platform, relative to this class. */
    static String resource(String platform) {
        return "native/" + platform + "/libkassign.so";
    }

    /** The platforms whose library this jar holds. */
    static List<String> bundledPlatforms() {
        List<String> out = new ArrayList<>();
        for (String p : BUILT_PLATFORMS) {
            if (NativeLibrary.class.getResource(resource(p)) != null) out.add(p);
        }
        return out;
    }

    /** What a jar with no library for {@code platform} tells the user. */
    static String unsupportedPlatformMessage(String platform, List<String> bundled) {
        return "kassign: this jar bundles no native library for " + platform
            + " (kassign/broker/" + resource(platform) + "); it bundles "
            + (bundled.isEmpty() ? "none" : String.join(", ", bundled))
            + ". Build libkassign for this platform (`cargo build --release -p kassign-jni`"
            + " in kassign's source) and point -D" + LIBRARY_PROPERTY
            + "=/path/to/libkassign.so at it (docs/broker.md, Platforms), or remove kassign from"
            + " group.consumer.assignors (docs/broker.md, Rollback).";
    }

    /**
     * Load the library (once); throws {@link IllegalStateException} saying what to do if it cannot,
     * and the same failure on every later call.
     */
    public static synchronized void load() {
        if (loaded) return;
        if (failure != null) throw new IllegalStateException(failure.getMessage(), failure);
        try {
            loadOnce();
        } catch (IllegalStateException e) {
            failure = e;
            throw e;
        }
        loaded = true;
    }

    private static void loadOnce() {
        String override = System.getProperty(LIBRARY_PROPERTY);
        String what;
        try {
            if (override != null && !override.isBlank()) {
                what = override;
                System.load(Paths.get(override).toAbsolutePath().toString());
            } else {
                what = "the library bundled in kassign-broker-" + jarVersion() + ".jar for " + platform();
                loadBundled();
            }
        } catch (IllegalStateException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(
                "kassign: cannot load the native library (" + t + "). The kassign assignor needs "
                    + "libkassign for this platform (" + platform() + "). Either set the system property "
                    + "-D" + LIBRARY_PROPERTY + "=/path/to/libkassign.so (built from kassign's source with "
                    + "`cargo build --release -p kassign-jni`), or make java.io.tmpdir "
                    + "writable and executable, or remove kassign from group.consumer.assignors "
                    + "(docs/broker.md, Rollback).", t);
        }
        String nativeVersion;
        try {
            nativeVersion = NativeAssignor.version();
        } catch (UnsatisfiedLinkError e) {
            throw new IllegalStateException("kassign: " + what + " is not a kassign JNI library (no "
                + "kassign.broker.NativeAssignor entry points): build it with `cargo build --release -p kassign-jni`", e);
        }
        String jar = jarVersion();
        if (!jar.equals(nativeVersion)) {
            throw new IllegalStateException("kassign: the native library is version " + nativeVersion
                + " but this jar is " + jar + " (" + what + "); use the library built with this jar");
        }
    }

    private static void loadBundled() throws IOException {
        String platform = platform();
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource(platform))) {
            if (in == null) {
                throw new IllegalStateException(unsupportedPlatformMessage(platform, bundledPlatforms()));
            }
            Path tmp = Files.createTempFile("libkassign-" + jarVersion() + "-", ".so");
            try {
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                System.load(tmp.toAbsolutePath().toString());
            } finally {
                // Once mapped, the file is not needed (Linux keeps the mapping).
                Files.deleteIfExists(tmp);
            }
        }
    }
}
