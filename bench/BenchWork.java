// SPDX-License-Identifier: MIT
//
// BenchWork.java - a fixed amount of JVM work for measuring profiler
// overhead (bench/run, section 6): the time it takes grows with the
// overhead, unlike the examples/java demo, which runs for a fixed time.
//
// usage: java BenchWork [THREADS [ROUNDS]]
// Each thread runs ROUNDS rounds of: a numeric loop, strings into a hash
// map, sorting, and short-lived allocation.  Prints a checksum so that no
// work can be optimized away.

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

public final class BenchWork {
    private static long numeric(long seed) {
        long x = seed;
        double acc = 0;
        for (int i = 0; i < 2_000_000; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            acc += (x & 1023) * 0.5 - Math.sqrt(i & 255);
        }
        return x ^ (long) acc;
    }

    private static long strings(int round) {
        Map<String, Integer> m = new HashMap<>();
        for (int i = 0; i < 60_000; i++) {
            String k = "key-" + (i * 31 + round) % 20_000;
            m.merge(k, i, Integer::sum);
        }
        long s = 0;
        for (Map.Entry<String, Integer> e : m.entrySet())
            s += e.getKey().length() + e.getValue();
        return s;
    }

    private static long sorting(Random r) {
        int[] a = new int[100_000];
        for (int i = 0; i < a.length; i++)
            a[i] = r.nextInt();
        Arrays.sort(a);
        return a[a.length / 2];
    }

    private static long allocation(int round) {
        List<int[]> keep = new ArrayList<>();
        long s = 0;
        for (int i = 0; i < 100_000; i++) {
            int[] b = new int[8 + (i & 15)];
            b[0] = i + round;
            if ((i & 63) == 0)
                keep.add(b);
            s += b.length;
        }
        return s + keep.size();
    }

    public static void main(String[] args) throws InterruptedException {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 40;
        long[] sums = new long[threads];
        Thread[] ts = new Thread[threads];
        long t0 = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                Random r = new Random(id);
                long s = 0;
                for (int i = 0; i < rounds; i++)
                    s += numeric(i + id) + strings(i) + sorting(r) + allocation(i);
                sums[id] = s;
            }, "bench-work-" + t);
            ts[t].start();
        }
        long sum = 0;
        for (int t = 0; t < threads; t++) {
            ts[t].join();
            sum += sums[t];
        }
        System.out.printf("checksum=%d elapsed_ms=%d%n", sum, (System.nanoTime() - t0) / 1_000_000);
    }
}
