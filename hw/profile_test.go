package hw

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// The profile file format, as WriteProfile writes it, is a contract with calibrate and
// users' files: a golden file shows every change as a diff.
func TestWriteProfileGolden(t *testing.T) {
	for _, name := range []string{"h200", "v100-16gb"} {
		g, _ := LookupGPU(name)
		var buf bytes.Buffer
		if err := g.WriteProfile(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", name+".yaml")
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./sim/hw -run TestWriteProfileGolden -update)", err)
		}
		if diff := cmp.Diff(string(want), buf.String()); diff != "" {
			t.Errorf("WriteProfile(%s) mismatch (-want +got):\n%s", name, diff)
		}
	}
}

func FuzzParseProfile(f *testing.F) {
	g, _ := LookupGPU("t4")
	var buf bytes.Buffer
	g.WriteProfile(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte("base: h200\nname: x\nefficiency:\n  memory: 0.5\n"))
	f.Add([]byte("base: h200\nsms: [1, 2]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile("f.yaml", data)
		if err != nil {
			return
		}
		// Whatever parses is valid and survives a round trip.
		if err := p.validate(); err != nil {
			t.Fatalf("parsed profile invalid: %v", err)
		}
		var out bytes.Buffer
		if err := p.WriteProfile(&out); err != nil {
			t.Fatal(err)
		}
		q, err := ParseProfile("g.yaml", out.Bytes())
		if err != nil {
			t.Fatalf("round trip: %v\n%s", err, out.String())
		}
		if !cmp.Equal(p, q, cmp.AllowUnexported(GPU{})) {
			t.Fatalf("round trip changed the profile: %s", cmp.Diff(p, q, cmp.AllowUnexported(GPU{})))
		}
	})
}

func BenchmarkCost(b *testing.B) {
	g, _ := LookupGPU("h200")
	w := Work{Kind: KindConv, FLOPs: 1e10, Bytes: 1e8, Kernels: 2, DType: Float16}
	for i := 0; i < b.N; i++ {
		g.Cost(w)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkCostShaped prices convolutions with their GEMM shape (tile search, Winograd
// candidate on the FP32 path, NCHW transposes on TF32): the per-op cost of the shape
// mechanisms against BenchmarkCost's shapeless Work.
func BenchmarkCostShaped(b *testing.B) {
	g, _ := LookupGPU("a100-40gb")
	s := Shape{M: 256 * 56 * 56, N: 64, K: 64 * 9, Batch: 1, FilterH: 3, FilterW: 3, Stride: 1, InC: 64}
	ws := []Work{
		{Kind: KindConv, FLOPs: 1e10, Bytes: 1e8, Kernels: 2, DType: Float16, Shape: s},
		{Kind: KindConv, FLOPs: 1e10, Bytes: 1e8, Kernels: 2, DType: Float32, Shape: s},
		{Kind: KindConv, FLOPs: 1e10, Bytes: 1e8, Kernels: 2, DType: Float32, TF32: true, Grad: true, Shape: s},
		{Kind: KindMatMul, FLOPs: 1e10, Bytes: 1e8, Kernels: 1, DType: Float16, Shape: Shape{M: 4096, N: 1024, K: 1024}},
	}
	for i := 0; i < b.N; i++ {
		g.Cost(ws[i%len(ws)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
