package analysis

import (
	"context"
	"fmt"
	"math"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/internal/units"
	"github.com/gpusim/gpusim/train"
)

// GPUsOptions shapes the GPU-count search.
type GPUsOptions struct {
	// Throughput is the target in samples per second.
	Throughput float64
	// MaxGPUs is the most GPUs tried (hardware.count).
	MaxGPUs int
	// PerGPUBatch fixes each replica's batch (weak scaling: the global batch grows with the
	// count); GlobalBatch fixes the global batch (strong scaling: each replica's share shrinks).
	// At most one may be set; neither means weak scaling with the scenario's batch per GPU
	// (its batch divided by its replicas).
	PerGPUBatch, GlobalBatch int
	// Steps is the updates each count simulates (0 = the scenario's).
	Steps int
	// Jobs is how many counts run at once; the result does not depend on it.
	Jobs int
	// Run simulates one configuration (nil = train.Run).
	Run RunFunc
	// Training, when DatasetSize > 0, gives every trial its time to train.
	Training Training
	// Confidence, when above 0, is the probability the answer must reach the target with: a
	// count reaches it when the Confidence lower bound of its throughput does (the simulated
	// throughput times the 1-Confidence quantile of the validation residuals like it,
	// uncertainty.go). 0 compares the simulated throughput itself.
	Confidence float64
	// Uncertainty gives the residuals (nil: ShippedUncertainty).
	Uncertainty *Uncertainty
}

// GPUTrial is one simulated GPU count.
type GPUTrial struct {
	GPUs int `json:"gpus"`
	// Nodes is the hosts the GPUs sit on (1 within one box); Strategy the strategy.name run.
	Nodes       int    `json:"nodes"`
	Strategy    string `json:"strategy"`
	Phase       string `json:"phase"`
	GlobalBatch int    `json:"global_batch"`
	// ReplicaBatch is the first replica's share of the global batch.
	ReplicaBatch int `json:"replica_batch"`
	// Throughput (samples/s) and StepTime (median, seconds); 0 after an OOM.
	Throughput float64 `json:"throughput_samples_per_s"`
	StepTime   float64 `json:"step_time_s"`
	// Efficiency is Result.ScalingEfficiency: the throughput over GPUs times that of one GPU
	// running the per-replica batch alone (Scaling; 1 for one GPU).
	Efficiency float64 `json:"scaling_efficiency"`
	// AllReduceTime is the median all-reduce per update (seconds); InputStall the fraction of
	// the run spent waiting for tf.data; Bound Diagnose's verdict.
	AllReduceTime float64 `json:"allreduce_time_s"`
	InputStall    float64 `json:"input_stall_fraction"`
	Bound         string  `json:"bound,omitempty"`
	PeakBytes     int64   `json:"peak_bytes_in_use"`
	OOM           *OOM    `json:"oom,omitempty"`
	// ThroughputInterval is Throughput's 80% prediction interval (absent after an OOM).
	ThroughputInterval *Interval `json:"throughput_samples_per_s_interval,omitempty"`
	// ThroughputAtConfidence is the throughput reached with GPUsOptions.Confidence (absent
	// without one).
	ThroughputAtConfidence float64 `json:"throughput_at_confidence,omitempty"`
	// Reaches says Throughput (ThroughputAtConfidence with a confidence) >= the target.
	Reaches bool `json:"reaches"`
	// ReachConfidence is the probability, from the validation residuals like the run, that
	// the real throughput reaches the target (Uncertainty.Probability; absent after an OOM).
	// ReachConfidenceBound is BoundAtLeast or BoundAtMost where the target lies outside the
	// residuals' range and the pool's size caps what it can say.
	ReachConfidence      float64 `json:"reach_confidence,omitempty"`
	ReachConfidenceBound string  `json:"reach_confidence_bound,omitempty"`
	// ConfidenceNote says when GPUsOptions.Confidence is past what the trial's residual pool
	// can tell apart (the report's ConfidenceNote is its fit's).
	ConfidenceNote string `json:"-"`
	// TrainSeconds is the time to train GPUsOptions.Training at StepTime (0 when not asked
	// or after an OOM), TrainSecondsInterval its 80% prediction interval.
	TrainSeconds         float64   `json:"train_seconds,omitempty"`
	TrainSecondsInterval *Interval `json:"train_seconds_interval,omitempty"`
}

// GPUsReport is the answer of GPUs.
type GPUsReport struct {
	Target float64 `json:"target_samples_per_s"`
	// Scaling is "weak" (fixed per-GPU batch) or "strong" (fixed global batch); Batch is the
	// fixed one.
	Scaling string `json:"scaling"`
	Batch   int    `json:"batch"`
	// GPUs is the fewest GPUs found to reach Target (0 = unreachable within MaxGPUs); Fit its
	// trial.
	GPUs int       `json:"gpus"`
	Fit  *GPUTrial `json:"fit,omitempty"`
	// MaxGPUs is the largest count that was allowed (for strong scaling at most the global
	// batch: every replica needs a sample).
	MaxGPUs int `json:"max_gpus"`
	// Reason says why Target is out of reach (empty when reached).
	Reason string `json:"reason,omitempty"`
	// Trials is every count simulated, in increasing GPUs.
	Trials []GPUTrial `json:"trials"`
	// Input is where the batches come from (InputAssumption): synthetic input is an
	// assumption the answer rests on.
	Input string `json:"input"`
	// Training is the job whose time to train each trial reports (absent when not asked).
	Training *Training `json:"training,omitempty"`
	// Confidence is GPUsOptions.Confidence (absent when 0).
	Confidence float64 `json:"confidence,omitempty"`
	// ConfidenceNote says when Confidence is past what the answer's residual pool can tell
	// apart (n rows: n/(n+1)), so that the answer rests on the pool's extreme residual.
	ConfidenceNote string `json:"confidence_note,omitempty"`
}

// GPUs finds the fewest GPUs (hardware.count with strategy.name=mirrored) whose simulated
// throughput reaches o.Throughput: the counts 1, 2, 4, ... and o.MaxGPUs (Jobs at a time, the
// counts past the first that reaches dropped so that the result does not depend on Jobs), then
// bisection between the last count short of the target and the first that reaches it. It
// assumes throughput grows with the count between those two; every count tried is reported.
//
// Everything of base is kept but the GPU count, the strategy, the batch and (when o.Steps > 0)
// the steps. When no count reaches the target, Reason says why from the best trial: every count
// OOMs, the run is input-bound (tf.data feeds fewer samples than the GPUs could take),
// all-reduce bound (communication takes a large share of the step, efficiency falls), the
// throughput peaked at a smaller count, or it is compute-bound and needs more GPUs than
// MaxGPUs.
func GPUs(ctx context.Context, base train.Config, o GPUsOptions) (*GPUsReport, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Uncertainty == nil {
		o.Uncertainty = ShippedUncertainty()
	}
	rep := newGPUsReport(base, o)
	// box is how many GPUs one host holds (0: any count on one host); counts above it are
	// whole boxes.
	box, err := boxSize(base)
	if err != nil {
		return nil, err
	}
	if box > 0 && rep.MaxGPUs > box {
		rep.MaxGPUs -= rep.MaxGPUs % box
	}
	// Every count of a weak scaling search has the same one-GPU baseline: simulated once.
	s := &gpuSearch{ctx: ctx, base: base, o: o, rep: rep, box: box, sess: NewSession(o.Run)}
	trials, short, reach, err := s.scan(gpuLadder(rep.MaxGPUs))
	if err != nil {
		return nil, err
	}
	trials, reach, err = s.bisect(trials, short, reach)
	if err != nil {
		return nil, err
	}
	sortTrials(trials)
	rep.Trials = trials
	if reach != 0 {
		rep.GPUs = reach
		for i := range trials {
			if trials[i].GPUs == reach {
				t := trials[i]
				rep.Fit = &t
				rep.ConfidenceNote = t.ConfidenceNote
			}
		}
		return rep, nil
	}
	rep.Reason = unreachable(rep, o.Throughput)
	return rep, nil
}

// newGPUsReport is the report before any trial: the target and confidence, the scaling and its fixed batch
// (the scenario's batch per replica unless o gives one), the count limit and the training job.
func newGPUsReport(base train.Config, o GPUsOptions) *GPUsReport {
	rep := &GPUsReport{Target: o.Throughput, Scaling: "weak", MaxGPUs: o.MaxGPUs, Input: InputAssumption(base), Confidence: o.Confidence}
	if o.Training.DatasetSize > 0 {
		tr := o.Training
		rep.Training = &tr
	}
	switch {
	case o.GlobalBatch > 0:
		rep.Scaling, rep.Batch = "strong", o.GlobalBatch
		rep.MaxGPUs = min(rep.MaxGPUs, o.GlobalBatch)
	case o.PerGPUBatch > 0:
		rep.Batch = o.PerGPUBatch
	default:
		replicas := 1
		if base.MultiReplica() {
			replicas = max(base.GPUCount, 1) * base.NodeCount()
		}
		rep.Batch = max(base.Batch/replicas, 1)
	}
	return rep
}

// gpuLadder is the scan's counts: 1, 2, 4, ... below maxGPUs, then maxGPUs.
func gpuLadder(maxGPUs int) []int {
	var ladder []int
	for n := 1; ; n *= 2 {
		if n >= maxGPUs {
			return append(ladder, maxGPUs)
		}
		ladder = append(ladder, n)
		if n > maxGPUs/2 { // the next doubling passes the maximum (and could overflow)
			return append(ladder, maxGPUs)
		}
	}
}

// gpuSearch simulates the counts GPUs tries, sharing one session.
type gpuSearch struct {
	ctx  context.Context
	base train.Config
	o    GPUsOptions
	rep  *GPUsReport
	box  int
	sess *Session
}

// scan simulates the ladder o.Jobs counts at a time until a count reaches the target; the
// counts after it in its wave are dropped so that the result does not depend on o.Jobs. short
// is the last count short of the target, reach the first that reaches it (0: none).
func (s *gpuSearch) scan(ladder []int) (trials []GPUTrial, short, reach int, err error) {
	jobs := max(s.o.Jobs, 1)
	for start := 0; start < len(ladder) && reach == 0; start += jobs {
		wave, err := s.try(ladder[start:min(start+jobs, len(ladder))], PhaseScan)
		if err != nil {
			return nil, 0, 0, err
		}
		for _, t := range wave {
			trials = append(trials, t)
			if t.Reaches {
				reach = t.GPUs
				break
			}
			short = t.GPUs
		}
	}
	return trials, short, reach, nil
}

// bisect narrows (short, reach) to adjacent counts (whole boxes above one box), appending
// each trial.
func (s *gpuSearch) bisect(trials []GPUTrial, short, reach int) ([]GPUTrial, int, error) {
	box := s.box
	for reach != 0 && reach-short > 1 && !(box > 0 && short >= box && reach-short <= box) {
		mid := short + (reach-short)/2
		if box > 0 && mid > box {
			mid -= mid % box
		}
		ts, err := s.try([]int{mid}, PhaseBinary)
		if err != nil {
			return nil, 0, err
		}
		trials = append(trials, ts[0])
		if ts[0].Reaches {
			reach = mid
		} else {
			short = mid
		}
	}
	return trials, reach, nil
}

// try simulates counts, o.Jobs at a time, in order.
func (s *gpuSearch) try(counts []int, phase string) ([]GPUTrial, error) {
	out := make([]GPUTrial, len(counts))
	err := runAll(s.ctx, len(counts), s.o.Jobs, func(i int) error {
		t, err := s.trial(counts[i], phase)
		out[i] = t
		return err
	})
	return out, err
}

// config is base with n GPUs: mirrored (or Horovod), whole boxes over the network beyond one
// box, the report's batch (times n for weak scaling) and o.Steps.
func (s *gpuSearch) config(n int) train.Config {
	cfg := s.base
	cfg.GPUCount, cfg.Strategy, cfg.Nodes = n, "mirrored", 0
	if s.base.Strategy == "horovod" {
		cfg.Strategy = "horovod"
	}
	if s.box > 0 && n > s.box {
		// Beyond one box: whole boxes, one worker each (MultiWorkerMirroredStrategy over
		// the hosts' network, NCCL's hierarchical rings), hardware.count per host.
		cfg.Nodes, cfg.GPUCount = n/s.box, s.box
		if cfg.Strategy == "mirrored" {
			cfg.Strategy = "multi_worker_mirrored"
		}
	}
	cfg.Batch = s.rep.Batch
	if s.rep.Scaling == "weak" {
		cfg.Batch = s.rep.Batch * n
	}
	if s.o.Steps > 0 {
		cfg.Steps = s.o.Steps
	}
	return cfg
}

// trial simulates n GPUs and measures the run.
func (s *gpuSearch) trial(n int, phase string) (GPUTrial, error) {
	cfg := s.config(n)
	res, err := s.sess.Run(s.ctx, cfg)
	if err != nil {
		return GPUTrial{}, errTrial("gpus", n, err)
	}
	m := measureResult(res)
	t := GPUTrial{GPUs: n, Nodes: cfg.NodeCount(), Strategy: cfg.Strategy, Phase: phase, GlobalBatch: cfg.Batch, ReplicaBatch: m.replicaBatch,
		Throughput: m.throughput, StepTime: m.stepTime, Efficiency: m.eff, AllReduceTime: m.allReduce,
		InputStall: m.inputStall, Bound: m.bound, PeakBytes: m.peak, OOM: m.oom}
	if t.OOM != nil {
		t.Throughput, t.StepTime = 0, 0
	}
	if err := s.o.trialIntervals(&t, cfg, res, s.rep.Training); err != nil {
		return GPUTrial{}, errTrial("gpus", n, err)
	}
	return t, nil
}

// check refuses options GPUs cannot search with.
func (o GPUsOptions) check() error {
	if !(o.Throughput > 0) || math.IsInf(o.Throughput, 0) {
		return fmt.Errorf("capacity: throughput %v: want a positive number of samples/s", o.Throughput)
	}
	if o.MaxGPUs < 1 {
		return fmt.Errorf("capacity: max gpus %d: want at least 1", o.MaxGPUs)
	}
	if o.PerGPUBatch < 0 || o.GlobalBatch < 0 {
		return fmt.Errorf("capacity: batch %d/%d: want a positive batch", o.PerGPUBatch, o.GlobalBatch)
	}
	if o.PerGPUBatch > 0 && o.GlobalBatch > 0 {
		return fmt.Errorf("capacity: per-GPU batch %d and global batch %d: give one", o.PerGPUBatch, o.GlobalBatch)
	}
	if o.Steps < 0 {
		return fmt.Errorf("capacity: steps %d: want at least 0", o.Steps)
	}
	if o.Confidence < 0 || o.Confidence >= 1 {
		return fmt.Errorf("capacity: confidence %v: want a probability below 1 (0.9), or 0 for the simulated figure", o.Confidence)
	}
	if o.Training.DatasetSize < 0 || o.Training.Epochs < 0 || (o.Training.DatasetSize > 0) != (o.Training.Epochs > 0) {
		return fmt.Errorf("capacity: dataset size %d, epochs %d: give both, positive", o.Training.DatasetSize, o.Training.Epochs)
	}
	return nil
}

// trialIntervals fills t's intervals, its throughput at o.Confidence, whether it reaches the
// target and its time to train.
func (o GPUsOptions) trialIntervals(t *GPUTrial, cfg train.Config, res *Result, tr *Training) error {
	if t.OOM != nil {
		return nil
	}
	reach := t.Throughput
	k, err := KeyOf(cfg, res.Result)
	if err != nil {
		return err
	}
	// The real throughput is Throughput*exp(e), e the residual: it reaches the target when
	// e >= log(target/Throughput).
	if p, bound, ok := o.Uncertainty.Probability(k, math.Log(o.Throughput/t.Throughput)); ok && t.Throughput > 0 && !math.IsInf(t.Throughput, 0) {
		t.ReachConfidence = 1 - p
		switch bound {
		case BoundAtMost:
			t.ReachConfidenceBound = BoundAtLeast
		case BoundAtLeast:
			t.ReachConfidenceBound = BoundAtMost
		}
	}
	if o.Confidence > 0 {
		if _, hi, basis := o.Uncertainty.Supported(k); o.Confidence > hi {
			t.ConfidenceNote = fmt.Sprintf("the residuals (%s) tell confidences up to %.0f%%: at %.0f%% the answer rests on the largest miss among them", basis, 100*hi, 100*o.Confidence)
		}
		q, ok := o.Uncertainty.Quantile(k, 1-o.Confidence)
		if !ok {
			return fmt.Errorf("capacity: no validation residuals to answer at confidence %g", o.Confidence)
		}
		reach = t.Throughput * math.Exp(q)
		t.ThroughputAtConfidence = reach
	}
	t.Reaches = reach >= o.Throughput
	iv, err := o.Uncertainty.Intervals(cfg, res.Result, IntervalLevel)
	if err != nil {
		return err
	}
	if iv != nil && iv.SpeedBasis != "" {
		tp := iv.Throughput
		t.ThroughputInterval = &tp
	}
	if tr != nil {
		t.TrainSeconds = tr.Seconds(t.GlobalBatch, t.StepTime)
		if iv != nil && iv.SpeedBasis != "" {
			t.TrainSecondsInterval = &Interval{tr.Seconds(t.GlobalBatch, iv.StepTime[0]), tr.Seconds(t.GlobalBatch, iv.StepTime[1])}
		}
	}
	return nil
}

// boxSize is the GPUs one host of base's host profile holds (hw.Host.GPUs; 0 = any count).
func boxSize(base train.Config) (int, error) {
	if base.Host == "" {
		return 0, nil
	}
	h, err := hw.LookupHost(base.Host)
	if err != nil {
		return 0, &train.FieldError{Field: "Host", Err: err}
	}
	return h.GPUs, nil
}

func sortTrials(ts []GPUTrial) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].GPUs < ts[j-1].GPUs; j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

// Thresholds of the unreachable verdict.
const (
	// peakedRatio: the largest count is below this fraction of the best throughput seen at a
	// smaller count, so adding GPUs made it slower (gpusim's choice of "clearly lower").
	peakedRatio = 0.98
)

// unreachable says why no count in rep.Trials reached target.
func unreachable(rep *GPUsReport, target float64) string {
	var best, last *GPUTrial
	for i := range rep.Trials {
		t := &rep.Trials[i]
		if t.OOM != nil {
			continue
		}
		if best == nil || t.Throughput > best.Throughput {
			best = t
		}
		if last == nil || t.GPUs > last.GPUs {
			last = t
		}
	}
	if best == nil {
		t := rep.Trials[len(rep.Trials)-1]
		return fmt.Sprintf("every count tried runs out of memory (at %d GPUs, replica batch %d: %s)",
			t.GPUs, t.ReplicaBatch, t.OOM.Message)
	}
	head := fmt.Sprintf("%.0f samples/s is out of reach with at most %d GPUs: the best is %.0f samples/s at %d GPUs",
		target, rep.MaxGPUs, best.Throughput, best.GPUs)
	if rep.Confidence > 0 {
		head = fmt.Sprintf("%.0f samples/s is out of reach at %.0f%% confidence with at most %d GPUs: the best is %.0f samples/s at %d GPUs (%.0f at %.0f%% confidence)",
			target, 100*rep.Confidence, rep.MaxGPUs, best.Throughput, best.GPUs, best.ThroughputAtConfidence, 100*rep.Confidence)
	}
	var why string
	switch {
	case last.Throughput < peakedRatio*best.Throughput:
		why = fmt.Sprintf("throughput peaks at %d GPUs and falls to %.0f samples/s at %d (scaling efficiency %.0f%%)",
			best.GPUs, last.Throughput, last.GPUs, 100*last.Efficiency)
	case last.Bound == string(InputBound):
		why = fmt.Sprintf("input bound: at %d GPUs the step waits for tf.data %.0f%% of the run; more GPUs do not feed it (gpusim run lists the tf.data remedies)",
			last.GPUs, 100*last.InputStall)
	case last.Bound == string(CommunicationBound):
		why = fmt.Sprintf("all-reduce bound: at %d GPUs the all-reduce takes %s of the %s step (scaling efficiency %.0f%%)",
			last.GPUs, units.FormatSeconds(last.AllReduceTime), units.FormatSeconds(last.StepTime), 100*last.Efficiency)
	case rep.Scaling == "strong" && rep.MaxGPUs == rep.Batch:
		why = fmt.Sprintf("the global batch %d gives each of %d GPUs one sample; raise --global-batch", rep.Batch, rep.MaxGPUs)
	default:
		per := last.Throughput / float64(last.GPUs)
		why = fmt.Sprintf("compute bound: %.0f samples/s per GPU at %d GPUs (scaling efficiency %.0f%%); about %d GPUs would be needed at that rate",
			per, last.GPUs, 100*last.Efficiency, int(math.Ceil(target/per)))
	}
	return head + "; " + why
}
