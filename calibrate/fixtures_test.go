package calibrate

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/gpusim/gpusim/hw"
)

func loadFixture(t *testing.T, name string) *Trace {
	t.Helper()
	tr, err := LoadTrace(filepath.Join("testdata", name+".json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// The recordings of the H200 (testdata/README.md): the allocator mode detector must tell JAX's
// default (preallocate) from XLA_PYTHON_CLIENT_PREALLOCATE=false (growth), and read each
// framework's context.
func TestFixtureMemory(t *testing.T) {
	tests := []struct {
		trace      string
		mode       Mode
		contextMiB int64
	}{
		{"jax-prealloc", ModePreallocate, 528},
		{"jax-growth", ModeGrowth, 528},
		{"torch-resnet50-b64", ModeGrowth, 612},
		{"torch-resnet50-b128", ModeGrowth, 612},
		{"torch-mobilenet_v2-b64", ModeGrowth, 612},
		{"torch-vgg16-b64", ModeGrowth, 612},
	}
	for _, tt := range tests {
		a, err := AnalyzeMemory(loadFixture(t, tt.trace))
		if err != nil {
			t.Fatal(err)
		}
		if a.Mode != tt.mode || a.ContextBytes>>20 != tt.contextMiB {
			t.Errorf("AnalyzeMemory(%s) = %s with a %d MiB context (%s), want %s, %d MiB", tt.trace, a.Mode, a.ContextBytes>>20, a.Reason, tt.mode, tt.contextMiB)
		}
	}
	// JAX's pool is 75% of the free memory (XLA_PYTHON_CLIENT_MEM_FRACTION default .75).
	a, _ := AnalyzeMemory(loadFixture(t, "jax-prealloc"))
	pool := a.Levels[1].Bytes - a.ContextBytes
	if got := float64(pool) / float64(a.FreeAtStartBytes); math.Abs(got-0.75) > 0.001 {
		t.Errorf("jax-prealloc pool = %.4f of the free memory, want 0.75", got)
	}
	// Growth: the last four rises are BFC regions of 1, 2, 4 and 8 GiB.
	a, _ = AnalyzeMemory(loadFixture(t, "jax-growth"))
	var rises []int64
	for i := 1; i < len(a.Levels); i++ {
		if d := a.Levels[i].Bytes - a.Levels[i-1].Bytes; d > 0 {
			rises = append(rises, d>>20)
		}
	}
	if n := len(rises); n < 4 || rises[n-4] != 1024 || rises[n-3] != 2048 || rises[n-2] != 4096 || rises[n-1] != 8192 {
		t.Errorf("jax-growth rises = %v MiB, want ... 1024 2048 4096 8192", rises)
	}
}

func TestFixtureSteps(t *testing.T) {
	tests := []struct {
		trace string
		n     int
		want  float64 // median after the first step, seconds, as the README lists it
	}{
		{"torch-resnet50-b64", 30, 0.0282},
		{"torch-resnet50-b128", 30, 0.0434},
		{"torch-mobilenet_v2-b64", 30, 0.0218},
		{"torch-vgg16-b64", 30, 0.0372},
	}
	for _, tt := range tests {
		s, err := StepTimes(loadFixture(t, tt.trace).Lines, nil, -1)
		if err != nil {
			t.Fatal(err)
		}
		if s.Source != "step_time" || len(s.Times) != tt.n || math.Abs(s.Median-tt.want) > 0.0001 {
			t.Errorf("StepTimes(%s) = %s, %d values, median %.5f; want step_time, %d, %.4f", tt.trace, s.Source, len(s.Times), s.Median, tt.n, tt.want)
		}
	}
}

func TestFixtureInterrupt(t *testing.T) {
	tr := loadFixture(t, "torch-sigint")
	if tr.Signal != "SIGINT" || !tr.Complete || tr.ExitCode != 1 {
		t.Errorf("torch-sigint: signal %q complete %v exit %d, want SIGINT true 1", tr.Signal, tr.Complete, tr.ExitCode)
	}
	last := tr.Lines[len(tr.Lines)-1]
	if last.Text != "KeyboardInterrupt" || last.Stream != "stderr" {
		t.Errorf("torch-sigint last line = %+v, want the job's KeyboardInterrupt on stderr", last)
	}
	// Sampling went on until the job exited, after it printed its traceback.
	if end := tr.Samples[len(tr.Samples)-1].TNS; end < last.TNS {
		t.Errorf("last sample at %d ns, before the job's last line at %d ns", end, last.TNS)
	}
}

// The inventory read on the H200 gives a profile with NVML's facts in it; the rest comes from
// the built-in h200 profile (owned by hw, so not compared here).
func TestFixtureInventoryProfile(t *testing.T) {
	data, err := os.ReadFile("testdata/h200-inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var inv Inventory
	if err := yaml.Unmarshal(data, &inv); err != nil {
		t.Fatal(err)
	}
	g, err := ProfileFromInventory(&inv, 0)
	if err != nil {
		t.Fatal(err)
	}
	type facts struct {
		Name             string
		Memory           int64
		CCMajor, CCMinor int
		SMs              int
		PCIe, NVLink     float64
	}
	got := facts{g.Name, g.MemoryBytes, g.CCMajor, g.CCMinor, g.SMs, g.PCIeBandwidth, g.NVLinkBandwidth}
	// NVLink: the VM answers NOT_SUPPORTED, so the built-in 450 GB/s stays.
	want := facts{"h200", 150754820096, 9, 0, 132, 3.938e9 * 16, 450e9}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("profile of the H200 inventory (-want +got):\n%s", d)
	}
	var buf bytes.Buffer
	if err := g.WriteProfile(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := hw.ParseProfile("profile", buf.Bytes())
	if err != nil {
		t.Fatalf("the written profile does not load: %v", err)
	}
	if back.MemoryBytes != g.MemoryBytes || back.SMs != g.SMs {
		t.Errorf("profile round trip: %+v, want %+v", back, g)
	}
}

// TestAllocatorOverrides: the recordings' allocator modes become scenario keys: JAX's default
// pool (75% of free) memory.fraction=0.75, JAX without preallocation and PyTorch's caching
// allocator memory.growth=true.
func TestAllocatorOverrides(t *testing.T) {
	for _, tt := range []struct{ trace, want string }{
		{"jax-prealloc", "memory.fraction=0.75"},
		{"jax-growth", "memory.growth=true"},
		{"torch-resnet50-b64", "memory.growth=true"},
	} {
		a, err := AnalyzeMemory(loadFixture(t, tt.trace))
		if err != nil {
			t.Fatal(err)
		}
		keys, reason := AllocatorOverrides(a)
		if len(keys) != 1 || keys[0] != tt.want || reason == "" {
			t.Errorf("AllocatorOverrides(%s) = %q (%q), want [%s]", tt.trace, keys, reason, tt.want)
		}
	}
	// A TF-sized pool (free minus a reserve) is TF's own default: no override.
	a := MemoryAnalysis{Mode: ModePreallocate, FreeAtStartBytes: 100 << 30, PlateauBytes: 98 << 30}
	if keys, _ := AllocatorOverrides(a); len(keys) != 0 {
		t.Errorf("TF-sized pool: overrides %q, want none", keys)
	}
}
