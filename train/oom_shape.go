package train

import (
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/models"
)

// tensorShape is the shape TF prints for t in "OOM when allocating tensor with shape[...]":
// the plan's shape (models.Tensor.Shape: batch first for activations and gradients, the
// variable's shape for weights and weight gradients, [bytes] for a cuDNN workspace). A tensor
// train builds itself (an all-reduce pack, a concatenation of flattened gradients) has no
// shape and is 1-D: its element count.
func tensorShape(t models.Tensor) string {
	if t.Shape == nil {
		return "[" + strconv.FormatInt(t.Bytes/max(t.DType.Size(), 1), 10) + "]"
	}
	dims := make([]string, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = strconv.FormatInt(d, 10)
	}
	return "[" + strings.Join(dims, ",") + "]"
}

// tensorDType is the type TF prints for t: a cuDNN workspace is scratch bytes, allocated as
// DT_UINT8 (DnnScratchAllocator::AllocateBytes, tensorflow/core/kernels/conv_ops_gpu.h);
// everything else has its dtype.
func tensorDType(t models.Tensor) string {
	if t.Role == models.Workspace || t.Role == models.Temp {
		return "uint8"
	}
	return tfDType(t.DType)
}
