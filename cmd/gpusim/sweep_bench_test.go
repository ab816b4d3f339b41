package main

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
)

// sweepArgs is the 1,000-configuration sweep of docs/compare.md.
func sweepArgs() []string {
	var b []string
	for v := 8; v <= 200; v += 8 {
		b = append(b, strconv.Itoa(v))
	}
	return []string{"--vary", "batch=" + strings.Join(b, ","), "--vary", "precision=float32,mixed_float16",
		"--vary", "xla=true,false", "--vary", "optimizer=sgd,adam,momentum,rmsprop,adagrad",
		"--vary", "memory.mode=preallocate,growth", "-o", "csv"}
}

// BenchmarkCompareSweep runs the 1,000-configuration sweep of docs/compare.md and reports
// configurations simulated per second of wall time, the CPU seconds a sweep, the bytes
// allocated and the peak RSS (issue 32's budget: under 200 MB; -benchtime 1x for a fresh
// process, as the CLI runs).
func BenchmarkCompareSweep(b *testing.B) {
	configs := 0
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if err := run(context.Background(), io.Discard, io.Discard, append([]string{"compare"}, sweepArgs()...)); err != nil {
			b.Fatal(err)
		}
		configs += 1000
	}
	b.ReportMetric(float64(configs)/b.Elapsed().Seconds(), "configs/s")
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
	reportPeakRSS(b)
}

// BenchmarkRunInputBound runs the input-bound built-in scenario for 1,000 steps with its
// diagnosis and remedies, as gpusim run prints them, and reports simulated steps per second.
func BenchmarkRunInputBound(b *testing.B) {
	for b.Loop() {
		if err := run(context.Background(), io.Discard, io.Discard, []string{"run", "input-bound", "--set", "steps=1000"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkRun8GPUs1MSteps is docs/design.md's long-run budget as a user runs it: gpusim run
// resnet50-8xa100 --set steps=1000000 -o json (8 A100s, MirroredStrategy, each replica's
// kernel-time jitter on), under 1 s and 100 MB. It reports simulated steps per second, seconds
// per run (wall and CPU), bytes allocated per run and the peak RSS (run it cold, as the CLI
// runs):
//
//	go test ./cmd/gpusim -run '^$' -bench Run8GPUs1MSteps -benchtime 1x
func BenchmarkRun8GPUs1MSteps(b *testing.B) {
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if err := run(context.Background(), io.Discard, io.Discard, []string{"run", "resnet50-8xa100", "--set", "steps=1000000", "-o", "json"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(1e6*float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/run")
	reportPeakRSS(b)
}
