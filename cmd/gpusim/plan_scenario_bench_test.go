package main

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/scenarios"
)

// BenchmarkPlanHorovodDGX is the search `gpusim plan horovod-dgx-a100` runs (here, above scenarios' row, so that it can load the built-in) (goal throughput,
// the full default space, 20 steps per plan): 10,080 points, of which the bounds leave a few
// hundred eight-replica runs with tf.data to simulate, so unlike BenchmarkPlanSearch10k its
// time is the simulator's, not the search's. Issue 32's budget is 10 s on 2 cores. It reports
// configs/s over the wall time and the CPU seconds (the wall time moves with a shared
// machine's load):
//
//	go test ./cmd/gpusim -run '^$' -bench PlanHorovodDGX -benchtime 1x -cpu 2
func BenchmarkPlanHorovodDGX(b *testing.B) {
	sc, err := scenarios.Builtin("horovod-dgx-a100")
	if err != nil {
		b.Fatal(err)
	}
	base := sc.Config
	maxGPUs := max(base.GPUCount, 1) * base.NodeCount()
	o := analysis.PlanOptions{Goal: analysis.GoalThroughput, Space: analysis.DefaultPlanSpace(base, nil, maxGPUs),
		Margin: 0.1, MaxNodes: 1, Top: 5, Steps: 20, Jobs: runtime.GOMAXPROCS(0),
		Training: analysis.Training{DatasetSize: 1_000_000, Epochs: 1}}
	n, err := o.Space.Size(base, o.MaxNodes)
	if err != nil {
		b.Fatal(err)
	}
	var rep *analysis.PlanReport
	b.ReportAllocs()
	cpu := rusageCPU()
	b.ResetTimer()
	for range b.N {
		if rep, err = analysis.Plan(context.Background(), base, o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "configs/s")
	b.ReportMetric(float64(rep.Simulated), "simulated")
	b.ReportMetric(float64(n), "configs")
	b.ReportMetric((rusageCPU()-cpu).Seconds()/float64(b.N), "cpu-s/op")
}

// rusageCPU is the process's user plus system CPU time so far (0 where getrusage fails).
func rusageCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
