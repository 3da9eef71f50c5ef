// SPDX-License-Identifier: MIT
//
// ChurnWorker.java - the class Demo defines again and again as a hidden
// class, so that its compiled code is unloaded with it (CODE_FREE records,
// spec.md §5.10).

import java.util.function.LongUnaryOperator;

public final class ChurnWorker implements LongUnaryOperator {
    @Override
    public long applyAsLong(long x) {
        long a = x;
        for (int i = 0; i < 48; i++) {
            a = a * 6364136223846793005L + 1442695040888963407L;
            a ^= a >>> 29;
        }
        return a;
    }
}
