package train

import (
	"testing"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
)

// TestTF1XLAAutoClusterDropout: a TF 1.x graph gets XLA only by auto-clustering, which leaves
// dropout's RandomUniform outside the clusters (models.PlanOptions.XLAAutoCluster): BERT's
// TF 1.15 XLA step is slower than TF 2.4's, whose XLA (jit_compile) generates the random
// numbers inside the fused dropout, every other version rule being the same for the two
// releases (both split row reductions and run Keras 2); without XLA they run alike. TF 2
// auto-clusters when TF_XLA_FLAGS says so (--tf_xla_auto_jit).
func TestTF1XLAAutoClusterDropout(t *testing.T) {
	step := func(version string, xla bool) float64 {
		c := DefaultConfig()
		c.Model, c.GPU, c.Precision, c.Batch, c.Steps, c.Optimizer = "bert-base:seq=512", "v100-16gb", "mixed_float16", 8, 4, "adam"
		c.XLA, c.TFVersion = xla, version
		res := mustRun(t, c)
		if res.OOM != nil {
			t.Fatalf("%q: OOM %s", version, res.OOM.Message)
		}
		return res.StepTime
	}
	tf1, tf2 := step("1.15", true), step("2.4", true)
	t.Logf("bert-base seq 512 batch 8 on v100-16gb under XLA: TF 1.15 %.2f ms, TF 2.4 %.2f ms", 1e3*tf1, 1e3*tf2)
	if tf1 <= tf2*1.02 {
		t.Errorf("TF 1.15 XLA step %.2f ms, TF 2.4 %.2f ms: want 1.15 over 2%% slower", 1e3*tf1, 1e3*tf2)
	}
	if a, b := step("1.15", false), step("2.4", false); a != b {
		t.Errorf("without XLA: TF 1.15 step %.2f ms, TF 2.4 %.2f ms: want equal", 1e3*a, 1e3*b)
	}
	// TF 2 with auto-clustering switched on by TF_XLA_FLAGS runs as TF 1.x does.
	c := DefaultConfig()
	c.Model, c.GPU, c.Precision, c.Batch, c.Steps, c.Optimizer = "bert-base:seq=512", "v100-16gb", "mixed_float16", 8, 4, "adam"
	c.XLA, c.TFVersion, c.Env = true, "2.4", map[string]string{"TF_XLA_FLAGS": "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit"}
	if got := mustRun(t, c).StepTime; got != tf1 {
		t.Errorf("TF 2.4 with --tf_xla_auto_jit=2: %.2f ms, want TF 1.15's %.2f ms", 1e3*got, 1e3*tf1)
	}
	for _, c := range []struct {
		env  string
		want bool
	}{{"--tf_xla_auto_jit=1", true}, {"--tf_xla_auto_jit=single-gpu(2)", true}, {"--tf_xla_auto_jit=0", false},
		{"--tf_xla_auto_jit=-1", false}, {"", false}, {"--tf_xla_cpu_global_jit", false}} {
		if got := autoJit(map[string]string{"TF_XLA_FLAGS": c.env}); got != c.want {
			t.Errorf("autoJit(TF_XLA_FLAGS=%q) = %v, want %v", c.env, got, c.want)
		}
	}
}

// TestAutoClusterRandomUniformRate: the RandomUniform that auto-clustering leaves outside the
// clusters is TF's own Philox kernel, priced as the executor's random-number class
// (hw.MemTFRandom: elements per SM and clock, read on the H200), not as a stream of its
// output. On an A100 a float16 random tensor is bound by its elements (108 SMs x 1.41 GHz x
// 2.36 elements, against 2 TB/s for 2-byte elements); on a V100 a float32 one by its bytes.
func TestAutoClusterRandomUniformRate(t *testing.T) {
	m, err := models.Get("bert-large:seq=384,impl=model-garden")
	if err != nil {
		t.Fatal(err)
	}
	const name = "transformer_layer_3/self_attention/attention_dropout/dropout/random_uniform"
	price := func(gpuName string, prec models.Precision) (secs, bytesSecs, elemSecs float64) {
		t.Helper()
		gpu, err := hw.LookupGPU(gpuName)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Plan(models.PlanOptions{Batch: 8, Precision: prec, XLA: true, XLAAutoCluster: true, Optimizer: "model-garden-adamw"})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range p.Ops {
			if op.Name != name {
				continue
			}
			if !op.OutsideXLA {
				t.Fatalf("%s: not outside XLA", name)
			}
			c, err := gpu.Cost(work(op, true))
			if err != nil {
				t.Fatal(err)
			}
			elems := float64(8 * 16 * 384 * 384)
			clock := gpu.PeakFP32 / (2 * float64(gpu.FP32LanesPerSM()) * float64(gpu.SMs))
			return c.Exec, op.Bytes / (gpu.MemBandwidth * gpu.Efficiency.Memory),
				elems / (gpu.Efficiency.ElementsPerSMCycle[hw.MemTFRandom] * float64(gpu.SMs) * clock)
		}
		t.Fatalf("no %s op", name)
		return 0, 0, 0
	}
	got, bytesT, elemT := price("a100-80gb", models.MixedFloat16)
	t.Logf("a100-80gb float16: %.1f us (bytes %.1f us, elements %.1f us)", 1e6*got, 1e6*bytesT, 1e6*elemT)
	if elemT < 1.5*bytesT {
		t.Fatalf("a100 float16 random tensor: elements %.1f us, bytes %.1f us: want its elements to bind it", 1e6*elemT, 1e6*bytesT)
	}
	if got < 0.97*elemT || got > 1.1*elemT {
		t.Errorf("a100-80gb float16 RandomUniform %.1f us, want its element time %.1f us", 1e6*got, 1e6*elemT)
	}
	got, bytesT, elemT = price("v100-16gb", models.PrecisionFloat32)
	t.Logf("v100-16gb float32: %.1f us (bytes %.1f us, elements %.1f us)", 1e6*got, 1e6*bytesT, 1e6*elemT)
	if got < 0.97*bytesT || got > 1.1*bytesT || elemT > bytesT {
		t.Errorf("v100-16gb float32 RandomUniform %.1f us, want its byte time %.1f us (elements %.1f us)", 1e6*got, 1e6*bytesT, 1e6*elemT)
	}
}

// TestGEMMEpilogueOwnFusion: before Triton GEMM fusions and cuBLASLt epilogues
// (framework.XLAGEMMEpilogues), XLA runs a dense layer's bias add, activation and casts as a loop
// fusion after the cuBLAS call: the Model Garden's float32 GELU after its intermediate dense
// layer costs its own bytes after the GEMM's math on TF 2.4, and hides behind that math on a
// current release.
func TestGEMMEpilogueOwnFusion(t *testing.T) {
	const name = "transformer_layer_3/feedforward_intermediate_dense/MatMul"
	price := func(version string) (exec float64, op models.Op, r *runner) {
		t.Helper()
		c := DefaultConfig()
		c.Model, c.GPU, c.Precision, c.Batch, c.Optimizer = "bert-large:seq=384,impl=model-garden", "v100-16gb", "mixed_float16", 6, "model-garden-adamw"
		c.XLA, c.TFVersion = true, version
		r, err := newRunner(c, true)
		if err != nil {
			t.Fatal(err)
		}
		p := r.replicas[0].plans[0]
		for i, op := range p.Ops {
			if op.Name == name && op.Phase == models.Forward {
				return p.costs[i].exec.Seconds(), op, r
			}
		}
		t.Fatalf("no %s op", name)
		return 0, models.Op{}, nil
	}
	old, op, r := price("2.4")
	cur, _, _ := price("")
	at, _, _ := price("2.13")
	if op.EpilogueBytes <= 0 {
		t.Fatalf("%s: no epilogue bytes (the bias add, casts and GELU fused after it)", name)
	}
	fusion := op.EpilogueBytes / r.mach.gpu.ByteRate(hw.Work{Kind: hw.KindFusion, Graph: true, DType: hw.Float16})
	t.Logf("%s: TF 2.4 %.1f us, current %.1f us, epilogue %.1f MB (%.1f us streamed)", name, 1e6*old, 1e6*cur, op.EpilogueBytes/1e6, 1e6*fusion)
	if d := old - cur; d < 0.95*fusion || d > 1.2*fusion {
		t.Errorf("TF 2.4 prices the GEMM %.1f us above a current release, want its epilogue's fusion, %.1f us", 1e6*d, 1e6*fusion)
	}
	if at != cur {
		t.Errorf("TF 2.13: %.1f us, want the current release's %.1f us", 1e6*at, 1e6*cur)
	}
}
