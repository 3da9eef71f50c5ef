// SPDX-License-Identifier: MIT
//
// A CPU profile written by Go's own runtime/pprof, for run_pprof_tests.py:
// `vmp import` must read what real pprof producers write (inlined Lines,
// mappings with addresses, Go's labels).  Standard library only.
package main

import (
	"context"
	"os"
	"runtime/pprof"
	"syscall"
	"time"
)

// cpuTime is the process's CPU time so far: the workloads below run for a
// given amount of CPU, not of wall time, so that a loaded machine still
// gives the profiler the same number of ticks to record.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:noinline
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func square(x int) int { return x * x } // inlined by the compiler

func spin(d time.Duration) int {
	s := 0
	for end := cpuTime() + d; cpuTime() < end; {
		for i := 0; i < 1000; i++ {
			s += square(i)
		}
	}
	return s
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	s := 0
	pprof.Do(context.Background(), pprof.Labels("thread", "worker"), func(context.Context) {
		end := cpuTime() + 600*time.Millisecond
		for cpuTime() < end {
			s += fib(25)
		}
	})
	s += spin(400 * time.Millisecond)
	pprof.StopCPUProfile()
	f.Close()
	if s == 0 {
		os.Exit(1)
	}
}
