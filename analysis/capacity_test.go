package analysis_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
)

// runAt simulates cfg at batch and steps directly, as a check on what the search reports.
func runAt(t *testing.T, cfg train.Config, batch, steps int) *train.Result {
	t.Helper()
	cfg.Batch, cfg.Steps = batch, steps
	res, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestMaxBatchResNet50T4Adam searches ResNet-50 with Adam on a T4 (16 GB, preallocated) in
// steps of 1: the answer fits, the next batch OOMs, both agree with train.Run, and the OOM is
// in step 2, the first pass with Adam's slots resident: with one step the search would answer
// a larger batch that fails in real training.
func TestMaxBatchResNet50T4Adam(t *testing.T) {
	cfg := with("default", func(c *train.Config) { c.GPU, c.Optimizer = "t4", "adam" })
	o := analysis.DefaultMaxBatchOptions()
	o.Multiple, o.Below, o.Jobs = 1, 2, 2
	rep, err := analysis.MaxBatch(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Batch == 0 || rep.Fit == nil || rep.FirstOOM == nil || rep.AtMax {
		t.Fatalf("MaxBatch = batch %d fit %v first OOM %v at max %v, want a batch, its trial and the first OOM", rep.Batch, rep.Fit, rep.FirstOOM, rep.AtMax)
	}
	if got, want := rep.FirstOOM.Batch, rep.Batch+1; got != want {
		t.Errorf("first OOM at batch %d, want %d (the answer + multiple)", got, want)
	}
	if res := runAt(t, cfg, rep.Batch, 3); res.OOM != nil {
		t.Errorf("train.Run at the answer %d: OOM %s, want a fit", rep.Batch, res.OOM.Message)
	} else if got, want := rep.Fit.PeakBytes, res.Devices[0].PeakBytesInUse; got != want {
		t.Errorf("reported peak %d, train.Run's %d", got, want)
	}
	res := runAt(t, cfg, rep.FirstOOM.Batch, 3)
	if res.OOM == nil {
		t.Fatalf("train.Run at the first OOM %d fits", rep.FirstOOM.Batch)
	}
	if got, want := rep.FirstOOM.OOM.Message, res.OOM.Message; got != want {
		t.Errorf("first OOM message %q, want train.Run's %q", got, want)
	}
	if !strings.HasPrefix(rep.FirstOOM.OOM.Message, "ResourceExhaustedError: OOM when allocating tensor") {
		t.Errorf("first OOM message %q, want TF's", rep.FirstOOM.OOM.Message)
	}
	if got := rep.FirstOOM.OOM.Step; got != 2 {
		t.Errorf("first OOM in step %d, want 2 (the first with Adam's slots)", got)
	}
	o.Steps = 1
	one, err := analysis.MaxBatch(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if one.Batch <= rep.Batch {
		t.Errorf("with 1 step the answer is %d, want more than %d (the slots come after step 1's pass)", one.Batch, rep.Batch)
	}
	// Every trial below the answer fits, every one above it OOMs (monotone here).
	for _, tr := range rep.Trials {
		if tr.Fits != (tr.Batch <= rep.Batch) {
			t.Errorf("trial %d (%s) fits=%v with answer %d", tr.Batch, tr.Phase, tr.Fits, rep.Batch)
		}
	}
	if len(rep.NotMonotone) != 0 {
		t.Errorf("NotMonotone = %v, want none", rep.NotMonotone)
	}
}

// TestMaxBatchJobsDoNotChangeTheAnswer runs the same search with 1 and 4 jobs.
func TestMaxBatchJobsDoNotChangeTheAnswer(t *testing.T) {
	growth := true
	cfg := with("default", func(c *train.Config) { c.GPU, c.Memory.Growth, c.Precision = "rtx3090", &growth, "mixed_float16" })
	var reps []*analysis.MaxBatchReport
	for _, jobs := range []int{1, 4} {
		o := analysis.DefaultMaxBatchOptions()
		o.Jobs, o.Below = jobs, 3
		rep, err := analysis.MaxBatch(context.Background(), cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	if d := cmp.Diff(reps[0], reps[1]); d != "" {
		t.Errorf("MaxBatch with 1 and 4 jobs differ (-1 +4):\n%s", d)
	}
	if reps[0].Batch%8 != 0 || reps[0].Batch == 0 {
		t.Errorf("answer %d, want a positive multiple of 8", reps[0].Batch)
	}
}

func TestMaxBatchBounds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      func(*train.Config)
		min, max  int
		wantBatch int
		wantAtMax bool
		wantOOM   int // FirstOOM.Batch, 0 = none
	}{
		{"mlp fits up to max", func(c *train.Config) { c.Model = "mlp" }, 1, 1000, 1000, true, 0},
		{"resnet50 4096 on t4 never fits", func(c *train.Config) { c.GPU = "t4" }, 4096, 65536, 0, false, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := analysis.DefaultMaxBatchOptions()
			o.Min, o.Max, o.Multiple = tc.min, tc.max, 8
			rep, err := analysis.MaxBatch(context.Background(), with("default", tc.edit), o)
			if err != nil {
				t.Fatal(err)
			}
			gotOOM := 0
			if rep.FirstOOM != nil {
				gotOOM = rep.FirstOOM.Batch
			}
			if rep.Batch != tc.wantBatch || rep.AtMax != tc.wantAtMax || gotOOM != tc.wantOOM {
				t.Errorf("MaxBatch = batch %d at max %v first OOM %d, want %d %v %d", rep.Batch, rep.AtMax, gotOOM, tc.wantBatch, tc.wantAtMax, tc.wantOOM)
			}
		})
	}
}

// fakeRun answers from a fits function: the search logic without the simulator, so that a
// non-monotone pattern (which the built-in models do not show near their limits) is tested.
type fakeRun struct {
	mu      sync.Mutex
	fits    func(batch int) bool
	skipped func(steps int) int
	calls   []train.Config
}

func (f *fakeRun) run(_ context.Context, cfg train.Config) (*train.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, cfg)
	f.mu.Unlock()
	res := &train.Result{GlobalBatch: cfg.Batch, StepsRequested: cfg.Steps, StepTime: 0.1,
		Throughput: float64(cfg.Batch) / 0.1, Devices: []train.Device{{PeakBytesInUse: int64(cfg.Batch) << 20}}}
	if !f.fits(cfg.Batch) {
		res.OOM = &train.OOM{Step: 1, Message: "ResourceExhaustedError: OOM when allocating tensor"}
		res.StepTime, res.Throughput = 0, 0
		return res, nil
	}
	res.StepTimes = make([]float64, cfg.Steps)
	if f.skipped != nil {
		res.SkippedSteps = f.skipped(cfg.Steps)
	}
	return res, nil
}

func TestMaxBatchReportsNotMonotone(t *testing.T) {
	f := &fakeRun{fits: func(b int) bool { return b <= 100 && b != 88 && b != 40 }}
	o := analysis.DefaultMaxBatchOptions()
	o.Run, o.Below = f.run, 3
	rep, err := analysis.MaxBatch(context.Background(), train.DefaultConfig(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Batch != 96 || rep.FirstOOM == nil || rep.FirstOOM.Batch != 104 {
		t.Fatalf("MaxBatch = %d (first OOM %v), want 96 and 104", rep.Batch, rep.FirstOOM)
	}
	var got []int
	for _, tr := range rep.NotMonotone {
		got = append(got, tr.Batch)
	}
	// 88 is within the 3 checked below 96; 40 is never tried (8, 16, 32, 64 fit).
	if want := []int{88}; !cmp.Equal(got, want) {
		t.Errorf("NotMonotone = %v, want %v", got, want)
	}
}

// TestMaxBatchExtendsSkippedSteps: a trial whose loss scale skipped updates is re-run with
// more steps until two updates were applied.
func TestMaxBatchExtendsSkippedSteps(t *testing.T) {
	f := &fakeRun{fits: func(b int) bool { return b <= 64 },
		// The first 3 updates are skipped, as a loss scale starting too high would.
		skipped: func(steps int) int { return min(steps, 3) }}
	o := analysis.DefaultMaxBatchOptions()
	o.Run, o.Max, o.Below, o.Multiple = f.run, 64, 0, 64
	rep, err := analysis.MaxBatch(context.Background(), train.DefaultConfig(), o)
	if err != nil {
		t.Fatal(err)
	}
	var steps []int
	for _, c := range f.calls {
		steps = append(steps, c.Steps)
	}
	// 3 steps: 3 skipped -> 3+3+1 = 7 steps: 3 skipped, 4 applied.
	if want := []int{3, 7}; !cmp.Equal(steps, want) {
		t.Errorf("steps simulated %v, want %v", steps, want)
	}
	if rep.Fit == nil || rep.Fit.Steps != 7 {
		t.Errorf("fit %+v, want 7 steps", rep.Fit)
	}
}

func TestMaxBatchErrors(t *testing.T) {
	cfg := train.DefaultConfig()
	for _, tc := range []struct {
		name string
		edit func(*analysis.MaxBatchOptions)
		want string
	}{
		{"multiple", func(o *analysis.MaxBatchOptions) { o.Multiple = 0 }, "multiple 0"},
		{"min", func(o *analysis.MaxBatchOptions) { o.Min = 0 }, "min 0"},
		{"steps", func(o *analysis.MaxBatchOptions) { o.Steps = 0 }, "steps 0"},
		{"no multiple", func(o *analysis.MaxBatchOptions) { o.Min, o.Max, o.Multiple = 9, 15, 8 }, "no multiple of 8"},
	} {
		o := analysis.DefaultMaxBatchOptions()
		tc.edit(&o)
		_, err := analysis.MaxBatch(context.Background(), cfg, o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: MaxBatch error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	// A configuration TF rejects stops the search with the field named.
	bad := train.DefaultConfig()
	bad.Precision = "float8"
	_, err := analysis.MaxBatch(context.Background(), bad, analysis.DefaultMaxBatchOptions())
	var fe *train.FieldError
	if !errors.As(err, &fe) || fe.Field != "Precision" {
		t.Errorf("MaxBatch(precision=float8) error %v, want a *train.FieldError on precision", err)
	}
}

// A --max near int's maximum ends the doubling at it instead of overflowing into an endless
// search (b *= 2 wrapped negative).
func TestMaxBatchDoublingStopsAtHugeMax(t *testing.T) {
	f := &fakeRun{fits: func(b int) bool { return true }}
	o := analysis.DefaultMaxBatchOptions()
	o.Run, o.Max, o.Below, o.Multiple = f.run, math.MaxInt, 0, 1
	done := make(chan struct{})
	var rep *analysis.MaxBatchReport
	var err error
	go func() { rep, err = analysis.MaxBatch(context.Background(), train.DefaultConfig(), o); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("MaxBatch with Max = math.MaxInt did not end")
	}
	if err != nil || rep.Batch != math.MaxInt || !rep.AtMax {
		t.Fatalf("MaxBatch(max MaxInt, all fit) = %+v, %v; want the max, AtMax", rep, err)
	}
	if n := len(f.calls); n > 64 {
		t.Errorf("%d trials, want at most 64 (doublings up to 2^62, then the max)", n)
	}
}

func TestGPUsDoublingStopsAtHugeMax(t *testing.T) {
	f := &fakeRun{fits: func(b int) bool { return true }}
	o := analysis.GPUsOptions{Run: f.run, MaxGPUs: math.MaxInt, Throughput: 1e300, Jobs: 1}
	done := make(chan struct{})
	var err error
	go func() { _, err = analysis.GPUs(context.Background(), train.DefaultConfig(), o); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("GPUs with MaxGPUs = math.MaxInt did not end")
	}
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.calls); n > 64 {
		t.Errorf("%d trials, want at most 64 (doublings up to 2^62, then the max)", n)
	}
}
