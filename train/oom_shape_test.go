package train

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/models"
)

// TestOOMNamesTensorShape: whatever tensor an OOM hits, TF's message names its shape, from
// the plan (models.Tensor.Shape). VGG16 at batch 2 with plain SGD under a memory limit a little
// above its 528 MiB of weights runs out in backward on the 392 MiB gradient of fc1's kernel,
// [25088,4096]; lower limits fail on other tensors, each with its own shape.
func TestOOMNamesTensorShape(t *testing.T) {
	m, err := models.Get("vgg16")
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Plan(models.PlanOptions{Batch: 2, Precision: models.PrecisionFloat32, Optimizer: "sgd"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]models.Tensor{}
	for _, x := range p.Tensors {
		if _, dup := byName[x.Name]; !dup {
			byName[x.Name] = x
		}
	}
	sawWeightGrad := false
	for limit := int64(540); limit <= 1100; limit += 40 {
		res := mustRun(t, cfgWith(func(c *Config) {
			c.Model, c.Batch, c.Optimizer, c.Precision, c.Steps = "vgg16", 2, "sgd", "float32", 2
			c.Memory.LimitMiB = limit
		}))
		if res.OOM == nil {
			continue
		}
		t.Logf("limit %d MiB: %s", limit, res.OOM.Message)
		x, ok := byName[res.OOM.Tensor]
		if !ok {
			t.Errorf("limit %d MiB: OOM on %q, not a tensor of the plan", limit, res.OOM.Tensor)
			continue
		}
		dims := make([]string, len(x.Shape))
		for i, d := range x.Shape {
			dims[i] = strconv.FormatInt(d, 10)
		}
		want := "OOM when allocating tensor with shape[" + strings.Join(dims, ",") + "] and type float"
		if !strings.Contains(res.OOM.Message, want) {
			t.Errorf("limit %d MiB: OOM on %s (%s): message %q, want it to contain %q", limit, x.Name, x.Role, res.OOM.Message, want)
		}
		if x.Name == "fc1/kernel/grad" {
			sawWeightGrad = true
			if !strings.Contains(res.OOM.Message, "shape[25088,4096]") {
				t.Errorf("limit %d MiB: fc1's kernel gradient: message %q, want shape[25088,4096]", limit, res.OOM.Message)
			}
		}
	}
	if !sawWeightGrad {
		t.Error("no limit made the run fail on fc1/kernel/grad; the test no longer covers a weight gradient")
	}
}

// TestOOMShapeAndTypeStrings: the shape and type strings of the message for each kind of tensor:
// a workspace is 1-D uint8 (cuDNN scratch; in a run its allocation never fails, the autotuner
// falls back to an algorithm without it), a scalar variable is shape[], a tensor train builds
// (an all-reduce pack) is its flat element count.
func TestOOMShapeAndTypeStrings(t *testing.T) {
	for _, tc := range []struct {
		t                models.Tensor
		shape, dtypeName string
	}{
		{models.Tensor{Name: "conv1/Conv/grad/workspace", Bytes: 1 << 20, Role: models.Workspace, DType: models.Float32, Shape: []int64{1 << 20}}, "[1048576]", "uint8"},
		{models.Tensor{Name: "conv1/kernel/grad", Bytes: 4 * 7 * 7 * 3 * 64, Role: models.Gradient, DType: models.Float32, Shape: []int64{7, 7, 3, 64}}, "[7,7,3,64]", "float"},
		{models.Tensor{Name: "conv1/Conv", Bytes: 2 * 8 * 112 * 112 * 64, Role: models.Activation, DType: models.Float16, Shape: []int64{8, 112, 112, 64}}, "[8,112,112,64]", "half"},
		{models.Tensor{Name: "normalization/count", Bytes: 4, Role: models.Weight, DType: models.Float32, Shape: []int64{}}, "[]", "float"},
		{models.Tensor{Name: "allreduce/pack0", Bytes: 4000, DType: models.Float32}, "[1000]", "float"},
	} {
		if got := tensorShape(tc.t); got != tc.shape {
			t.Errorf("tensorShape(%s) = %s, want %s", tc.t.Name, got, tc.shape)
		}
		if got := tensorDType(tc.t); got != tc.dtypeName {
			t.Errorf("tensorDType(%s) = %s, want %s", tc.t.Name, got, tc.dtypeName)
		}
	}
}
