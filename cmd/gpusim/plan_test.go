package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planOut is the part of gpusim plan -o json the tests read.
type planOut struct {
	Space     int `json:"space"`
	Simulated int `json:"simulated"`
	Pruned    int `json:"pruned_memory"`
	Roofline  int `json:"pruned_roofline"`
	Compute   int `json:"pruned_compute"`
	Current   struct {
		Throughput float64 `json:"throughput_samples_per_s"`
	} `json:"current"`
	Plans []struct {
		Plan struct {
			GPU  string `json:"gpu"`
			GPUs int    `json:"gpus"`
		} `json:"plan"`
		Set          []string    `json:"set"`
		TFCode       string      `json:"tf_code"`
		Fits         bool        `json:"fits"`
		Throughput   float64     `json:"throughput_samples_per_s"`
		Interval     *[2]float64 `json:"throughput_samples_per_s_interval"`
		TrainSeconds float64     `json:"train_seconds"`
		GPUHours     float64     `json:"gpu_hours"`
		Price        float64     `json:"price_per_gpu_hour"`
		Dollars      float64     `json:"dollars"`
	} `json:"plans"`
}

func runPlanJSON(t *testing.T, args ...string) planOut {
	t.Helper()
	out, errs, code := runCLI(t, append([]string{"plan", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("gpusim plan %v: exit %d: %s", args, code, errs)
	}
	var p planOut
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("gpusim plan %v -o json: %v", args, err)
	}
	if len(p.Plans) == 0 {
		t.Fatalf("gpusim plan %v: no plan", args)
	}
	return p
}

// runThroughput is gpusim run's throughput for args.
func runThroughput(t *testing.T, args ...string) float64 {
	t.Helper()
	out, errs, code := runCLI(t, append([]string{"run", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("gpusim run %v: exit %d: %s", args, code, errs)
	}
	var r struct {
		OOM        bool    `json:"oom"`
		Throughput float64 `json:"throughput_samples_per_s"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.OOM {
		t.Fatalf("gpusim run %v: OOM", args)
	}
	return r.Throughput
}

// TestPlanThroughputBeatsScenario: the top plan for resnet50-a100's throughput, applied with
// its --set lines and run in full (the scenario's 200 steps, not the search's 20), is faster
// than the scenario as it is, run the same way; its TF code names what it changes.
func TestPlanThroughputBeatsScenario(t *testing.T) {
	p := runPlanJSON(t, "resnet50-a100", "--goal", "throughput")
	if p.Simulated >= p.Space || p.Pruned+p.Roofline+p.Compute == 0 {
		t.Errorf("plan simulated %d of %d plans: the bounds pruned none", p.Simulated, p.Space)
	}
	top := p.Plans[0]
	if iv := top.Interval; iv == nil || !(0 < iv[0] && iv[0] < iv[1]) {
		t.Errorf("top plan's throughput interval %v: want a range from the validation residuals", iv)
	}
	var args []string
	for _, s := range top.Set {
		args = append(args, strings.Fields(s)...)
	}
	if len(args) == 0 {
		t.Fatalf("top plan changes nothing")
	}
	own := runThroughput(t, "resnet50-a100")
	planned := runThroughput(t, append([]string{"resnet50-a100"}, args...)...)
	if !(planned > own) {
		t.Errorf("gpusim run resnet50-a100 %v: %.0f samples/s, not above the scenario's %.0f", args, planned, own)
	}
	for _, s := range top.Set {
		switch {
		case strings.Contains(s, "xla=true") && !strings.Contains(top.TFCode, "jit_compile=True"),
			strings.Contains(s, "precision=mixed") && !strings.Contains(top.TFCode, "set_global_policy("):
			t.Errorf("plan sets %s but its TF code lacks it:\n%s", s, top.TFCode)
		}
	}
}

// TestPlanCostPicksHardware: the cost goal over four GPUs picks a GPU of the list and a count,
// and its dollars are the GPU-hours (GPUs x time to train) times the price file's $/GPU-hour,
// shown as that product in the text.
func TestPlanCostPicksHardware(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	args := []string{"--goal", "cost", "--gpus", "a100-40gb,h100-80gb,l4,t4", "--prices", "examples/prices.yaml"}
	p := runPlanJSON(t, args...)
	prices, err := loadPrices("examples/prices.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i, pl := range p.Plans {
		if !strings.Contains("a100-40gb,h100-80gb,l4,t4", pl.Plan.GPU) || pl.Plan.GPUs < 1 {
			t.Errorf("plan %d: %d x %q, not a count of a listed GPU", i+1, pl.Plan.GPUs, pl.Plan.GPU)
		}
		hours := float64(pl.Plan.GPUs) * pl.TrainSeconds / 3600
		if math.Abs(pl.GPUHours-hours) > 1e-9*hours || pl.Price != prices[pl.Plan.GPU] ||
			math.Abs(pl.Dollars-hours*pl.Price) > 1e-9*pl.Dollars {
			t.Errorf("plan %d: %v GPU-hours x $%v = $%v, want %v x %v", i+1, pl.GPUHours, pl.Price, pl.Dollars, hours, prices[pl.Plan.GPU])
		}
		if i > 0 && pl.Dollars < p.Plans[i-1].Dollars {
			t.Errorf("plan %d costs $%v, less than plan %d's $%v", i+1, pl.Dollars, i, p.Plans[i-1].Dollars)
		}
	}
	out, _, code := runCLI(t, append([]string{"plan"}, args...)...)
	if code != 0 || !strings.Contains(out, "GPU-hours x $/GPU-hour = $") || !strings.Contains(out, " GPU-hours x $") {
		t.Errorf("gpusim plan %v: exit %d, no price arithmetic:\n%s", args, code, out)
	}
}

// TestPlanUsageExamples runs every example of gpusim plan --help.
func TestPlanUsageExamples(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	help, _, code := runCLI(t, "plan", "--help")
	if code != 0 {
		t.Fatalf("plan --help: exit %d", code)
	}
	for _, ex := range planExamples {
		if !strings.Contains(help, ex) {
			t.Errorf("plan --help does not show example %q", ex)
		}
		out, errs, code := runCLI(t, strings.Fields(ex)[1:]...)
		if code != 0 || !strings.Contains(out, "gpusim plan:") || !strings.Contains(out, "as TF/Keras code") {
			t.Errorf("example %q: exit %d: %s\n%s", ex, code, errs, out)
		}
	}
}

// TestPlanBadInput: a price file with a bad price, an unknown key or a missing GPU, and bad
// flags exit 2 with one line naming the file, line and key.
func TestPlanBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.yaml", "prices:\n  t4: 0.5\n  l4: cheap\n")
	unknown := write("unknown.yaml", "prices:\n  t4: 0.5\nprise: 1\n")
	missing := write("missing.yaml", "prices:\n  t4: 0.5\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--goal", "cost", "--gpus", "t4,l4", "--prices", bad}, "bad.yaml:3: prices.l4: \"cheap\""},
		{[]string{"--goal", "cost", "--gpus", "t4", "--prices", unknown}, "unknown.yaml:3: prise: unknown key"},
		{[]string{"--goal", "cost", "--gpus", "t4,l4", "--prices", missing}, "no price for l4"},
		{[]string{"--goal", "cost"}, "--goal cost needs --prices"},
		{[]string{"--goal", "fastest"}, "--goal \"fastest\""},
		{[]string{"--budget", "soon"}, "--budget \"soon\""},
		{[]string{"--margin", "1.5"}, "--margin 1.5"},
		{[]string{"--space", "tiny"}, "--space \"tiny\""},
		{[]string{"--space", "small", "--max-gpus", "4"}, "--space small keeps the scenario's GPU and count"},
	} {
		_, errs, code := runCLI(t, append([]string{"plan"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("gpusim plan %v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestPlanSmallSpacePinnedDevices: the small space (the workshop page's) searches
// hardcoded-gpu, whose script pins tf.device('/GPU:1') under CUDA_VISIBLE_DEVICES=2,3: its
// plans keep the 4 GPUs and the default strategy (a strategy would override the tf.device
// line, and another count breaks the device list), and beat or match the scenario.
func TestPlanSmallSpacePinnedDevices(t *testing.T) {
	p := runPlanJSON(t, "hardcoded-gpu", "--space", "small", "--steps", "6")
	for i, pl := range p.Plans {
		if pl.Plan.GPUs != 4 || pl.Plan.GPU != "a100-40gb" {
			t.Errorf("plan %d: %d x %s, want the scenario's 4 x a100-40gb", i+1, pl.Plan.GPUs, pl.Plan.GPU)
		}
		for _, s := range pl.Set {
			if strings.Contains(s, "hardware.count") || strings.Contains(s, "strategy") {
				t.Errorf("plan %d changes %s", i+1, s)
			}
		}
	}
	if p.Plans[0].Throughput < p.Current.Throughput {
		t.Errorf("the top plan's %v samples/s is below the scenario's %v", p.Plans[0].Throughput, p.Current.Throughput)
	}
	if p.Space > 320 {
		t.Errorf("small space of %d plans", p.Space)
	}
}
