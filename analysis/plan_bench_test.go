package analysis

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpusim/gpusim/train"
)

// BenchmarkPlanSearch10k is the search gpusim plan --goal cost --gpus a100-40gb,h100-80gb,l4,t4
// runs over the default scenario, with one more replica batch (16) so that the space has more
// than 10,000 points: issue 32's budget is 10 s on 2 cores and 200 MB. It reports configs/s
// (points of the space over the wall time), how many were simulated, the CPU seconds (the wall
// time moves with a shared machine's load), the bytes allocated and the peak RSS (Linux's
// VmHWM: the test binary's own pages included). Run it cold, as the CLI runs:
//
//	go test ./analysis -run '^$' -bench PlanSearch10k -benchtime 1x -cpu 2
func BenchmarkPlanSearch10k(b *testing.B) {
	base := train.DefaultConfig()
	base.Model, base.GPU, base.Optimizer, base.Batch, base.Steps = "resnet50", "a100-40gb", "sgd", 64, 20
	gpus := []string{"a100-40gb", "h100-80gb", "l4", "t4"}
	space := DefaultPlanSpace(base, gpus, 8)
	space.ReplicaBatches = append([]int{16}, space.ReplicaBatches...)
	n, err := space.Size(base, 1)
	if err != nil {
		b.Fatal(err)
	}
	if n < 10_000 {
		b.Fatalf("space has %d points, want at least 10,000", n)
	}
	o := PlanOptions{Goal: GoalCost, Space: space, Margin: 0.1, Top: 5, Jobs: runtime.GOMAXPROCS(0),
		Training: Training{DatasetSize: 1_000_000, Epochs: 1},
		Prices:   map[string]float64{"a100-40gb": 3, "h100-80gb": 6.5, "l4": 0.8, "t4": 0.5}}
	var rep *PlanReport
	b.ReportAllocs()
	cpu := cpuTime()
	b.ResetTimer()
	for range b.N {
		if rep, err = Plan(context.Background(), base, o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "configs/s")
	b.ReportMetric(float64(rep.Simulated), "simulated")
	b.ReportMetric(float64(n), "configs")
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
	if kb, ok := peakRSSKB(); ok {
		b.ReportMetric(kb/1000, "peak-RSS-MB")
	}
}

// cpuTime is the process's user plus system CPU time so far (0 where getrusage fails).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSSKB is the process's peak resident set in kB (VmHWM of /proc/self/status; false
// where there is none).
func peakRSSKB() (float64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb, err == nil
		}
	}
	return 0, false
}
