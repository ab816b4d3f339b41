package models

import "strings"

// XLA compile-time model, fitted to compile times measured with JAX 0.11.2 on the H200
// (testdata/h200/xla, tools/h200/xla_compile.py: jax.jit(step).lower(args).compile() of
// training steps of MLPs, ResNet-like CNNs and Transformer encoders, 46 to 8,803 jaxpr
// equations). A least-squares fit without intercept (TestXLACompileFit) gives
//
//	compile = XLACompilePerEqn x equations + XLACompilePerGEMMShape x distinct GEMM shapes
//
// with a mean absolute error of 33% over the 16 compiles: the per-shape term is XLA GPU's
// GEMM autotuning (gemm_fusion_autotuner.cc times Triton and cuBLAS candidates for every new
// dot shape; convolutions' cuDNN autotuning measured far cheaper), the per-equation term the
// HLO passes and LLVM code generation, which grow with the graph.
const (
	// XLACompilePerEqn is seconds per framework-level op (jaxpr equation) of the train step.
	XLACompilePerEqn = 0.000561
	// XLACompilePerGEMMShape is seconds per distinct matmul shape (autotuning).
	XLACompilePerGEMMShape = 0.387
	// xlaEqnsPerPlanOp converts a Plan op to jaxpr equations: the measured CNN block
	// (1x1, 3x3, 1x1 convolutions, three batch norms, ReLUs, residual add: 275 equations per
	// block for forward, backward and update, from the cnn rows' slope) is one ResNet-50 bottleneck
	// block, which the plan prices as resnet50BlockOps ops.
	xlaEqnsPerPlanOp = 275.0 / resnet50BlockOps
	// resnet50BlockOps is the plan ops of ResNet-50's conv3_block2 (float32, sgd), counted by
	// TestXLAEqnsPerPlanOp.
	resnet50BlockOps = 38
)

// XLACompileSeconds is the simulated time XLA takes to compile one train step of plan p:
// the plan's ops (less those XLA adds itself) scaled to framework-level equations, plus
// autotuning of each distinct matmul shape (ops of kind MatMul or Attention with distinct
// FLOPs and bytes).
func XLACompileSeconds(p *Plan) float64 {
	shapes := map[[2]float64]bool{}
	ops := 0
	for _, op := range p.Ops {
		if op.Kind == MatMul || op.Kind == Attention {
			shapes[[2]float64{op.FLOPs, op.Bytes}] = true
		}
		if !strings.HasSuffix(op.Name, xlaFilterTransposeSuffix) {
			ops++
		}
	}
	return XLACompilePerEqn*xlaEqnsPerPlanOp*float64(ops) + XLACompilePerGEMMShape*float64(len(shapes))
}
