package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user plus system CPU time so far (0 where getrusage fails). On a
// shared machine the wall time of a benchmark moves with the load; the CPU time it took does
// not, so the benchmarks report both.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportPeakRSS adds the process's peak resident set (Linux's VmHWM) to b's figures, in MB.
// With -benchtime 1x in a fresh test binary it is close to what /usr/bin/time -v reports for
// the same command of the built gpusim (the figures docs/speed.md gives), the test binary's
// own pages included; elsewhere it reports nothing.
func reportPeakRSS(b *testing.B) {
	b.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			if kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64); err == nil {
				b.ReportMetric(kb/1000, "peak-RSS-MB")
			}
			return
		}
	}
}
