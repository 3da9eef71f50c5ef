// SPDX-License-Identifier: MIT
//
// Crash.java - a JVM that crashes mid-recording (test_faults.py, part
// crash): it runs a hot loop for MILLIS ms, prints the monotonic time
// (System.nanoTime(): CLOCK_MONOTONIC on Linux, the agent's clock) and then
//   jni:    calls a JNI function that writes through a NULL pointer,
//   unsafe: writes to address 0 through sun.misc.Unsafe,
//   abort:  calls abort() through JNI.
//
// usage: java -cp DIR Crash jni|unsafe|abort MILLIS LIBRARY
import java.lang.reflect.Field;
import java.lang.reflect.Method;

public class Crash {
    static native void nullWrite();

    static native void callAbort();

    static volatile long sink;

    static long spin(long x) {
        for (int i = 0; i < 10000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        long millis = Long.parseLong(args[1]);
        System.load(args[2]);
        // sun.misc.Unsafe through reflection: javac warns of every mention
        Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
        Field f = unsafeClass.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        Object unsafe = f.get(null);
        Method putAddress = unsafeClass.getMethod("putAddress", long.class, long.class);
        long end = System.nanoTime() + millis * 1_000_000L;
        long x = 1;
        while (System.nanoTime() < end) {
            x = spin(x);
        }
        sink = x;
        System.out.println("crash_ns=" + System.nanoTime());
        System.out.flush();
        switch (mode) {
            case "jni":
                nullWrite();
                break;
            case "unsafe":
                putAddress.invoke(unsafe, 0L, 42L);
                break;
            default:
                callAbort();
                break;
        }
        System.out.println("not crashed");
    }
}
