package analysis_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/train/traintest"
)

// TestGPUsResNet50A100 asks for 10,000 img/s of ResNet-50 mixed_float16 at 256 per A100-40GB
// (about 1,766 img/s each): 6 GPUs fall short, 7 reach it, and each count's figures are those
// of train.Run at that count.
func TestGPUsResNet50A100(t *testing.T) {
	// The scenario's 200 steps: with a handful, the median step can be one the loss scale
	// skipped (no optimizer ops) and the throughput too high.
	cfg := traintest.ResNet50A100()
	var reps []*analysis.GPUsReport
	for _, jobs := range []int{1, 3} {
		rep, err := analysis.GPUs(context.Background(), cfg, analysis.GPUsOptions{Throughput: 10000, MaxGPUs: 64, Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	if d := cmp.Diff(reps[0], reps[1]); d != "" {
		t.Errorf("GPUs with 1 and 3 jobs differ (-1 +3):\n%s", d)
	}
	rep := reps[0]
	// 7, not 6: one TF runtime dispatches every replica's ops and the slowest replica sets
	// each step, so the efficiency falls with the count (train/replicas.go).
	if rep.GPUs != 7 || rep.Fit == nil || rep.Scaling != "weak" || rep.Batch != 256 {
		t.Fatalf("GPUs = %d (%s scaling, batch %d), want 7, weak, 256", rep.GPUs, rep.Scaling, rep.Batch)
	}
	var counts []int
	for _, tr := range rep.Trials {
		counts = append(counts, tr.GPUs)
		c := cfg
		c.GPUCount, c.Strategy, c.Batch = tr.GPUs, "mirrored", 256*tr.GPUs
		res, err := analysis.Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Throughput != res.Throughput || tr.Efficiency != res.ScalingEfficiency || tr.GlobalBatch != c.Batch {
			t.Errorf("%d GPUs: reported %v samples/s eff %v batch %d, Run %v eff %v batch %d",
				tr.GPUs, tr.Throughput, tr.Efficiency, tr.GlobalBatch, res.Throughput, res.ScalingEfficiency, c.Batch)
		}
		if tr.Reaches != (tr.GPUs >= 7) {
			t.Errorf("%d GPUs: reaches=%v at %v samples/s", tr.GPUs, tr.Reaches, tr.Throughput)
		}
	}
	if want := []int{1, 2, 4, 6, 7, 8}; !cmp.Equal(counts, want) {
		t.Errorf("counts tried %v, want %v", counts, want)
	}
}

// TestGPUsUnreachable checks the reasons: a starved input pipeline, and the all-reduce of
// BERT's 440 MB of gradients over PCIe at a small batch.
func TestGPUsUnreachable(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  train.Config
		o    analysis.GPUsOptions
		want string
	}{
		{"input", traintest.Steps(traintest.InputBound(), 20), analysis.GPUsOptions{Throughput: 10000, MaxGPUs: 8}, "input bound"},
		{"all-reduce", with("default", func(c *train.Config) { c.Model, c.GPU, c.Optimizer, c.Steps = "bert-base", "rtx4090", "adam", 5 }),
			analysis.GPUsOptions{Throughput: 5000, MaxGPUs: 16, PerGPUBatch: 8}, "all-reduce bound"},
		{"compute", with("default", func(c *train.Config) { c.Model, c.Steps = "mlp", 5 }),
			analysis.GPUsOptions{Throughput: 1e12, MaxGPUs: 2, PerGPUBatch: 64}, "compute bound"},
		{"oom", with("default", func(c *train.Config) { c.GPU, c.Steps = "t4", 2 }),
			analysis.GPUsOptions{Throughput: 1000, MaxGPUs: 2, PerGPUBatch: 4096}, "every count tried runs out of memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Jobs = 2
			rep, err := analysis.GPUs(context.Background(), tc.cfg, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if rep.GPUs != 0 || rep.Fit != nil {
				t.Fatalf("GPUs = %d, want unreachable", rep.GPUs)
			}
			if !strings.Contains(rep.Reason, tc.want) {
				t.Errorf("reason %q, want it to contain %q", rep.Reason, tc.want)
			}
			if got := rep.Trials[len(rep.Trials)-1].GPUs; got != tc.o.MaxGPUs {
				t.Errorf("largest count tried %d, want --max-gpus %d", got, tc.o.MaxGPUs)
			}
		})
	}
}

// TestGPUsStrongScaling keeps the global batch: every count trains on 512 samples per update,
// and the counts stop at the batch when it is smaller than MaxGPUs.
func TestGPUsStrongScaling(t *testing.T) {
	cfg := traintest.Steps(traintest.ResNet50A100(), 5)
	rep, err := analysis.GPUs(context.Background(), cfg, analysis.GPUsOptions{Throughput: 5000, MaxGPUs: 64, GlobalBatch: 512, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Scaling != "strong" || rep.GPUs == 0 {
		t.Fatalf("GPUs = %d (%s), want a count with strong scaling", rep.GPUs, rep.Scaling)
	}
	for _, tr := range rep.Trials {
		// tf.distribute gives the first replicas one more sample when the split is uneven.
		if lo := 512 / tr.GPUs; tr.GlobalBatch != 512 || tr.ReplicaBatch < lo || tr.ReplicaBatch > lo+1 {
			t.Errorf("%d GPUs: global %d per GPU %d, want 512 and %d or %d", tr.GPUs, tr.GlobalBatch, tr.ReplicaBatch, lo, lo+1)
		}
	}
	small, err := analysis.GPUs(context.Background(), cfg, analysis.GPUsOptions{Throughput: 1e9, MaxGPUs: 64, GlobalBatch: 4, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if small.MaxGPUs != 4 || small.Trials[len(small.Trials)-1].GPUs != 4 {
		t.Errorf("global batch 4: max GPUs %d, last count %d, want 4 and 4", small.MaxGPUs, small.Trials[len(small.Trials)-1].GPUs)
	}
}

func TestGPUsErrors(t *testing.T) {
	cfg := train.DefaultConfig()
	for _, tc := range []struct {
		o    analysis.GPUsOptions
		want string
	}{
		{analysis.GPUsOptions{MaxGPUs: 8}, "throughput 0"},
		{analysis.GPUsOptions{Throughput: 1, MaxGPUs: 0}, "max gpus 0"},
		{analysis.GPUsOptions{Throughput: 1, MaxGPUs: 8, PerGPUBatch: 8, GlobalBatch: 64}, "give one"},
	} {
		_, err := analysis.GPUs(context.Background(), cfg, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("GPUs(%+v) error %v, want one containing %q", tc.o, err, tc.want)
		}
	}
}
