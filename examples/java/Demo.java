// SPDX-License-Identifier: MIT
//
// Demo.java - a JVM workload for the vmp HotSpot agent: hot methods, GC and
// compiled-code churn, so that a profile (spec.md) shows samples, functions,
// code objects, frees and events.
//
// usage: java -jar vmp-demo.jar [MODE] [SCALE]
//   MODE   all (default): the hot loop, string hashing, sorting, allocation,
//          short-lived threads and code churn, about 4 s at SCALE 1
//          hot:   one tight numeric loop (Demo.hotLoop) dominates
//          churn: many short-lived hidden classes whose code is compiled,
//                 then unloaded at System.gc()
//          spin:  one busy thread named "vmp-spin"; prints its CPU time
//          exit:  a thread that is not main calls System.exit(3)
//          short: 500 short threads "vmp-short-N", four at a time, each using
//                 a fraction of a millisecond of CPU; prints their summed CPU
//          native: Demo.deflateWork compresses with java.util.zip.Deflater,
//                 so most of the time is in native code (libzip, zlib)
//          copy:  Demo.copyWork: System.arraycopy of large arrays (VM code)
//          vmnative: time in the VM and native libraries, a quarter each:
//                 System.arraycopy of large arrays, String.intern,
//                 java.util.zip (Deflater, CRC32) and System.gc
//          threads: every kind of thread at once: a busy thread "vmp-spin",
//                 allocation for G1's GC threads ("vmp-alloc"), hidden
//                 classes for the JIT compilers ("vmp-jit"), 1,000 short
//                 threads "vmp-short-N" and, when the system property
//                 vmp.native names a JNI library with Demo.nativeSpin (the
//                 tests build one), a native thread "vmp-native"; prints
//                 the CPU time of the process and of each live thread
//                 from /proc (its change since start_ns, System.nanoTime()
//                 when the mode began) and each worker's own
//          nshort: (needs vmp.native) native threads one after another:
//                 200 of 2 ms of CPU "vmp-ns-2ms", 200 of 10 ms "vmp-ns-10ms"
//                 and 40 of 50 ms "vmp-ns-50ms"; prints their CPU time
//          alloc: Demo.allocLarge allocates byte[3072], Demo.allocSmall
//                 byte[1024], as often each: three quarters of the bytes
//                 allocated (with their 16-byte headers: 3088 to 1040) are
//                 allocLarge's; the arrays escape (a ring keeps them)
//          live:  Demo.keepAlloc allocates 16,000 byte[4096] and keeps them
//                 all; Demo.dropAlloc as many and keeps the last 64 only
//          lock:  a thread "vmp-holder" holds the monitor of a Demo.Account
//                 for 4 ms at a time (Demo.holdLock); the main thread enters
//                 it in Demo.waitForLock, waiting for it; prints the time
//                 waitForLock waited in total (lock_wait_ns=)
//   SCALE  multiplies the running time (a decimal number, default 1)

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.LongUnaryOperator;

public final class Demo {
    static volatile long sink;
    // hot mode: the calls of hotLoop made, the work rate a profiler must not slow
    static long hotRounds;

    private Demo() {}

    // The hot loop: nearly all of its time is spent between the two markers,
    // which the agent's tests find in this file.
    static long hotLoop(long seed, int n) {
        long x = seed | 1;
        long acc = 0;
        int calls = n >>> 4;
        for (int i = 0; i < n; i++) { // vmp-hot-loop-begin
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            acc += (x & 1023) * i;
        } // vmp-hot-loop-end
        if (calls < 0) {
            acc += coldPath(calls);
        }
        return acc;
    }

    static long coldPath(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += Integer.toString(i).hashCode();
        }
        return s;
    }

    static long stringWork(int n, Random rnd) {
        Map<String, Integer> counts = new HashMap<>();
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.setLength(0);
            sb.append("key-").append(rnd.nextInt(4096)).append('-').append(i & 63);
            counts.merge(sb.toString(), 1, Integer::sum);
        }
        long h = 0;
        for (Map.Entry<String, Integer> e : counts.entrySet()) {
            h += e.getKey().hashCode() * (long) e.getValue();
        }
        return h;
    }

    static long sortWork(int n, Random rnd) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = rnd.nextInt();
        }
        Arrays.sort(a);
        Integer[] b = new Integer[n / 4];
        for (int i = 0; i < b.length; i++) {
            b[i] = a[(i * 7919) % n];
        }
        Arrays.sort(b, (p, q) -> Integer.compare(q, p));
        return a[n / 2] + (long) b[0];
    }

    // Allocation that keeps some objects alive for a while: young and old GCs.
    static long allocWork(int rounds) {
        List<byte[]> keep = new ArrayList<>();
        long s = 0;
        for (int i = 0; i < rounds; i++) {
            byte[] b = new byte[1024 + (i & 4095)];
            b[i % b.length] = (byte) i;
            s += b.length;
            if ((i & 15) == 0) {
                keep.add(b);
            }
            if (keep.size() > 20000) {
                keep.clear();
            }
        }
        return s + keep.size();
    }

    static byte[] churnBytes() throws IOException {
        try (InputStream in = Demo.class.getResourceAsStream("/ChurnWorker.class")) {
            if (in == null) {
                throw new IOException("ChurnWorker.class is not on the class path");
            }
            return in.readAllBytes();
        }
    }

    // Each round defines ChurnWorker anew as a hidden class (unloadable once
    // unreachable), runs it hot enough to be compiled, then drops it.
    static long churn(long millis) throws Throwable {
        byte[] bytes = churnBytes();
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        long end = System.nanoTime() + millis * 1_000_000L;
        long s = 0;
        int round = 0;
        while (System.nanoTime() < end) {
            MethodHandles.Lookup hidden = lookup.defineHiddenClass(bytes, true);
            LongUnaryOperator op = (LongUnaryOperator) hidden
                    .findConstructor(hidden.lookupClass(), MethodType.methodType(void.class))
                    .invoke();
            for (int i = 0; i < 30000; i++) {
                s += op.applyAsLong(i);
            }
            round++;
            if (round % 40 == 0) {
                System.gc();
            }
        }
        System.gc();
        return s + round;
    }

    static long spin(long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        long s = 0;
        while (System.nanoTime() < end) {
            s += hotLoop(s, 100_000);
        }
        return s;
    }

    static void runSpin(long millis) throws InterruptedException {
        long[] cpu = new long[1];
        Thread t = new Thread(() -> {
            sink = spin(millis);
            cpu[0] = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        }, "vmp-spin");
        t.start();
        t.join();
        System.out.println("spin_thread=vmp-spin spin_cpu_ns=" + cpu[0]);
    }

    static void runExit(long millis) throws InterruptedException {
        Thread t = new Thread(() -> {
            sink = spin(millis);
            System.out.println("exiting from " + Thread.currentThread().getName());
            System.out.flush();
            System.exit(3);
        }, "vmp-exiter");
        t.start();
        // main stays busy; exit comes from the other thread
        while (true) {
            sink += hotLoop(sink, 10_000);
            Thread.sleep(1);
        }
    }

    // Allocation: the arrays escape into this ring, so that the JIT keeps
    // every allocation (no escape analysis removes them).
    static final Object[] keep = new Object[4096];

    static void allocLarge(int i) {
        keep[i & 4095] = new byte[3072];
    }

    static void allocSmall(int i) {
        keep[(i + 2048) & 4095] = new byte[1024];
    }

    static void runAlloc(long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        int i = 0;
        while (System.nanoTime() < end) {
            for (int k = 0; k < 1000; k++, i++) {
                allocLarge(i);
                allocSmall(i);
            }
        }
        sink = i;
        System.out.println("alloc_pairs=" + i);
    }

    // Live objects: what keepAlloc allocates stays reachable, what dropAlloc
    // allocates does not (but its last 64).
    static final List<byte[]> kept = new ArrayList<>();
    static final Object[] dropRing = new Object[64];

    static void keepAlloc() {
        kept.add(new byte[4096]);
    }

    static void dropAlloc(int i) {
        dropRing[i & 63] = new byte[4096];
    }

    static void runLive() {
        for (int i = 0; i < 16_000; i++) {
            keepAlloc();
            dropAlloc(i);
        }
        System.out.println("live_kept=" + kept.size());
    }

    // Lock contention: the monitor of one Account, held 4 ms at a time.
    static final class Account {
        long balance;
    }

    static final Account account = new Account();

    static void holdLock(long nanos) {
        synchronized (account) {
            long end = System.nanoTime() + nanos;
            while (System.nanoTime() < end) {
                account.balance++;
            }
        }
    }

    static long waitForLock() {
        long t0 = System.nanoTime();
        synchronized (account) {
            account.balance--;
        }
        return System.nanoTime() - t0;
    }

    static void runLock(long millis) throws InterruptedException {
        final long end = System.nanoTime() + millis * 1_000_000L;
        Thread holder = new Thread(() -> {
            while (System.nanoTime() < end) {
                holdLock(4_000_000L);
                try {
                    Thread.sleep(0, 300_000);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "vmp-holder");
        holder.start();
        long waited = 0;
        while (System.nanoTime() < end) {
            Thread.sleep(1);
            waited += waitForLock();
        }
        holder.join();
        System.out.println("lock_wait_ns=" + waited);
    }

    static void runHot(long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        long s = 0;
        while (System.nanoTime() < end) {
            s += hotLoop(s, 1_000_000);
            hotRounds++;
        }
        sink = s;
    }

    // Many short-lived threads: each is registered with the agent at its
    // start and unregistered at its end while the others are sampled.
    static long threadChurn(long millis) throws InterruptedException {
        long end = System.nanoTime() + millis * 1_000_000L;
        long[] sums = new long[16];
        int started = 0;
        while (System.nanoTime() < end) {
            Thread[] ts = new Thread[sums.length];
            for (int i = 0; i < ts.length; i++) {
                final int k = i;
                ts[i] = new Thread(() -> sums[k] += hotLoop(k, 200_000), "vmp-churn-" + started++);
                ts[i].start();
            }
            for (Thread t : ts) {
                t.join();
            }
        }
        long s = started;
        for (long v : sums) {
            s += v;
        }
        return s;
    }

    static void runAll(long millis) throws Throwable {
        Random rnd = new Random(42);
        long slice = Math.max(1, millis / 9);
        runHot(slice * 2);
        long end = System.nanoTime() + slice * 1_000_000L;
        while (System.nanoTime() < end) {
            sink += stringWork(20_000, rnd);
        }
        end = System.nanoTime() + slice * 1_000_000L;
        while (System.nanoTime() < end) {
            sink += sortWork(100_000, rnd);
        }
        end = System.nanoTime() + slice * 1_000_000L;
        while (System.nanoTime() < end) {
            sink += allocWork(50_000);
        }
        sink += threadChurn(slice);
        sink += churn(slice * 3);
    }

    // 500 short threads, four at a time; each adds its own CPU time (from its
    // birth) to the sum printed as short_cpu_ns.
    static void runShort() throws InterruptedException {
        final java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        final java.util.concurrent.atomic.AtomicLong cpu = new java.util.concurrent.atomic.AtomicLong();
        final int n = 500;
        for (int i = 0; i < n; i += 4) {
            Thread[] ts = new Thread[4];
            for (int k = 0; k < ts.length; k++) {
                final int seed = i + k;
                ts[k] = new Thread(() -> {
                    sink += hotLoop(seed, 20_000);
                    cpu.addAndGet(mx.getCurrentThreadCpuTime());
                }, "vmp-short-" + (i + k));
                ts[k].start();
            }
            for (Thread t : ts) {
                t.join();
            }
        }
        System.out.println("short_threads=" + n + " short_cpu_ns=" + cpu.get());
    }

    // Native code called from Java: the Deflater's work runs in libzip and
    // zlib, below this method's frame.
    static long deflateWork(byte[] in, byte[] out) {
        java.util.zip.Deflater d = new java.util.zip.Deflater(9);
        d.setInput(in);
        d.finish();
        long n = 0;
        while (!d.finished()) {
            n += d.deflate(out);
        }
        d.end();
        return n;
    }

    // java.util.zip on 1 MiB of text that compresses, not trivially:
    // Deflater alone, or with a CRC32 of the input each round.
    static void runZip(long millis, boolean crc32) {
        Random rnd = new Random(7);
        byte[] in = new byte[1 << 20];
        for (int i = 0; i < in.length; i++) {
            in[i] = (byte) ('a' + rnd.nextInt(6));
        }
        byte[] out = new byte[1 << 16];
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            sink += deflateWork(in, out);
            if (crc32) {
                crc.update(in);
                sink += crc.getValue();
            }
        }
    }

    // System.arraycopy of large arrays, one object array (the VM checks
    // every element's type) and one long array.
    static long copyWork(Object[] a, Object[] b, long[] x, long[] y) {
        System.arraycopy(a, 0, b, 0, a.length);
        System.arraycopy(x, 0, y, 0, x.length);
        return b.length + y[y.length - 1];
    }

    static long internWork(int base, int n) {
        long h = 0;
        for (int i = 0; i < n; i++) {
            h += ("vmp-intern-" + (base + i % 50_000)).intern().hashCode();
        }
        return h;
    }

    static void runCopy(long millis) {
        Object[] a = new Object[1 << 20];
        Object[] b = new Object[1 << 20];
        Arrays.fill(a, "x");
        long[] x = new long[1 << 21];
        long[] y = new long[1 << 21];
        long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            sink += copyWork(a, b, x, y);
        }
    }

    static void runIntern(long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        int base = 0;
        while (System.nanoTime() < end) {
            sink += internWork(base, 10_000);
            base += 10_000;
        }
    }

    static void runGc(long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        List<long[]> keep = new ArrayList<>();
        while (System.nanoTime() < end) {
            for (int i = 0; i < 64; i++) {
                keep.add(new long[4096]);
            }
            System.gc();
            keep.clear();
        }
    }

    static void runVmNative(long millis) {
        long slice = Math.max(1, millis / 4);
        runCopy(slice);
        runIntern(slice);
        runZip(slice, true);
        runGc(slice);
    }

    // CPU time of the process (utime + stime of /proc/self/stat), in ns.
    static long processCpuNs() throws IOException {
        return statCpuNs(java.nio.file.Paths.get("/proc/self/stat"));
    }

    // utime + stime of a /proc stat file (after the name in parentheses), in
    // ns; the kernel counts them in USER_HZ ticks, 100 per second.
    static long statCpuNs(java.nio.file.Path stat) throws IOException {
        String s = java.nio.file.Files.readString(stat);
        String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L;
    }

    // Each live thread's CPU time from /proc/self/task: the scheduler's
    // nanoseconds (schedstat), else stat's ticks.
    static Map<Long, Long> taskCpuNs() throws IOException {
        Map<Long, Long> cpu = new HashMap<>();
        try (java.util.stream.Stream<java.nio.file.Path> tasks =
                java.nio.file.Files.list(java.nio.file.Paths.get("/proc/self/task"))) {
            for (java.nio.file.Path t : (Iterable<java.nio.file.Path>) tasks::iterator) {
                try {
                    long ns;
                    try {
                        ns = Long.parseLong(java.nio.file.Files.readString(t.resolve("schedstat")).split(" ")[0]);
                    } catch (IOException | NumberFormatException e) {
                        ns = statCpuNs(t.resolve("stat"));
                    }
                    cpu.put(Long.parseLong(t.getFileName().toString()), ns);
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        }
        return cpu;
    }

    static native long nativeSpin(long millis);

    static native long nativeShort(int n, long micros, String name);

    static void runNativeShort(double scale) {
        System.load(System.getProperty("vmp.native"));
        int k = Math.max(1, (int) scale);
        long ns2 = nativeShort(200 * k, 2_000, "vmp-ns-2ms");
        long ns10 = nativeShort(200 * k, 10_000, "vmp-ns-10ms");
        long ns50 = nativeShort(40 * k, 50_000, "vmp-ns-50ms");
        System.out.println("ns_2ms_cpu_ns=" + ns2 + " ns_10ms_cpu_ns=" + ns10 + " ns_50ms_cpu_ns=" + ns50);
    }

    static void runThreads(long millis) throws Throwable {
        final java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long process0 = processCpuNs();
        Map<Long, Long> task0 = taskCpuNs();
        long start = System.nanoTime();
        Map<String, Long> workers = new java.util.concurrent.ConcurrentHashMap<>();
        long[] spinCpu = new long[1];
        long[] nativeCpu = new long[1];
        List<Thread> ts = new ArrayList<>();
        ts.add(new Thread(() -> {
            sink += spin(millis);
            spinCpu[0] = mx.getCurrentThreadCpuTime();
            workers.put("vmp-spin", spinCpu[0]);
        }, "vmp-spin"));
        ts.add(new Thread(() -> {
            long end = System.nanoTime() + millis * 1_000_000L;
            while (System.nanoTime() < end) {
                sink += allocWork(50_000);
            }
            workers.put("vmp-alloc", mx.getCurrentThreadCpuTime());
        }, "vmp-alloc"));
        ts.add(new Thread(() -> {
            try {
                sink += churn(millis);
            } catch (Throwable e) {
                throw new RuntimeException(e);
            }
            workers.put("vmp-jit", mx.getCurrentThreadCpuTime());
        }, "vmp-jit"));
        ts.add(new Thread(() -> {
            try {
                for (int i = 0; i < 1000; i += 4) {
                    Thread[] batch = new Thread[4];
                    for (int k = 0; k < batch.length; k++) {
                        final int seed = i + k;
                        batch[k] = new Thread(() -> sink += hotLoop(seed, 20_000), "vmp-short-" + seed);
                        batch[k].start();
                    }
                    for (Thread t : batch) {
                        t.join();
                    }
                }
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "vmp-starter"));
        String lib = System.getProperty("vmp.native");
        if (lib != null) {
            System.load(lib);
            ts.add(new Thread(() -> nativeCpu[0] = nativeSpin(millis / 2), "vmp-jni"));
        }
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        Map<Long, Long> task1 = taskCpuNs();
        long process1 = processCpuNs();
        StringBuilder out = new StringBuilder();
        for (Map.Entry<Long, Long> e : task1.entrySet()) {
            long before = task0.getOrDefault(e.getKey(), 0L);
            String comm;
            try {
                comm = java.nio.file.Files.readString(
                        java.nio.file.Paths.get("/proc/self/task/" + e.getKey() + "/comm")).trim();
            } catch (IOException x) {
                comm = "";
            }
            out.append("task=").append(e.getKey()).append(" task_cpu_ns=").append(e.getValue() - before)
                    .append(" comm=").append(comm).append('\n');
        }
        for (Map.Entry<String, Long> e : workers.entrySet()) {
            out.append("thread_cpu_ns=").append(e.getValue()).append(" name=").append(e.getKey()).append('\n');
        }
        if (lib != null) {
            out.append("thread_cpu_ns=").append(nativeCpu[0]).append(" name=vmp-native\n");
        }
        out.append("spin_cpu_ns=").append(spinCpu[0]).append('\n');
        out.append("start_ns=").append(start).append('\n');
        if (lib != null) {
            out.append("native_cpu_ns=").append(nativeCpu[0]).append('\n');
        }
        out.append("process_cpu_ns=").append(process1 - process0).append('\n');
        System.out.print(out);
    }

    public static void main(String[] args) throws Throwable {
        String mode = args.length > 0 ? args[0] : "all";
        double scale = args.length > 1 ? Double.parseDouble(args[1]) : 1.0;
        long millis = Math.max(1, (long) (4000 * scale));
        long t0 = System.nanoTime();
        switch (mode) {
            case "all":
                runAll(millis);
                break;
            case "hot":
                runHot(millis);
                break;
            case "alloc":
                runAlloc(millis);
                break;
            case "lock":
                runLock(millis);
                break;
            case "live":
                runLive();
                break;
            case "churn":
                sink += churn(millis);
                break;
            case "spin":
                runSpin(millis);
                break;
            case "exit":
                runExit(millis);
                break;
            case "short":
                runShort();
                break;
            case "native":
                runZip(millis, false);
                break;
            case "copy":
                runCopy(millis);
                break;
            case "vmnative":
                runVmNative(millis);
                break;
            case "threads":
                runThreads(millis);
                break;
            case "nshort":
                runNativeShort(scale);
                break;
            default:
                System.err.println("usage: Demo [all|hot|alloc|live|lock|churn|spin|exit|short|native|copy|vmnative|threads|nshort] [scale]");
                System.exit(2);
        }
        System.out.printf("mode=%s elapsed_ms=%d rounds=%d%n", mode, (System.nanoTime() - t0) / 1_000_000,
                hotRounds);
    }
}
