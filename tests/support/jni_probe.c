/*
 * Loads a kassign JNI library the way a JVM does (dlopen with RTLD_NOW: every symbol resolved
 * against the C library of the machine it runs on) and calls one entry point,
 * NativeAssignor.version(), with a JNIEnv that provides only what that call uses (NewStringUTF,
 * ExceptionCheck); any other JNI function exits with status 3. Prints the version the library
 * returned. tests/broker/test_broker_jar.py builds it with zig for each bundled platform and runs
 * it natively or under qemu-user, so no JVM for the other architecture is needed.
 *
 * Usage: jni_probe /path/to/libkassign.so
 */
#include <dlfcn.h>
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>

static char returned[256];

static jstring JNICALL new_string_utf(JNIEnv *env, const char *utf) {
    (void)env;
    snprintf(returned, sizeof returned, "%s", utf);
    return (jstring)returned;
}

static jboolean JNICALL exception_check(JNIEnv *env) {
    (void)env;
    return JNI_FALSE;
}

static void unexpected(void) {
    fprintf(stderr, "jni_probe: the library called a JNI function the probe does not provide\n");
    exit(3);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: jni_probe /path/to/libkassign.so\n");
        return 64;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "jni_probe: dlopen: %s\n", dlerror());
        return 1;
    }
    jstring (JNICALL *version)(JNIEnv *, jclass);
    *(void **)&version = dlsym(lib, "Java_kassign_broker_NativeAssignor_version");
    if (version == NULL) {
        fprintf(stderr, "jni_probe: no Java_kassign_broker_NativeAssignor_version: %s\n", dlerror());
        return 1;
    }
    /* Every slot of the function table (all pointers) traps, except the two the call uses. */
    struct JNINativeInterface_ functions;
    void (**slot)(void) = (void (**)(void))&functions;
    for (size_t i = 0; i < sizeof functions / sizeof *slot; i++) slot[i] = unexpected;
    functions.NewStringUTF = new_string_utf;
    functions.ExceptionCheck = exception_check;
    const struct JNINativeInterface_ *env = &functions;
    if (version((JNIEnv *)&env, NULL) != (jstring)returned) {
        fprintf(stderr, "jni_probe: version() did not return the string it created\n");
        return 2;
    }
    printf("%s\n", returned);
    return 0;
}
