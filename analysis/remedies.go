package analysis

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/gpusim/gpusim/pipeline"
	"github.com/gpusim/gpusim/train"
)

// Change is one remedy for an input-bound run: a change to its train.Config, as the fields it
// sets. The fields are the change's one representation: Applied makes it, and
// scenarios.SetLines writes it as the --set overrides a user would give.
type Change struct {
	// Name says what it does ("map(num_parallel_calls=AUTOTUNE)").
	Name string
	// Changes are the fields it sets, in order.
	Changes []FieldChange
}

// Candidates returns the changes worth trying on a run of cfg whose tf.data pipeline is pc
// (train.InputPipeline), in the seed guide's order: parallel map, prefetch, both, cache
// (memory if the dataset fits half the host's RAM, else a file), a batch twice as large.
// Changes already in force are left out.
func Candidates(pc pipeline.Config) []Change {
	var out []Change
	par := Change{Name: "map(num_parallel_calls=AUTOTUNE)", Changes: []FieldChange{{"Input.ParallelCalls", autotune}}}
	pre := Change{Name: "prefetch(AUTOTUNE)", Changes: []FieldChange{{"Input.Prefetch", autotune}}}
	needPar := pc.ParallelCalls != pipeline.Autotune && int(pc.ParallelCalls) < pc.Host.Cores-pc.Host.BusyCores
	needPre := pc.Prefetch != pipeline.Autotune && pc.Prefetch < 2
	if needPar {
		out = append(out, par)
	}
	if needPre {
		out = append(out, pre)
	}
	if needPar && needPre {
		out = append(out, Change{Name: par.Name + " + " + pre.Name, Changes: slices.Concat(par.Changes, pre.Changes)})
	}
	if pc.Cache == "" || pc.Cache == "none" {
		if float64(pc.Records)*float64(pc.ElementBytes) <= 0.5*float64(pc.Host.MemoryBytes) {
			out = append(out, Change{Name: "cache() in memory", Changes: []FieldChange{{"Input.Cache", "memory"}}})
		} else {
			out = append(out, Change{Name: "cache(filename) on local disk", Changes: []FieldChange{{"Input.Cache", "file"}}})
		}
	}
	// pc.Batch is the dataset's batch: one global micro-batch.
	out = append(out, Change{Name: "batch twice as large", Changes: []FieldChange{{"Batch", strconv.Itoa(2 * pc.Batch)}}})
	return out
}

// Applied returns cfg with ch made, sharing nothing that ch changes with cfg (Input is its own
// copy).
func (ch Change) Applied(cfg train.Config) (train.Config, error) {
	if cfg.Input != nil {
		in := *cfg.Input
		cfg.Input = &in
	}
	for _, fc := range ch.Changes {
		if err := fc.apply(&cfg); err != nil {
			return train.Config{}, fmt.Errorf("%s: %w", ch.Name, err)
		}
	}
	return cfg, nil
}

// Remedy is one change that may feed a starving GPU, re-simulated.
type Remedy struct {
	// Name says what it does ("map(num_parallel_calls=AUTOTUNE)"); Changes are the fields
	// it sets (Change.Changes). Set is them as scenario overrides (gpusim run --set ...), for
	// display: scenarios writes it (Scenario.Remedies), as analysis knows no keys.
	Name    string
	Changes []FieldChange
	Set     []string
	// Throughput (at the median step) and GPUUtilization of the run with the change.
	// RunThroughput is the samples of the whole run over its time (RunThroughput): where
	// epochs differ, as with a cache the first epoch fills, it is what the change buys and
	// what ranks the remedies. Gain is RunThroughput's ratio to the run's, minus one. OOM says
	// the changed run ran out of memory (a larger batch).
	Throughput, RunThroughput, GPUUtilization, Gain float64
	OOM                                             bool
}

// RunThroughput is the samples a run trained over the time its steps took: every completed
// update's global batch over the sum of the step times (0 when no step completed). Unlike
// Result.Throughput, at the median step, it counts a slow first epoch (a cache being filled,
// XLA compiling) for as long as it lasts.
func RunThroughput(r *train.Result) float64 {
	var total float64
	for _, t := range r.StepTimes {
		total += t
	}
	if total <= 0 {
		return 0
	}
	return float64(r.GlobalBatch) * float64(len(r.StepTimes)) / total
}

// Remedies re-simulates the changes Candidates proposes for res, a run of cfg diagnosed
// input-bound, and stores them in res.Remedies, best first by whole-run throughput
// (RunThroughput; ties keep the candidates' order). Nothing is simulated unless the run has an input pipeline and is input-bound.
func (s *Session) Remedies(ctx context.Context, cfg train.Config, res *Result) error {
	if cfg.Input == nil || res.Diagnosis == nil || res.Diagnosis.Bound != InputBound {
		return nil
	}
	pc, err := train.InputPipeline(cfg, res.Replicas)
	if err != nil {
		return err
	}
	changes := Candidates(pc)
	out := make([]Remedy, 0, len(changes))
	for _, ch := range changes {
		changed, err := ch.Applied(cfg)
		if err != nil {
			return fmt.Errorf("re-simulate remedies: %w", err)
		}
		r, err := s.Simulate(ctx, changed)
		if err != nil {
			return fmt.Errorf("re-simulate remedies: %s: %w", ch.Name, err)
		}
		g := 0.0
		rt := RunThroughput(r)
		if base := RunThroughput(res.Result); base > 0 {
			g = rt/base - 1
		}
		out = append(out, Remedy{Name: ch.Name, Changes: ch.Changes, Throughput: r.Throughput, RunThroughput: rt,
			GPUUtilization: r.GPUUtilization, Gain: g, OOM: r.OOM != nil})
	}
	slices.SortStableFunc(out, func(a, b Remedy) int {
		switch {
		case a.RunThroughput > b.RunThroughput:
			return -1
		case a.RunThroughput < b.RunThroughput:
			return 1
		}
		return 0
	})
	res.Remedies = out
	return nil
}
