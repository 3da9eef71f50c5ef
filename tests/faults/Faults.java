// SPDX-License-Identifier: MIT
//
// Faults.java - a JVM that meets a fault mid-recording (test_faults.py):
// it runs a hot loop for MILLIS ms, prints the monotonic time
// (System.nanoTime(): CLOCK_MONOTONIC on Linux, the agent's clock) and then
//   jni:     calls a JNI function that writes through a NULL pointer,
//   unsafe:  writes to address 0 through sun.misc.Unsafe,
//   abort:   calls abort() through JNI,
//   sigprof: installs its own SIGPROF handler through JNI (as another
//            profiler would), runs the hot loop MILLIS ms more and exits 0.
// or, with `threads MICROS LIBRARY JAVA NATIVE`, starts JAVA Java threads
// (vmp-many-N) and NATIVE native threads (vmp-nat-N, through JNI) that all
// wait; a second later each burns MICROS us of its CPU time, then waits
// again until all have; prints the counts and exits 0.
//
// usage: java -cp DIR Faults jni|unsafe|abort|sigprof MILLIS LIBRARY
//        java -cp DIR Faults threads MICROS LIBRARY JAVA NATIVE
import java.lang.reflect.Field;
import java.lang.reflect.Method;

public class Faults {
    static native void nullWrite();

    static native void callAbort();

    static native void takeSigprof();

    static native int startNative(int n, long spinNanos);

    static native void runNative();

    static native void endNative();

    static void spinCpu(java.lang.management.ThreadMXBean mx, long nanos) {
        long t0 = mx.getCurrentThreadCpuTime(), x = t0;
        while (mx.getCurrentThreadCpuTime() - t0 < nanos) {
            x = spin(x);
        }
        sink = x;
    }

    static void manyThreads(long micros, int nJava, int nNative) throws Exception {
        java.lang.management.ThreadMXBean mx =
                java.lang.management.ManagementFactory.getThreadMXBean();
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(nJava);
        java.util.concurrent.CountDownLatch end = new java.util.concurrent.CountDownLatch(1);
        for (int i = 0; i < nJava; i++) {
            Thread t = new Thread(null, () -> {
                try {
                    go.await();
                    spinCpu(mx, micros * 1000L);
                    done.countDown();
                    end.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "vmp-many-" + i, 256 * 1024);
            t.setDaemon(true);
            t.start();
        }
        int natives = startNative(nNative, micros * 1000L);
        Thread.sleep(1000); // the agent's scans find the native threads
        long t0 = System.nanoTime();
        go.countDown();
        runNative();
        done.await();
        System.out.println("threads: java=" + nJava + " native=" + natives + " ran_ms="
                + (System.nanoTime() - t0) / 1_000_000);
        end.countDown();
        endNative();
    }

    static volatile long sink;

    static long spin(long x) {
        for (int i = 0; i < 10000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }

    static long hot(long x, long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            x = spin(x);
        }
        sink = x;
        return x;
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        long millis = Long.parseLong(args[1]);
        System.load(args[2]);
        if (mode.equals("threads")) {
            manyThreads(millis, Integer.parseInt(args[3]), Integer.parseInt(args[4]));
            return;
        }
        // sun.misc.Unsafe through reflection: javac warns of every mention
        Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
        Field f = unsafeClass.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        Object unsafe = f.get(null);
        Method putAddress = unsafeClass.getMethod("putAddress", long.class, long.class);
        long x = hot(1, millis);
        System.out.println("crash_ns=" + System.nanoTime());
        System.out.flush();
        switch (mode) {
            case "jni":
                nullWrite();
                break;
            case "unsafe":
                putAddress.invoke(unsafe, 0L, 42L);
                break;
            case "sigprof":
                takeSigprof();
                sink = hot(x, millis);
                System.out.println("sigprof: done");
                return;
            default:
                callAbort();
                break;
        }
        System.out.println("not crashed");
    }
}
