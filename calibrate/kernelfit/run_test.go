package kernelfit

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/train"
)

// runConfig is the scenario a user would write for a measured config: the zoo model the
// measurement ran (BertForMaskedLM at sequence 128, GPT2LMHeadModel at 1024), the optimizer
// of the harness (SGD momentum for CNNs, AdamW for transformers), the precision; as train's
// TestH200StepTimeThroughRun runs them.
func runConfig(c Config) train.Config {
	cfg := train.DefaultConfig()
	cfg.GPU, cfg.Batch, cfg.Steps, cfg.Optimizer = "h200", c.Batch, 4, "momentum"
	cfg.Model = map[string]string{"bert-base": "bert-base:seq=128,head=mlm", "gpt2": "gpt2:seq=1024"}[c.Model]
	if cfg.Model == "" {
		cfg.Model = c.Model
	}
	if strings.HasPrefix(cfg.Model, "bert") || strings.HasPrefix(cfg.Model, "gpt2") {
		cfg.Optimizer = "adamw"
	}
	switch c.Prec {
	case "fp32":
		cfg.TF32 = false
	case "bf16":
		cfg.Precision = "mixed_bfloat16"
	case "fp16":
		cfg.Precision = "mixed_float16"
	}
	return cfg
}

func mustRun(t *testing.T, cfg train.Config) *train.Result {
	t.Helper()
	res, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run(%s %s batch %d): %v", cfg.Model, cfg.Precision, cfg.Batch, err)
	}
	return res
}

// TestKernelFitThroughRun runs every measured H200 config with OpsBaseEfficiency, the refit
// on per-kernel times that is not the default (docs/speed.md, "Refit on per-kernel times"),
// fitted before the cost model priced GEMM and convolution shapes: its ConvTF32 is fitted on
// op lists without shapes, where the NCHW transposes of TF32 convolutions are part of the
// convolution's time, so through train.Run, which prices them apart (hw.Work.NHWC), a TF32
// step pays them twice. It is kept as a comparison, with no accuracy target of its own: the
// test logs its step-time MAE beside the default profile's and checks that the refitted
// profile is the one that runs (its steps differ from the default's) and runs every config.
func TestKernelFitThroughRun(t *testing.T) {
	g, err := hw.LookupGPU("h200")
	if err != nil {
		t.Fatal(err)
	}
	g.Efficiency = OpsBaseEfficiency()
	var refit, plain, n float64
	differ := 0
	for _, s := range h200Data(t).Steps {
		c := runConfig(s.Config)
		base := mustRun(t, c)
		c.GPUProfile = &g
		res := mustRun(t, c)
		if res.OOM != nil || base.OOM != nil {
			t.Fatalf("%s: OOM", s.Config)
		}
		refit += math.Abs(res.StepTime/s.StepS - 1)
		plain += math.Abs(base.StepTime/s.StepS - 1)
		n++
		if res.StepTime != base.StepTime {
			differ++
		}
	}
	t.Logf("step-time MAE over %.0f H200 configs: OpsBaseEfficiency %.1f%%, the default profile %.1f%%", n, 100*refit/n, 100*plain/n)
	if differ == 0 {
		t.Errorf("OpsBaseEfficiency changed no config's step time: the refitted profile did not run")
	}
}
