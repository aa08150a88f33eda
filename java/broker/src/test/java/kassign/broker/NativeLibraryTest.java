package kassign.broker;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which bundled library a JVM picks, and what an unsupported platform is told. */
class NativeLibraryTest {

    @Test
    void javaPlatformNamesMapToTheJarsDirectories() {
        // os.name / os.arch as HotSpot reports them on x86-64 and ARM64 Linux.
        assertEquals("linux-x86_64", NativeLibrary.platform("Linux", "amd64"));
        assertEquals("linux-aarch64", NativeLibrary.platform("Linux", "aarch64"));
        assertEquals("linux-x86_64", NativeLibrary.platform("linux", "x86_64"));
        assertEquals("linux-aarch64", NativeLibrary.platform("Linux", "arm64"));
        // Anything else keeps its own name, so no other platform maps onto a bundled library.
        assertEquals("linux-riscv64", NativeLibrary.platform("Linux", "riscv64"));
        assertEquals("linux-ppc64le", NativeLibrary.platform("Linux", "ppc64le"));
        assertEquals("mac_os_x-aarch64", NativeLibrary.platform("Mac OS X", "aarch64"));
        assertEquals("windows_11-x86_64", NativeLibrary.platform("Windows 11", "amd64"));
        assertEquals("native/linux-aarch64/libkassign.so", NativeLibrary.resource("linux-aarch64"));
    }

    @Test
    void thisJvmsPlatformIsBundled() {
        List<String> bundled = NativeLibrary.bundledPlatforms();
        assertTrue(bundled.contains(NativeLibrary.platform()), bundled + " lacks " + NativeLibrary.platform());
        for (String p : bundled) {
            assertTrue(NativeLibrary.BUILT_PLATFORMS.contains(p), p);
        }
    }

    @Test
    void unsupportedPlatformFailsAtConstructionNamingWhatToDo() throws Exception {
        IllegalStateException e = constructOn("Linux", "riscv64");
        String msg = e.getMessage();
        assertTrue(msg.contains("no native library for linux-riscv64"), msg);
        assertTrue(msg.contains("kassign/broker/native/linux-riscv64/libkassign.so"), msg);
        assertTrue(msg.contains("it bundles " + String.join(", ", NativeLibrary.bundledPlatforms()) + "."), msg);
        assertTrue(msg.contains("-Dkassign.broker.library=/path/to/libkassign.so"), msg);
        assertTrue(msg.contains("cargo build --release -p kassign-jni"), msg);
    }

    @Test
    void theOtherBundledArchitecturePicksItsOwnLibrary() throws Exception {
        // This JVM cannot load the other architecture's library, and HotSpot's message names the
        // machine of the ELF file it was given: the other platform's library was picked and extracted.
        String here = NativeLibrary.platform();
        String other = here.equals("linux-aarch64") ? "linux-x86_64" : "linux-aarch64";
        String arch = other.equals("linux-aarch64") ? "aarch64" : "amd64";
        String machine = other.equals("linux-aarch64") ? "AARCH64" : "AMD 64";
        IllegalStateException e = constructOn("Linux", arch);
        String msg = e.getMessage();
        assertTrue(msg.startsWith("kassign: cannot load the native library"), msg);
        assertTrue(msg.contains("can't load " + machine + " .so"), msg);
        assertTrue(msg.contains("(" + other + ")"), msg);
    }

    @Test
    void aFailedLoadIsRememberedAndNeverRetried() throws Exception {
        // The first load fails (no library for riscv64); on the same classes, a second load on
        // this JVM's own platform, which would succeed, must give the first failure again and load
        // no second copy.
        ClassLoader loader = new KassignFirst(NativeLibraryTest.class.getClassLoader());
        String first = constructOn("Linux", "riscv64", loader).getMessage();
        assertTrue(first.contains("no native library for linux-riscv64"), first);
        Class<?> c = Class.forName(KassignAssignor.class.getName(), true, loader);
        InvocationTargetException t = assertThrows(InvocationTargetException.class,
            () -> c.getConstructor().newInstance());
        IllegalStateException again = assertInstanceOf(IllegalStateException.class, t.getCause());
        assertEquals(first, again.getMessage());
    }

    /**
     * Constructs a {@link KassignAssignor} with kassign's classes in a fresh class loader (so the
     * library is not yet loaded for them) while the JVM reports the given platform; returns the
     * constructor's failure.
     */
    private static IllegalStateException constructOn(String osName, String osArch) throws Exception {
        return constructOn(osName, osArch, new KassignFirst(NativeLibraryTest.class.getClassLoader()));
    }

    /** {@link #constructOn(String, String)} with kassign's classes from {@code loader}. */
    private static IllegalStateException constructOn(String osName, String osArch, ClassLoader loader)
            throws Exception {
        String name = System.getProperty("os.name"), arch = System.getProperty("os.arch");
        System.setProperty("os.name", osName);
        System.setProperty("os.arch", osArch);
        try {
            Class<?> c = Class.forName(KassignAssignor.class.getName(), true, loader);
            InvocationTargetException t = assertThrows(InvocationTargetException.class,
                () -> c.getConstructor().newInstance());
            return assertInstanceOf(IllegalStateException.class, t.getCause());
        } finally {
            System.setProperty("os.name", name);
            System.setProperty("os.arch", arch);
        }
    }

    /** Defines kassign.broker's classes itself (from its parent's class files); the rest is the parent's. */
    private static final class KassignFirst extends ClassLoader {
        KassignFirst(ClassLoader parent) {
            super(parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith("kassign.broker.")) return super.loadClass(name, resolve);
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                        if (in == null) throw new ClassNotFoundException(name);
                        byte[] b = in.readAllBytes();
                        c = defineClass(name, b, 0, b.length);
                    } catch (IOException io) {
                        throw new ClassNotFoundException(name, io);
                    }
                }
                if (resolve) resolveClass(c);
                return c;
            }
        }
    }
}
