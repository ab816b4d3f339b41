package xprof

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/gpusim/gpusim/internal/testcsv"
)

// profilesDir holds the raw JAX profiles of Keras 3 train steps on the H200
// (testdata/h200/profiles: XSpace and Chrome trace JSON of 3 marked steps each).
const profilesDir = "../../testdata/h200/profiles/"

// readKernelsCSV reads MODEL.kernels.csv.gz: jax's own reading of the XSpace
// (jax.profiler.ProfileData), count and total ns per (line, kernel, hlo_op).
func readKernelsCSV(t *testing.T, path string) map[[3]string][2]int64 {
	t.Helper()
	col, recs := testcsv.Read(t, path)
	out := map[[3]string][2]int64{}
	for _, r := range recs {
		n, _ := strconv.ParseInt(r[col["count"]], 10, 64)
		ns, _ := strconv.ParseInt(r[col["total_ns"]], 10, 64)
		k := [3]string{r[col["line"]], r[col["kernel"]], r[col["hlo_op"]]}
		v := out[k]
		out[k] = [2]int64{v[0] + n, v[1] + ns}
	}
	return out
}

// Every real profile decodes, from its XSpace and from its Chrome trace alike, to the kernels
// jax's own reader found in it (the count and nanoseconds of every stream, kernel and hlo_op),
// and its step markers to steps.csv's traced steps, whose kernels sum to
// trace_kernel_ms_per_step.
func TestH200Profiles(t *testing.T) {
	col, rows := testcsv.Read(t, profilesDir+"steps.csv")
	for _, r := range rows {
		tag := fmt.Sprintf("%s_%s_b%s", r[col["model"]], r[col["precision"]], r[col["batch"]])
		want := readKernelsCSV(t, profilesDir+tag+".kernels.csv.gz")
		for _, ext := range []string{".xplane.pb.gz", ".trace.json.gz"} {
			p, err := Load(profilesDir + tag + ext)
			if err != nil {
				t.Fatal(err)
			}
			got := map[[3]string][2]int64{}
			for _, k := range p.Kernels {
				key := [3]string{k.Stream, k.Name, k.Op}
				v := got[key]
				// jax's reader rounds each event to whole ns: compare totals to a ns per kernel.
				got[key] = [2]int64{v[0] + 1, v[1] + int64(math.Round(float64(k.Duration)/1e3))}
			}
			for key, w := range want {
				g := got[key]
				if g[0] != w[0] || math.Abs(float64(g[1]-w[1])) > float64(w[0]) {
					t.Errorf("%s%s: %v: %d kernels, %d ns; jax's reader: %d, %d", tag, ext, key, g[0], g[1], w[0], w[1])
				}
			}
			if len(got) != len(want) {
				t.Errorf("%s%s: %d (stream, kernel, op) groups, jax's reader %d", tag, ext, len(got), len(want))
			}
			s, err := p.Summary()
			if err != nil {
				t.Fatalf("%s%s: %v", tag, ext, err)
			}
			steps, _ := strconv.Atoi(r[col["trace_steps"]])
			ms, _ := strconv.ParseFloat(r[col["trace_kernel_ms_per_step"]], 64)
			sum := 0.0
			for _, v := range s.Groups {
				sum += v
			}
			if s.Steps != steps || s.Marker != "train" || s.Outside != 0 || math.Abs(sum*1e3-ms) > 0.002 {
				t.Errorf("%s%s: %d %q steps, %d kernels outside, %.3f ms of kernels a step; steps.csv: %d steps, %.3f ms", tag, ext, s.Steps, s.Marker, s.Outside, sum*1e3, steps, ms)
			}
		}
	}
}
