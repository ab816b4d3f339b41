// Command fit fits hw's efficiency factors to the measurements in testdata/h200 and
// prints them with the predicted-vs-measured table.
//
//	go run ./tools/h200/fit [-dir testdata/h200]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gpusim/gpusim/calibrate/kernelfit"
	"github.com/gpusim/gpusim/hw"
)

func main() {
	dir := flag.String("dir", "testdata/h200", "measurement directory")
	level := flag.String("level", string(kernelfit.Groups), "what the efficiency fit uses: groups (kernel time per kind group: hw.DefaultEfficiency), ops-base (per profiled aten op, the same parameters: kernelfit.OpsBaseEfficiency) or ops (per profiled aten op, a memory efficiency per kind and a convolution ramp)")
	candidate := flag.Bool("candidate", false, "with -eval: evaluate kernelfit.OpsBaseEfficiency and kernelfit.OpsBaseHarnessHost instead of the defaults")
	eval := flag.Bool("eval", false, "only evaluate the built-in h200 profile with kernelfit.DefaultHarnessHost")
	holdout := flag.Bool("holdout", false, "leave-one-model-out: fit on four models, report the error on the fifth")
	flag.Parse()
	var err error
	if *holdout {
		err = runHoldout(*dir, *level)
	} else {
		err = run(*dir, *eval, *candidate, *level)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fit:", err)
		os.Exit(1)
	}
}

func run(dir string, eval, candidate bool, level string) error {
	m, err := kernelfit.ReadTFLayout(dir)
	if err != nil {
		return err
	}
	g, err := hw.LookupGPU("h200")
	if err != nil {
		return err
	}
	var rep kernelfit.Report
	if eval {
		host := kernelfit.DefaultHarnessHost()
		if candidate {
			g.Efficiency, host = kernelfit.OpsBaseEfficiency(), kernelfit.OpsBaseHarnessHost()
		}
		rep, err = kernelfit.Evaluate(g, m, host)
	} else {
		rep, err = kernelfit.Fit(g, m, kernelfit.Level(level))
	}
	if err != nil {
		return err
	}
	rep.SortRows()
	fmt.Printf("%-24s %10s %10s %7s %10s %10s %7s %10s %10s %7s\n", "config", "step_ms", "pred_ms", "err", "busy_ms", "pred_ms", "err", "kernel_ms", "pred_ms", "err")
	for _, r := range rep.Rows {
		fmt.Printf("%-24s %10.2f %10.2f %+6.1f%% %10.2f %10.2f %+6.1f%% %10.2f %10.2f %+6.1f%%\n", r.Config, r.MeasuredStep*1e3, r.PredictedStep*1e3,
			100*(r.PredictedStep/r.MeasuredStep-1), r.MeasuredBusy*1e3, r.PredictedBusy*1e3, 100*(r.PredictedBusy/r.MeasuredBusy-1),
			r.MeasuredKernels*1e3, r.PredictedKernels*1e3, 100*(r.PredictedKernels/r.MeasuredKernels-1))
	}
	fmt.Printf("\nmean absolute error: step %.1f%%, profiler busy %.1f%%, kernel time %.1f%%, micro-benchmarks %.1f%% (%d evaluations)\n",
		100*rep.StepMAE, 100*rep.BusyMAE, 100*rep.KernelMAE, 100*rep.MicroMAE, rep.Evaluations)
	fmt.Printf("per profiled op (%d config x aten-op groups): mean absolute error %.1f%%, time-weighted %.1f%%\n",
		rep.OpGroups, 100*rep.OpMAE, 100*rep.OpWeightedMAE)
	e := rep.Efficiency
	fmt.Printf("\nefficiency: FP32 %.4f TF32 %.4f Half %.4f ConvFP32 %.4f ConvTF32 %.4f ConvHalf %.4f Memory %.4f Norm %.4f ComputeRamp %.3g MemoryRamp %.3g\n",
		e.FP32, e.TF32, e.Half, e.ConvFP32, e.ConvTF32, e.ConvHalf, e.Memory, e.MemoryByKind[hw.KindNorm], e.ComputeRamp, e.MemoryRamp)
	for _, k := range []string{hw.KindOptimizer, hw.KindReduction, hw.KindPool, hw.KindEmbedding, hw.KindCopy} {
		if v, ok := e.MemoryByKind[k]; ok {
			fmt.Printf("memory %s %.4f ", k, v)
		}
	}
	fmt.Printf("ConvRamp %.3g MatrixRampOnly %v\n", e.ConvRamp, e.MatrixRampOnly)
	fmt.Printf("harness host per op: forward %.3g backward %.3g optimizer %.3g; half BatchNorm x%.3f\n", rep.Host.Forward, rep.Host.Backward, rep.Host.Optimizer, rep.Host.NormHalf)
	return nil
}

// runHoldout fits without each model in turn and reports the errors on the model left out.
func runHoldout(dir, level string) error {
	m, err := kernelfit.ReadTFLayout(dir)
	if err != nil {
		return err
	}
	g, err := hw.LookupGPU("h200")
	if err != nil {
		return err
	}
	models := []string{"resnet50", "vgg16", "mobilenetv2", "bert-base", "gpt2"}
	var step, busy, kern, op float64
	var nop int
	var n int
	for _, out := range models {
		rep, err := kernelfit.Fit(g, m.Filter(func(c kernelfit.Config) bool { return c.Model != out }), kernelfit.Level(level))
		if err != nil {
			return err
		}
		h := g
		h.Efficiency = rep.Efficiency
		ev, err := kernelfit.Evaluate(h, m.Filter(func(c kernelfit.Config) bool { return c.Model == out }), rep.Host)
		if err != nil {
			return err
		}
		fmt.Printf("held out %-12s step MAE %5.1f%%  profiler-busy MAE %5.1f%%  kernel-time MAE %5.1f%%  per-op MAE %5.1f%%  (%d configs, %d op groups)\n",
			out, 100*ev.StepMAE, 100*ev.BusyMAE, 100*ev.KernelMAE, 100*ev.OpMAE, len(ev.Rows), ev.OpGroups)
		kern += ev.KernelMAE * float64(len(ev.Rows))
		op += ev.OpMAE * float64(ev.OpGroups)
		nop += ev.OpGroups
		step += ev.StepMAE * float64(len(ev.Rows))
		busy += ev.BusyMAE * float64(len(ev.Rows))
		n += len(ev.Rows)
	}
	fmt.Printf("leave-one-model-out mean absolute error: step %.1f%%, profiler busy %.1f%%, kernel time %.1f%% over %d configs, per op %.1f%% over %d op groups\n",
		100*step/float64(n), 100*busy/float64(n), 100*kern/float64(n), n, 100*op/float64(nop), nop)
	return nil
}
