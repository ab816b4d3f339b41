package train

import "testing"

func releaseStep(t *testing.T, gpu, model, precision, tf, cudnn string) float64 {
	t.Helper()
	c := DefaultConfig()
	c.Model, c.GPU, c.Batch, c.Steps, c.Precision, c.TFVersion, c.CuDNNVersion = model, gpu, 64, 3, precision, tf, cudnn
	res := mustRun(t, c)
	if res.OOM != nil {
		t.Fatalf("%s %s: OOM", gpu, model)
	}
	return res.StepTime
}

// tf_version=2.3 on an A100 runs float32 at the FP32 speed: the same step as with TF32 off,
// and slower than under TF 2.4.
func TestTF23RunsFP32OnA100(t *testing.T) {
	c := DefaultConfig()
	c.Model, c.GPU, c.Batch, c.Steps, c.TF32 = "resnet50", "a100-40gb", 64, 3, false
	off := mustRun(t, c).StepTime
	tf23 := releaseStep(t, "a100-40gb", "resnet50", "float32", "2.3", "")
	tf24 := releaseStep(t, "a100-40gb", "resnet50", "float32", "2.4", "")
	if tf23 != off {
		t.Errorf("TF 2.3 float32 step %.4g s, TF32 off %.4g s: want the same", tf23, off)
	}
	if !(tf24 < tf23/1.3) {
		t.Errorf("TF 2.4 step %.4g s, TF 2.3 %.4g s: want TF32 to make it 1.3x faster at least", tf24, tf23)
	}
}

// cuDNN 6 (TF 1.3/1.4) has no Tensor Core math: a V100 mixed_float16 convolution step runs on
// the CUDA cores and takes longer than under cuDNN 7.
func TestCuDNNVersionMovesStep(t *testing.T) {
	old := releaseStep(t, "v100-16gb", "resnet50", "mixed_float16", "1.4", "")
	newer := releaseStep(t, "v100-16gb", "resnet50", "mixed_float16", "1.4", "7.0")
	if !(old > 1.5*newer) {
		t.Errorf("cuDNN 6.0 step %.4g s, cuDNN 7.0 %.4g s: want Tensor Core convolutions to make it 1.5x faster at least", old, newer)
	}
}
