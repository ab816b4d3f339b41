package train_test

import (
	"testing"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
)

// TestDLEResNetStagesBatchesAhead: NVIDIA's ConvNets ResNet-50 copies each batch to the GPU a
// step ahead (model/resnet.py _stage: a CPU StagingArea, then a GPU StagingArea, both puts
// grouped into the train op), and its batches are float32 images (tf.image.resize_images), so
// every step moves 256 x 602 KB over PCIe while it computes on the previous batch. Simulated
// as `gpusim validate` runs the DGX-2 AMP 1-GPU row (dleConfig), a step's copy takes 8 ms or
// more and none of it is on the step's critical path: the step neither waits for the batch nor
// copies it again itself (no h2d op time in its breakdown by kind); with the copy taken at the
// step's start, as a plain tf.data iterator does, the step waited for it.
func TestDLEResNetStagesBatchesAhead(t *testing.T) {
	ms, err := analysis.ReadMeasurements("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	var row dleRow
	for _, r := range readDLE(t) {
		if r.host == "dgx-2" && r.model == "resnet50-v1.5" && r.precision == "amp_fp16" && r.gpus == 16 {
			row = r
		}
	}
	if row.host == "" {
		t.Fatal("no DGX-2 ResNet-50 AMP row in testdata/dle_scaling.csv")
	}
	res := mustRun(t, dleConfig(t, ms, row, 1))
	if res.Input == nil || res.Input.Batches == 0 {
		t.Fatal("the DLE ResNet-50 row runs no tf.data pipeline")
	}
	perBatch := res.Input.H2DTime.Seconds() / float64(res.Input.Batches)
	var wait float64
	for _, s := range res.Breakdown {
		if s.Category == train.CatInput {
			wait = s.Seconds
		}
	}
	t.Logf("copy %.1f ms per batch, input wait %.2f ms of a %.1f ms step", 1e3*perBatch, 1e3*wait, 1e3*res.StepTime)
	if perBatch < 8e-3 {
		t.Errorf("a batch of %d float32 images copies in %.1f ms, want >= 8 ms (154 MB over PCIe)", row.batch, 1e3*perBatch)
	}
	if wait > 0.5e-3 {
		t.Errorf("the step waits %.2f ms for its input; the staged copy should leave none on the critical path", 1e3*wait)
	}
	for _, s := range res.ByKind {
		if s.Category == "h2d" {
			t.Errorf("the step copies its batch again itself (h2d %.1f ms); the pipeline's staged copy is the only one", 1e3*s.Seconds)
		}
	}
}
