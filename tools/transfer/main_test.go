package main

import (
	"context"
	"math"
	"testing"

	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/validate"
)

// TestTransferNeverWorse: on every rig (a GPU in one host) and every GPU model pooled over its
// rigs of the shipped single-GPU sets with a ResNet-50 pair, the fit to two step times moves
// at most two directions (tied parameters follow their lead) and predicts the other rows no
// worse than the spec-sheet profile does (issue 31: a fit of six parameters from these two
// runs made held-out configs worse), and the mean held-out MAE improves on the spec sheet's,
// over rigs and over GPU models. Issue 31's target, 8% on average, is not met yet (the
// residuals left are per model, VGG16 and InceptionV3 in fp16, BERT at some sequence
// lengths, which no GPU-wide parameter fits): the test logs the means.
func TestTransferNeverWorse(t *testing.T) {
	if testing.Short() {
		t.Skip("fits five GPUs through train")
	}
	rs, err := Transfer(context.Background(), "../../testdata", 2)
	if err != nil {
		t.Fatal(err)
	}
	rigs, gpus := Split(rs)
	// The rigs: a100-40gb@dgx-a100, two RTX 2080 Ti boxes (with and without NVLink bridges),
	// two RTX 3090 boxes (EPYC, Threadripper), v100-16gb@dgx-1, v100-sxm3-32gb@dgx-2.
	if len(rigs) < 7 || len(gpus) < 5 {
		t.Fatalf("%d rigs and %d GPUs with a ResNet-50 fp32/AMP pair, want 7 and 5", len(rigs), len(gpus))
	}
	checkNeverWorse(t, rigs)
	checkNeverWorse(t, gpus)
	b, a, n := MeanOverGPUs(rigs)
	t.Logf("per rig, mean over %d GPU models of their rigs' held-out MAE: %.1f%% spec sheet, %.1f%% calibrated (issue 31's target: 8%%)", n, 100*b, 100*a)
	if !(a < b) {
		t.Errorf("per rig, mean over GPU models %.2f%% calibrated, %.2f%% spec sheet: calibration gains nothing", 100*a, 100*b)
	}
}

// checkNeverWorse holds each result's fit to two directions and its held-out MAE to the spec
// sheet's or better, and the mean over rs to better.
func checkNeverWorse(t *testing.T, rs []GPUResult) {
	t.Helper()
	var before, after float64
	for _, r := range rs {
		before += r.Before / float64(len(rs))
		after += r.After / float64(len(rs))
		t.Logf("%-36s moved %v: held-out MAE %.1f%% spec sheet, %.1f%% calibrated over %d rows", r.Name(), r.Moved, 100*r.Before, 100*r.After, r.HeldOut)
		dirs := 0
		for _, p := range r.Fit.Table {
			if p.Identified && p.TiedTo == "" {
				dirs++
			}
		}
		if dirs > 2 {
			t.Errorf("%s: %d directions fitted from two step times, want at most 2", r.Name(), dirs)
		}
		if r.After > r.Before+1e-9 {
			t.Errorf("%s: held-out MAE %.2f%% calibrated, %.2f%% spec sheet: the fit made it worse", r.Name(), 100*r.After, 100*r.Before)
		}
	}
	t.Logf("mean held-out MAE over %d: %.1f%% spec sheet, %.1f%% calibrated (issue 31's target: 8%%)", len(rs), 100*before, 100*after)
	if !(after < before) {
		t.Errorf("mean held-out MAE %.2f%% calibrated, %.2f%% spec sheet: calibration gains nothing", 100*after, 100*before)
	}
}

// TestSpread: a row's sibling spread is its distance from the mean of the other rows of its
// configuration; a configuration measured once has none, and another host or TF release is
// another configuration.
func TestSpread(t *testing.T) {
	row := func(gpu, host, tf string, v float64) validate.Measurement {
		m := validate.Measurement{Metric: validate.Throughput, Value: v, Label: "fp32"}
		m.Config = train.DefaultConfig()
		m.Config.GPU, m.Config.Host, m.Config.TFVersion = gpu, host, tf
		return m
	}
	ms := []validate.Measurement{
		row("rtx2080ti", "a", "1.15", 100), row("rtx2080ti", "a", "1.15", 110), row("rtx2080ti", "a", "1.15", 90),
		row("rtx2080ti", "b", "1.15", 50), row("rtx2080ti", "a", "2.4", 70), row("rtx3090", "a", "1.15", 200),
	}
	mae, n := Spread(ms)
	want := (0 + (110.0/95 - 1) + (1 - 90.0/105)) / 3
	if n != 3 || math.Abs(mae-want) > 1e-12 {
		t.Errorf("Spread = %.6f over %d rows, want %.6f over 3", mae, n, want)
	}
	if _, n := Spread(ms[3:]); n != 0 {
		t.Errorf("%d rows with siblings among configurations measured once, want 0", n)
	}
}
