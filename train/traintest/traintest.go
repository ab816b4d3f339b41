// Package traintest holds the configurations of built-in scenarios as train.Config values,
// for the tests of the packages below scenarios (train, analysis, report): docs/design.md's
// layers keep those tests from loading a scenario, and a figure copied by hand would drift
// from the YAML. scenarios' TestTraintestIsTheBuiltins checks every configuration here equal
// to the one its scenario loads to (scenarios/builtin/NAME.yaml says where each figure comes
// from), so a test here runs what `gpusim run NAME` runs.
package traintest

import (
	"github.com/gpusim/gpusim/pipeline"
	"github.com/gpusim/gpusim/train"
)

// Builtins maps a built-in scenario's name to its configuration.
var Builtins = map[string]func() train.Config{
	"default":              train.DefaultConfig,
	"growth-fragmentation": GrowthFragmentation,
	"input-bound":          InputBound,
	"mirrored-4xa100":      Mirrored4xA100,
	"resnet50-a100":        ResNet50A100,
	"bert-base-h200":       BertBaseH200,
}

// named returns train.DefaultConfig named name with edit applied.
func named(name string, edit func(*train.Config)) train.Config {
	c := train.DefaultConfig()
	c.Name = name
	edit(&c)
	return c
}

// GrowthFragmentation is growth-fragmentation: ResNet-50 batch 168 on a T4 with memory
// growth, 20 steps.
func GrowthFragmentation() train.Config {
	return named("growth-fragmentation", func(c *train.Config) {
		c.Batch, c.GPU, c.Steps, c.Memory.Growth = 168, "t4", 20, ptr(true)
	})
}

// InputBound is input-bound: ResNet-50 batch 128 on one H200 fed by a sequential 4 ms map
// without prefetch on the H200 machine's 16 cores, 200 steps.
func InputBound() train.Config {
	return named("input-bound", func(c *train.Config) {
		c.GPU, c.Batch, c.Steps = "h200", 128, 200
		in := train.DefaultInput()
		in.Pipeline.MapCost = pipeline.Dist{Kind: "lognormal", Mean: 4e-3, Stddev: 1e-3}
		in.Pipeline.StorageBandwidth = 7e9
		in.Pipeline.Host.Cores, in.Pipeline.Host.MemoryBytes = 16, 128<<30
		c.Input = &in
	})
}

// Mirrored4xA100 is mirrored-4xa100: ResNet-50 mixed_float16 with momentum, batch 1024 on
// 4 x A100-40GB under MirroredStrategy, 50 steps.
func Mirrored4xA100() train.Config {
	return named("mirrored-4xa100", func(c *train.Config) {
		c.Batch, c.Precision, c.Optimizer, c.Steps = 1024, "mixed_float16", "momentum", 50
		c.GPUCount, c.Strategy = 4, "mirrored"
	})
}

// ResNet50A100 is resnet50-a100: ResNet-50 mixed_float16 with momentum, batch 256, one
// A100-40GB, 200 steps.
func ResNet50A100() train.Config {
	return named("resnet50-a100", func(c *train.Config) {
		c.Batch, c.Precision, c.Optimizer, c.Steps = 256, "mixed_float16", "momentum", 200
	})
}

// BertBaseH200 is bert-base-h200: BERT-Base with Adam, mixed_bfloat16, batch 64, one H200,
// memory growth.
func BertBaseH200() train.Config {
	return named("bert-base-h200", func(c *train.Config) {
		c.Model, c.Precision, c.Optimizer, c.GPU, c.Memory.Growth = "bert-base", "mixed_bfloat16", "adam", "h200", ptr(true)
	})
}

// Autotuned sets the map's parallelism and the prefetch to tf.data.AUTOTUNE
// (input.map.parallel_calls=autotune, input.prefetch=autotune), on the input's defaults
// (train.DefaultInput) where c has no input.
func Autotuned(c train.Config) train.Config {
	in := train.DefaultInput()
	if c.Input != nil {
		in = *c.Input
	}
	in.ParallelCalls, in.Prefetch = train.Autotune, train.Autotune
	c.Input = &in
	return c
}

// Steps returns c simulating n steps.
func Steps(c train.Config, n int) train.Config {
	c.Steps = n
	return c
}

func ptr[T any](v T) *T { return &v }
