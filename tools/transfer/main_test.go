package main

import (
	"context"
	"testing"
)

// TestTransferNeverWorse: on every GPU of the shipped single-GPU sets with a ResNet-50 pair,
// the fit to two step times moves at most two directions (tied parameters follow their
// lead) and predicts the GPU's other rows no worse than the spec-sheet profile does (issue
// 31: before, a fit of six parameters from these two runs made held-out configs worse), and
// the mean held-out MAE over the GPUs improves on the spec sheet's. Issue 31's target, 8% on
// average, is not met yet (the residuals left are per model, VGG16 and InceptionV3 in fp16,
// BERT at some sequence lengths, which no GPU-wide parameter fits): the test logs the mean.
func TestTransferNeverWorse(t *testing.T) {
	if testing.Short() {
		t.Skip("fits five GPUs through train")
	}
	rs, err := Transfer(context.Background(), "../../testdata", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) < 5 {
		t.Fatalf("%d GPUs with a ResNet-50 fp32/AMP pair, want 5 (a100-40gb, rtx2080ti, rtx3090, v100-16gb, v100-sxm3-32gb)", len(rs))
	}
	var before, after float64
	for _, r := range rs {
		before += r.Before / float64(len(rs))
		after += r.After / float64(len(rs))
		t.Logf("%-15s moved %v: held-out MAE %.1f%% spec sheet, %.1f%% calibrated over %d rows", r.GPU, r.Moved, 100*r.Before, 100*r.After, r.HeldOut)
		dirs := 0
		for _, p := range r.Fit.Table {
			if p.Identified && p.TiedTo == "" {
				dirs++
			}
		}
		if dirs > 2 {
			t.Errorf("%s: %d directions fitted from two step times, want at most 2", r.GPU, dirs)
		}
		if r.After > r.Before+1e-9 {
			t.Errorf("%s: held-out MAE %.2f%% calibrated, %.2f%% spec sheet: the fit made it worse", r.GPU, 100*r.After, 100*r.Before)
		}
	}
	t.Logf("mean held-out MAE over %d GPUs: %.1f%% spec sheet, %.1f%% calibrated (issue 31's target: 8%%)", len(rs), 100*before, 100*after)
	if !(after < before) {
		t.Errorf("mean held-out MAE %.2f%% calibrated, %.2f%% spec sheet: calibration gains nothing", 100*after, 100*before)
	}
}
