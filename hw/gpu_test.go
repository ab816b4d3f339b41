package hw

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLookupGPUBuiltins(t *testing.T) {
	want := []string{"a10", "a100-40gb", "a100-80gb", "gtx1080ti", "h100-80gb", "h200", "l4",
		"p100-16gb", "rtx3090", "rtx4090", "t4", "v100-16gb", "v100-32gb"}
	// The first thirteen profiles; the catalog (catalog_test.go) adds the rest.
	have := map[string]bool{}
	for _, n := range GPUNames() {
		have[n] = true
	}
	for _, n := range want {
		if !have[n] {
			t.Errorf("GPUNames() lacks %q", n)
		}
	}
	for _, name := range GPUNames() {
		g, err := LookupGPU(name)
		if err != nil {
			t.Fatalf("LookupGPU(%q): %v", name, err)
		}
		if err := g.validate(); err != nil {
			t.Errorf("built-in %s invalid: %v", name, err)
		}
		if g.HasTensorCores() != (g.CC() >= 70) {
			t.Errorf("%s: HasTensorCores() = %v at cc %d", name, g.HasTensorCores(), g.CC())
		}
		if (g.PeakTF32 > 0) != (g.CC() >= 80) || (g.PeakBF16 > 0) != (g.CC() >= 80) {
			t.Errorf("%s: TF32/BF16 peaks %g/%g at cc %d", name, g.PeakTF32, g.PeakBF16, g.CC())
		}
	}
}

func TestLookupGPUSpecs(t *testing.T) {
	tests := []struct {
		name    string
		memGiB  float64
		bwTBps  float64
		fp16TF  float64
		cc, sms int
	}{
		{"h200", 140.4, 4.8, 989.4, 90, 132},
		{"H100", 79.6, 3.35, 989.4, 90, 132},
		{"a100-40gb", 39.6, 1.555, 312, 80, 108},
		{"v100-16gb", 15.8, 0.9, 125, 70, 80},
		{"t4", 15, 0.32, 65, 75, 40},
	}
	for _, tc := range tests {
		g, err := LookupGPU(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		got := []float64{float64(g.MemoryBytes) / GiB, g.MemBandwidth / 1e12, g.PeakFP16 / TFLOPS, float64(g.CC()), float64(g.SMs)}
		want := []float64{tc.memGiB, tc.bwTBps, tc.fp16TF, float64(tc.cc), float64(tc.sms)}
		for i := range got {
			if d := got[i] - want[i]; d > 0.05 || d < -0.05 {
				t.Errorf("%s: field %d = %g, want %g", tc.name, i, got[i], want[i])
			}
		}
	}
	if _, err := LookupGPU("k80"); err == nil || !strings.Contains(err.Error(), "unknown GPU") {
		t.Errorf("LookupGPU(k80) error = %v, want unknown GPU", err)
	}
}

func TestContextBytesMatchesH200Measurement(t *testing.T) {
	g, _ := LookupGPU("h200")
	if got, want := g.ContextBytes/MiB, int64(528); got != want {
		t.Errorf("h200 context = %d MiB, want %d (measured with JAX)", got, want)
	}
}

func TestProfileRoundTrip(t *testing.T) {
	for _, name := range GPUNames() {
		g, _ := LookupGPU(name)
		var buf bytes.Buffer
		if err := g.WriteProfile(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := LookupGPU("@" + path)
		if err != nil {
			t.Fatalf("LookupGPU(@%s): %v\n%s", name, err, buf.String())
		}
		if diff := cmp.Diff(g, got, cmp.AllowUnexported(GPU{})); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", name, diff)
		}
	}
}

func TestParseProfileBase(t *testing.T) {
	g, err := ParseProfile("x.yaml", []byte("base: a100-80gb\nname: lab-a100\nlaunch_overhead: 8e-6\nefficiency:\n  memory: 0.7\n  memory_by_kind:\n    pool: 0.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := LookupGPU("a100-80gb")
	if g.Name != "lab-a100" || g.LaunchOverhead != 8e-6 || g.Efficiency.Memory != 0.7 || g.MemBandwidth != base.MemBandwidth {
		t.Errorf("ParseProfile with base = %+v", g)
	}
	if g.Efficiency.MemoryByKind[KindPool] != 0.5 || g.Efficiency.MemoryByKind[KindNorm] != base.Efficiency.MemoryByKind[KindNorm] {
		t.Errorf("memory_by_kind = %v, want pool 0.5 merged into base", g.Efficiency.MemoryByKind)
	}
	if base2, _ := LookupGPU("a100-80gb"); base2.Efficiency.MemoryByKind[KindPool] != 0 {
		t.Errorf("ParseProfile changed the built-in table")
	}
}

func TestParseProfileErrors(t *testing.T) {
	tests := []struct{ data, want string }{
		{"base: h200\nname: x\nmemroy_bytes: 5\n", "p.yaml:3: memroy_bytes: unknown key"},
		{"base: h200\nname: x\nsms: many\n", "p.yaml:3: sms: cannot unmarshal"},
		{"base: h200\nname: x\nmemory_bytes: -1\n", "p.yaml:3: memory_bytes: must be positive"},
		{"base: h200\nefficiency:\n  memory: 3\n", "p.yaml:3: efficiency.memory: 3: must be in"},
		{"base: h200\nefficiency:\n  memory_by_kind:\n    warp: 0.5\n", "p.yaml:4: efficiency.memory_by_kind.warp: unknown work kind"},
		{"base: k80\n", "p.yaml:1: base: \"k80\" is not a built-in gpu"},
		{"name: x\n", "p.yaml:1: memory_bytes: not set, and no base: to take it from (must be positive)"},
		// context_bytes comes from the base; the memory_bytes line is what broke it.
		{"base: h200\nname: x\nmemory_bytes: 1000\n", "p.yaml:3: memory_bytes: 1000: must be above context_bytes (553648128)"},
		{"base: h200\nname: x\ncontext_bytes: 200000000000\n", "p.yaml:3: context_bytes: 200000000000: must be at least 0 and below memory_bytes"},
		{"base: h200\nname: x\nmemory_bytes: 1000\ncontext_bytes: 2000\n", "p.yaml:4: context_bytes: 2000: must be at least 0 and below memory_bytes (1000)"},
		{"- 1\n", "p.yaml:1: a gpu profile is a mapping"},
		{"sms: 10\n", "p.yaml:1: name: not set, and no base: to take it from (a profile needs a name)"},
		{"base: h200\nname: x\nbase: a100-80gb\n", "p.yaml:3: base: duplicate key (first on line 1)"},
	}
	for _, tc := range tests {
		_, err := ParseProfile("p.yaml", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseProfile(%q) error = %v, want one line containing %q", tc.data, err, tc.want)
		}
	}
}
