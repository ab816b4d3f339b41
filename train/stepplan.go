package train

import (
	"github.com/gpusim/gpusim/framework"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/sim"
)

// planOptions are the models.PlanOptions of one micro-batch of batch samples of cfg, whose
// framework profile is fw, on gpu: the one place Run and StepPlan derive them.
func planOptions(cfg *Config, fw framework.Profile, gpu hw.GPU, batch int) models.PlanOptions {
	return models.PlanOptions{Batch: batch, Precision: models.Precision(cfg.Precision), XLA: cfg.XLA, JAX: fw.Framework == framework.JAX,
		BlasWorkspace: blasWorkspace(gpu.CCMajor), Optimizer: cfg.Optimizer,
		BatchNormSpatialPersistent: envTrue(cfg.Env["TF_USE_CUDNN_BATCHNORM_SPATIAL_PERSISTENT"]),
		GraphRewriteAMP:            graphRewriteAMP(cfg.Env), XLAAutoCluster: cfg.XLA && (!fw.Has(framework.JitCompile) || autoJit(cfg.Env)),
		ResourceVariables: cfg.ResourceVariables || fw.Has(framework.ResourceVariables),
		L2Decay:           cfg.L2Decay, StaticLossScale: cfg.StaticLossScale && cfg.Precision == "mixed_float16"}
}

// StepPlan returns the step plan Run builds for a micro-batch of batch samples of cfg (before
// XLA's buffer assignment, unpriced) and the GPU profile it runs on: what a search needs for
// cheap bounds (the plan's persistent and saved bytes, its FLOPs and bytes moved) without
// simulating. Plans are memoized by models, so asking twice costs a map lookup.
func StepPlan(cfg Config, batch int) (*models.Plan, hw.GPU, error) {
	rv, err := resolve(&cfg)
	if err != nil {
		return nil, hw.GPU{}, err
	}
	p, err := rv.model.Plan(planOptions(&cfg, rv.fw, rv.gpu, batch))
	if err != nil {
		return nil, hw.GPU{}, &FieldError{Field: "Model", Err: err}
	}
	return p, rv.gpu, nil
}

// ComputeTime is the GPU time of the forward and backward ops of one micro-batch of batch
// samples of cfg on one replica, priced as Run prices them (the memoized priced plan), in
// seconds: a lower bound of each micro-step Run simulates, whose ops run one after another
// on the replica's stream and to which the host copy, the optimizer, launches, input waits
// and all-reduce only add. The run it prices is cfg on one GPU of its kind, the default
// strategy, no accumulation; 0 when that process cannot start (no memory for its context).
func ComputeTime(cfg Config, batch int) (float64, error) {
	c := cfg
	c.GPUCount, c.Nodes, c.Strategy, c.Batch, c.AccumulationSteps = 1, 0, "default", batch, 1
	// Horovod's compression changes the all-reduce only, which one replica does not run;
	// other processes on the cards only take memory and time from it (and may name GPUs the
	// one-GPU copy does not have).
	c.HorovodCompression, c.Processes = "", nil
	c.CUDAVisibleDevices, c.VisibleDevices, c.Device, c.StrategyDevices = nil, nil, "", nil
	c.Memory.LogicalMiB = nil
	if err := c.Validate(); err != nil {
		return 0, err
	}
	r, err := newRunner(c, true)
	if err != nil {
		return 0, err
	}
	if r.oom != nil || len(r.replicas) == 0 || len(r.replicas[0].plans) == 0 {
		return 0, nil
	}
	h2d := kindIndex(hw.KindH2D)
	var t sim.Time
	for _, oc := range r.replicas[0].plans[0].costs {
		if (oc.cat == catForward || oc.cat == catBackward) && oc.kind != h2d {
			t += oc.exec
		}
	}
	return t.Seconds(), nil
}
