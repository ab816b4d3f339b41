package analysis

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/train"
)

// Goal is what a plan search optimizes.
type Goal string

const (
	// GoalThroughput: the most samples per second (the median step's).
	GoalThroughput Goal = "throughput"
	// GoalTimeToTrain: the shortest time to train PlanOptions.Training.
	GoalTimeToTrain Goal = "time-to-train"
	// GoalCost: the fewest dollars to train PlanOptions.Training (GPU-hours x $/GPU-hour).
	GoalCost Goal = "cost"
	// GoalMaxBatch: the largest global batch that fits with the margin (ties: throughput).
	GoalMaxBatch Goal = "max-batch"
)

// Goals lists the goals in the order the CLI documents them.
var Goals = []Goal{GoalThroughput, GoalTimeToTrain, GoalCost, GoalMaxBatch}

// PlanSpace is the values each setting a TF user controls may take. An empty list keeps the
// base configuration's value; DefaultPlanSpace fills every list.
type PlanSpace struct {
	// GPUs are hardware.gpu profile names; Counts the GPUs of the whole job (above BoxGPUs
	// they are whole hosts of BoxGPUs each, hardware.nodes > 1).
	GPUs   []string
	Counts []int
	// BoxGPUs is the GPUs of one host (8 when 0); counts above it need MaxNodes > 1.
	BoxGPUs int
	// Strategies are tried for more than one GPU: "mirrored" (MultiWorkerMirroredStrategy
	// across hosts) and "horovod". One GPU runs the default strategy.
	Strategies []string
	// ReplicaBatches are each replica's batch per update (the global batch is it times the
	// replicas); Accumulation the micro-batches it is split into (accumulation_steps).
	ReplicaBatches []int
	Accumulation   []int
	// Precisions are Keras policies; StaticLossScale the mixed_float16 loss scalings tried
	// (false: LossScaleOptimizer's dynamic scale). mixed_bfloat16 only where the GPU has BF16.
	Precisions      []string
	StaticLossScale []bool
	// XLA is jit_compile; TF32 tf.config.experimental.enable_tensor_float_32_execution (only
	// varied under float32 on a GPU with TF32: elsewhere it changes nothing).
	XLA  []bool
	TF32 []bool
	// MemoryModes are memory.mode values ("preallocate", "growth").
	MemoryModes []string
	// ParallelCalls, Prefetch (train.Autotune for AUTOTUNE) and Cache are the tf.data knobs,
	// varied only when the base has an input pipeline.
	ParallelCalls []int
	Prefetch      []int
	Cache         []string
}

// DefaultPlanSpace is the space gpusim plan searches around base: its GPU (or gpus), 1 to
// maxGPUs GPUs in powers of two, both multi-GPU strategies, replica batches 32 to 1024 and
// base's own, accumulation 1, 2 and 4, every precision and loss scaling, XLA and TF32 on and
// off, preallocate and growth, and, with an input pipeline, AUTOTUNE and a memory cache.
func DefaultPlanSpace(base train.Config, gpus []string, maxGPUs int) PlanSpace {
	if len(gpus) == 0 {
		gpus = []string{base.GPU}
	}
	var counts []int
	for n := 1; n <= max(maxGPUs, 1); n *= 2 {
		counts = append(counts, n)
	}
	batches := []int{32, 64, 128, 256, 512, 1024}
	if b := baseReplicaBatch(base); !slices.Contains(batches, b) {
		batches = append(batches, b)
		slices.Sort(batches)
	}
	s := PlanSpace{GPUs: gpus, Counts: counts, Strategies: []string{"mirrored", "horovod"}, ReplicaBatches: batches,
		Accumulation: []int{1, 2, 4}, Precisions: []string{"float32", "mixed_float16", "mixed_bfloat16"},
		StaticLossScale: []bool{false, true}, XLA: []bool{false, true}, TF32: []bool{true, false},
		MemoryModes: []string{"preallocate", "growth"}}
	if in := base.Input; in != nil {
		s.ParallelCalls = uniqInts(in.ParallelCalls, train.Autotune)
		s.Prefetch = uniqInts(in.Prefetch, train.Autotune)
		s.Cache = []string{in.Cache}
		if in.Cache != "memory" {
			s.Cache = append(s.Cache, "memory")
		}
	}
	return s
}

// SmallPlanSpace is a space small enough to search while a web page waits (the workshop's plan
// panel, gpusim plan --space small): base's GPU, GPU count and strategy, replica batches of half,
// one, two and four times base's (for GoalMaxBatch also 8, 16 and 32 times), accumulation 1
// and 2, every precision and loss scaling, XLA and TF32 on and off, base's memory mode, and,
// with an input pipeline, parallel calls and prefetch as base has them or AUTOTUNE, base's
// cache. About 80 points, 320 with an input pipeline: a tenth of DefaultPlanSpace's.
func SmallPlanSpace(base train.Config, goal Goal) PlanSpace {
	n := max(base.GPUCount, 1) * base.NodeCount()
	rb := baseReplicaBatch(base)
	mults := []int{1, 2, 4}
	if goal == GoalMaxBatch {
		mults = append(mults, 8, 16, 32)
	}
	var batches []int
	if rb >= 2 {
		batches = append(batches, rb/2)
	}
	for _, m := range mults {
		batches = append(batches, rb*m)
	}
	s := PlanSpace{GPUs: []string{base.GPU}, Counts: []int{n}, Strategies: []string{base.Strategy}, ReplicaBatches: batches,
		Accumulation: []int{1, 2}, Precisions: []string{"float32", "mixed_float16", "mixed_bfloat16"},
		StaticLossScale: []bool{false, true}, XLA: []bool{false, true}, TF32: []bool{true, false},
		MemoryModes: []string{memoryMode(base.Memory)}}
	if in := base.Input; in != nil {
		s.ParallelCalls = uniqInts(in.ParallelCalls, train.Autotune)
		s.Prefetch = uniqInts(in.Prefetch, train.Autotune)
		s.Cache = []string{in.Cache}
	}
	return s
}

func uniqInts(a, b int) []int {
	if a == b {
		return []int{a}
	}
	return []int{a, b}
}

// replicasOf is how many replicas cfg trains (1 for the default strategy).
func replicasOf(cfg train.Config) int {
	if !cfg.MultiReplica() {
		return 1
	}
	return max(cfg.GPUCount, 1) * cfg.NodeCount()
}

func baseReplicaBatch(base train.Config) int { return max(base.Batch/replicasOf(base), 1) }

// PlanKnobs is one point of a PlanSpace: the settings a plan chooses.
type PlanKnobs struct {
	GPU string `json:"gpu"`
	// GPUs is the job's GPUs, Nodes the hosts they sit on.
	GPUs            int    `json:"gpus"`
	Nodes           int    `json:"nodes"`
	Strategy        string `json:"strategy"`
	GlobalBatch     int    `json:"global_batch"`
	Accumulation    int    `json:"accumulation_steps"`
	Precision       string `json:"precision"`
	StaticLossScale bool   `json:"static_loss_scale"`
	XLA             bool   `json:"xla"`
	TF32            bool   `json:"tf32"`
	Memory          string `json:"memory_mode"`
	// ParallelCalls and Prefetch (-1 = AUTOTUNE) and Cache: only with an input pipeline.
	ParallelCalls *int   `json:"parallel_calls,omitempty"`
	Prefetch      *int   `json:"prefetch,omitempty"`
	Cache         string `json:"cache,omitempty"`
}

// apply returns base with k's settings, sharing nothing k changes with base.
func (k PlanKnobs) apply(base train.Config) train.Config {
	cfg := base
	cfg.GPU, cfg.GPUProfile = k.GPU, nil
	if k.GPU == base.GPU {
		cfg.GPUProfile = base.GPUProfile
	}
	cfg.Nodes, cfg.GPUCount = 0, k.GPUs
	if k.Nodes > 1 {
		cfg.Nodes, cfg.GPUCount = k.Nodes, k.GPUs/k.Nodes
	}
	cfg.Strategy = k.Strategy
	if k.Strategy != "horovod" {
		// Compression.fp16 is an argument of hvd.DistributedOptimizer: off Horovod it goes.
		cfg.HorovodCompression = ""
	}
	cfg.Batch, cfg.AccumulationSteps = k.GlobalBatch, k.Accumulation
	cfg.Precision, cfg.StaticLossScale = k.Precision, k.StaticLossScale
	cfg.XLA, cfg.TF32 = k.XLA, k.TF32
	cfg.Memory.Mode, cfg.Memory.Growth = k.Memory, nil
	if cfg.Input != nil {
		in := *cfg.Input
		in.ParallelCalls, in.Prefetch, in.Cache = *k.ParallelCalls, *k.Prefetch, k.Cache
		cfg.Input = &in
	}
	return cfg
}

// knobsOf reads base's own settings as knobs (the plan "change nothing").
func knobsOf(base train.Config) PlanKnobs {
	k := PlanKnobs{GPU: base.GPU, GPUs: max(base.GPUCount, 1) * base.NodeCount(), Nodes: base.NodeCount(), Strategy: base.Strategy,
		GlobalBatch: base.Batch, Accumulation: max(base.AccumulationSteps, 1), Precision: base.Precision,
		StaticLossScale: base.StaticLossScale, XLA: base.XLA, TF32: base.TF32, Memory: memoryMode(base.Memory)}
	if in := base.Input; in != nil {
		pc, pf := in.ParallelCalls, in.Prefetch
		k.ParallelCalls, k.Prefetch, k.Cache = &pc, &pf, in.Cache
	}
	return k
}

// memoryMode names m as a memory.mode value.
func memoryMode(m train.Memory) string {
	switch {
	case m.Mode != "":
		return m.Mode
	case m.Growth != nil && *m.Growth:
		return "growth"
	case m.LimitMiB > 0:
		return "limit"
	}
	return "preallocate"
}

// changes lists what k changes in base, in the order of the scenario's keys.
func (k PlanKnobs) changes(base train.Config) []FieldChange {
	cfg := k.apply(base)
	var out []FieldChange
	add := func(field string, differs bool, v string) {
		if differs {
			out = append(out, FieldChange{field, v})
		}
	}
	b := strconv.FormatBool
	add("GPU", cfg.GPU != base.GPU, cfg.GPU)
	add("GPUCount", cfg.GPUCount != base.GPUCount, strconv.Itoa(cfg.GPUCount))
	add("Nodes", cfg.NodeCount() != base.NodeCount(), strconv.Itoa(cfg.NodeCount()))
	add("Strategy", cfg.Strategy != base.Strategy, cfg.Strategy)
	add("HorovodCompression", cfg.HorovodCompression != base.HorovodCompression, "none")
	add("Batch", cfg.Batch != base.Batch, strconv.Itoa(cfg.Batch))
	add("AccumulationSteps", cfg.AccumulationSteps != max(base.AccumulationSteps, 1), strconv.Itoa(cfg.AccumulationSteps))
	add("Precision", cfg.Precision != base.Precision, cfg.Precision)
	add("StaticLossScale", cfg.StaticLossScale != base.StaticLossScale, b(cfg.StaticLossScale))
	add("XLA", cfg.XLA != base.XLA, b(cfg.XLA))
	add("TF32", cfg.TF32 != base.TF32, b(cfg.TF32))
	add("Memory.Mode", k.Memory != memoryMode(base.Memory), k.Memory)
	if in, bin := cfg.Input, base.Input; in != nil && bin != nil {
		add("Input.ParallelCalls", in.ParallelCalls != bin.ParallelCalls, tunable(in.ParallelCalls))
		add("Input.Prefetch", in.Prefetch != bin.Prefetch, tunable(in.Prefetch))
		add("Input.Cache", in.Cache != bin.Cache, in.Cache)
	}
	return out
}

func tunable(n int) string {
	if n == train.Autotune {
		return autotune
	}
	return strconv.Itoa(n)
}

// placement is a GPU count on hosts with a strategy.
type placement struct {
	gpus, nodes int
	strategy    string
}

// placements are the (count, nodes, strategy) the space allows for a job of at most maxNodes
// hosts.
func (s PlanSpace) placements(base train.Config, maxNodes int) []placement {
	box := s.BoxGPUs
	if box <= 0 {
		box = 8
	}
	counts := s.Counts
	if len(counts) == 0 {
		counts = []int{max(base.GPUCount, 1) * base.NodeCount()}
	}
	strategies := s.Strategies
	if len(strategies) == 0 {
		strategies = []string{base.Strategy}
	}
	// A job that names its devices (CUDA_VISIBLE_DEVICES, set_visible_devices, tf.device, a
	// strategy's device list) names them for its own count and strategy: another count is
	// another script, so it keeps its count and its own strategy is among those tried.
	own := max(base.GPUCount, 1) * base.NodeCount()
	pinned := base.CUDAVisibleDevices != nil || base.VisibleDevices != nil || base.Device != "" || base.StrategyDevices != nil
	if pinned && !slices.Contains(strategies, base.Strategy) {
		strategies = append([]string{base.Strategy}, strategies...)
	}
	var out []placement
	for _, n := range counts {
		if pinned && n != own {
			continue
		}
		nodes := 1
		if n > box {
			if n%box != 0 {
				continue
			}
			nodes = n / box
		}
		if nodes > max(maxNodes, 1) {
			continue
		}
		if n == 1 {
			st := "default"
			if pinned {
				st = base.Strategy
			}
			out = append(out, placement{1, 1, st})
			continue
		}
		for _, st := range strategies {
			if st == "mirrored" && nodes > 1 {
				st = "multi_worker_mirrored"
			}
			switch {
			case st == "default" && nodes > 1:
				continue
			case st != "default" && base.Device != "":
				// The script pins its ops with tf.device, which a strategy's replicas
				// override (train.Validate refuses it): taking the line out is a change of
				// code, not of a setting this search varies.
				continue
			}
			out = append(out, placement{n, nodes, st})
		}
	}
	return out
}

// precisionChoice is a policy with its loss scaling and TF32 setting.
type precisionChoice struct {
	precision string
	static    bool
	tf32      bool
}

// precisions are the (policy, loss scaling, TF32) the space allows on gpu.
func (s PlanSpace) precisions(base train.Config, gpu hw.GPU) []precisionChoice {
	pols := orStrings(s.Precisions, base.Precision)
	statics := orBools(s.StaticLossScale, base.StaticLossScale)
	tf32s := orBools(s.TF32, base.TF32)
	var out []precisionChoice
	for _, p := range pols {
		switch {
		case p == "mixed_bfloat16" && !gpu.SupportsBF16():
			continue
		case p == "mixed_float16":
			for _, st := range statics {
				out = append(out, precisionChoice{p, st, base.TF32})
			}
		case p == "float32" && gpu.SupportsTF32():
			for _, t := range tf32s {
				out = append(out, precisionChoice{p, false, t})
			}
		default:
			out = append(out, precisionChoice{p, false, base.TF32})
		}
	}
	return out
}

func orStrings(xs []string, def string) []string {
	if len(xs) == 0 {
		return []string{def}
	}
	return xs
}

func orBools(xs []bool, def bool) []bool {
	if len(xs) == 0 {
		return []bool{def}
	}
	return xs
}

func orInts(xs []int, def int) []int {
	if len(xs) == 0 {
		return []int{def}
	}
	return xs
}

// enumerate calls f with every point of the space that shard owns (all of them when its Count
// is 0), in a fixed order, with the point's place in that order over the whole space, and
// returns how many points it visited; points outside the global batch range [minBatch,
// maxBatch] (0 = no bound) or whose micro-batch is empty are counted apart (outside) and not
// passed to f.
func (s PlanSpace) enumerate(base train.Config, maxNodes, minBatch, maxBatch int, shard Shard, f func(point int, k PlanKnobs)) (total, outside int, err error) {
	own := knobsOf(base)
	var inputs [][3]any
	if base.Input != nil {
		for _, pc := range orInts(s.ParallelCalls, *own.ParallelCalls) {
			for _, pf := range orInts(s.Prefetch, *own.Prefetch) {
				for _, c := range orStrings(s.Cache, own.Cache) {
					inputs = append(inputs, [3]any{pc, pf, c})
				}
			}
		}
	} else {
		inputs = [][3]any{{0, 0, ""}}
	}
	point := -1
	for _, g := range orStrings(s.GPUs, base.GPU) {
		gpu, err := lookupGPU(base, g)
		if err != nil {
			return 0, 0, err
		}
		for _, pl := range s.placements(base, maxNodes) {
			for _, rb := range orInts(s.ReplicaBatches, baseReplicaBatch(base)) {
				for _, acc := range orInts(s.Accumulation, max(base.AccumulationSteps, 1)) {
					for _, pr := range s.precisions(base, gpu) {
						for _, x := range orBools(s.XLA, base.XLA) {
							for _, mem := range orStrings(s.MemoryModes, own.Memory) {
								for _, in := range inputs {
									point++
									if shard.Count > 0 && !shard.Owns(point) {
										continue
									}
									total++
									k := PlanKnobs{GPU: g, GPUs: pl.gpus, Nodes: pl.nodes, Strategy: pl.strategy, GlobalBatch: rb * pl.gpus,
										Accumulation: acc, Precision: pr.precision, StaticLossScale: pr.static, XLA: x, TF32: pr.tf32, Memory: mem}
									if base.Input != nil {
										pc, pf := in[0].(int), in[1].(int)
										k.ParallelCalls, k.Prefetch, k.Cache = &pc, &pf, in[2].(string)
									}
									if rb/acc < 1 || (minBatch > 0 && k.GlobalBatch < minBatch) || (maxBatch > 0 && k.GlobalBatch > maxBatch) {
										outside++
										continue
									}
									f(point, k)
								}
							}
						}
					}
				}
			}
		}
	}
	return total, outside, nil
}

// lookupGPU is the profile of name (base's own when name is base's GPU: it may be a file).
func lookupGPU(base train.Config, name string) (hw.GPU, error) {
	if name == base.GPU && base.GPUProfile != nil {
		return *base.GPUProfile, nil
	}
	g, err := hw.LookupGPU(name)
	if err != nil {
		return hw.GPU{}, &train.FieldError{Field: "GPU", Err: err}
	}
	return g, nil
}

// Points calls f with every point of the space around base on at most maxNodes hosts, in the
// search's order, with the configuration a plan search simulates for it.
func (s PlanSpace) Points(base train.Config, maxNodes int, f func(k PlanKnobs, cfg train.Config)) error {
	_, _, err := s.enumerate(base, maxNodes, 0, 0, Shard{}, func(_ int, k PlanKnobs) { f(k, k.apply(base)) })
	return err
}

// Size is how many points the space has around base (before any constraint).
func (s PlanSpace) Size(base train.Config, maxNodes int) (int, error) {
	n, _, err := s.enumerate(base, maxNodes, 0, 0, Shard{}, func(int, PlanKnobs) {})
	return n, err
}

// check reports a space that cannot be searched.
func (s PlanSpace) check() error {
	for _, n := range s.Counts {
		if n < 1 {
			return fmt.Errorf("plan: GPU count %d: want at least 1", n)
		}
	}
	for _, b := range s.ReplicaBatches {
		if b < 1 {
			return fmt.Errorf("plan: replica batch %d: want at least 1", b)
		}
	}
	for _, a := range s.Accumulation {
		if a < 1 {
			return fmt.Errorf("plan: accumulation %d: want at least 1", a)
		}
	}
	if math.MaxInt32 < len(s.GPUs)*len(s.Counts)*len(s.ReplicaBatches) {
		return fmt.Errorf("plan: space too large")
	}
	return nil
}
