package analysis

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/gpusim/gpusim/train"
)

// Search phases of a trial.
const (
	PhaseExponential = "exponential" // doubling from the smallest batch until one OOMs
	PhaseBinary      = "binary"      // bisection between the last fit and the first OOM
	PhaseCheck       = "check"       // the batches just below the answer (BFC is not monotone)
	PhaseScan        = "scan"        // counts tried by GPUs' doubling
	PhaseConfidence  = "confidence"  // bisection below the answer for the batch that fits at a confidence
)

// MaxBatchOptions bounds and shapes the max-batch search.
type MaxBatchOptions struct {
	// Min and Max bound the global batch; Multiple is the step of the answer (every batch
	// tried is a multiple of it). The search tries Min rounded up to Multiple first.
	Min, Max, Multiple int
	// Steps is how many optimizer updates each trial simulates. Keras creates the optimizer
	// slots at the first applied update, so a batch that fits step 1 can OOM in step 2, the
	// first forward/backward pass with the slots resident; 3 steps cover that and one more
	// step of the pool in its steady layout. A trial of a mixed_float16 run whose loss scale
	// skipped updates is extended until two updates were applied (see MaxBatch).
	Steps int
	// Below is how many multiples just below the answer are re-checked: BFC's fragmentation
	// can make a smaller batch OOM where a larger one fits.
	Below int
	// Jobs is how many trials run at once (independent engines); the result does not depend
	// on it.
	Jobs int
	// Run simulates one configuration (nil = train.Run).
	Run RunFunc
	// Confidence, when above 0, also finds the largest batch that fits with that probability:
	// one whose peak in use times the Confidence quantile of the peak residuals like it
	// (uncertainty.go) stays within the limit. 0 answers the simulated fit alone.
	Confidence float64
	// Uncertainty gives the residuals (nil: ShippedUncertainty).
	Uncertainty *Uncertainty
}

// DefaultMaxBatchOptions returns batches 1 to 65536 in multiples of 8, 3 steps, 8 batches
// checked below the answer, one job.
func DefaultMaxBatchOptions() MaxBatchOptions {
	return MaxBatchOptions{Min: 1, Max: 65536, Multiple: 8, Steps: 3, Below: 8, Jobs: 1}
}

// BatchTrial is one simulated batch.
type BatchTrial struct {
	Batch int    `json:"batch"`
	Phase string `json:"phase"`
	// Steps is how many updates were simulated (more than MaxBatchOptions.Steps when the
	// loss scale skipped updates); Fits says none of them ran out of memory.
	Steps int  `json:"steps"`
	Fits  bool `json:"fits"`
	// PeakBytes is the highest bytes in use on any replica's GPU, PoolBytes its allocator's
	// largest pool and LimitBytes its limit.
	PeakBytes  int64 `json:"peak_bytes_in_use"`
	PoolBytes  int64 `json:"peak_pool_bytes"`
	LimitBytes int64 `json:"bytes_limit"`
	// FirstStepPeakBytes and SteadyPeakBytes split PeakBytes (their larger) into step 1, with
	// its one-time allocations (cuDNN's autotune scratch, slot creation), and the steps after;
	// a batch fits only when both do.
	FirstStepPeakBytes int64 `json:"first_step_peak_bytes"`
	SteadyPeakBytes    int64 `json:"steady_peak_bytes"`
	// StepTime (median, seconds) and Throughput (samples/s) of the completed updates (0 when
	// none completed).
	StepTime   float64 `json:"step_time_s"`
	Throughput float64 `json:"throughput_samples_per_s"`
	OOM        *OOM    `json:"oom,omitempty"`
	// FitConfidence is the probability, from the peak residuals like the run, that the real
	// peak stays within LimitBytes (Uncertainty.Probability; absent after an OOM), with
	// FitConfidenceBound where the pool's size caps it. PeakAtConfidence is the peak's
	// MaxBatchOptions.Confidence upper bound (absent without one).
	FitConfidence      float64 `json:"fit_confidence,omitempty"`
	FitConfidenceBound string  `json:"fit_confidence_bound,omitempty"`
	PeakAtConfidence   int64   `json:"peak_bytes_at_confidence,omitempty"`
	// ConfidenceNote says when the confidence is past what the trial's peak residual pool can
	// tell apart (the report's ConfidenceNote is its answer's).
	ConfidenceNote string `json:"-"`
}

// fitsAt says t fits with MaxBatchOptions.Confidence.
func (t *BatchTrial) fitsAt() bool { return t.Fits && t.PeakAtConfidence <= t.LimitBytes }

// MaxBatchReport is the answer of MaxBatch.
type MaxBatchReport struct {
	// Batch is the largest batch found to fit (0 when even the smallest OOMs); Fit its trial.
	Batch int         `json:"max_batch"`
	Fit   *BatchTrial `json:"fit,omitempty"`
	// FirstOOM is the smallest batch above Batch that was found to OOM (nil when Max fits).
	FirstOOM *BatchTrial `json:"first_oom,omitempty"`
	// AtMax says Max (rounded down to Multiple) fits: the real limit is higher.
	AtMax bool `json:"at_max"`
	// NotMonotone lists the batches below Batch that OOM although Batch fits (fragmentation).
	NotMonotone []BatchTrial `json:"not_monotone,omitempty"`
	// Trials is every batch simulated, in search order.
	Trials []BatchTrial `json:"trials"`
	// Min, Max and Multiple are the search's bounds after rounding to Multiple.
	Min      int `json:"min"`
	Max      int `json:"max"`
	Multiple int `json:"multiple"`
	// Confidence is MaxBatchOptions.Confidence (absent when 0); ConfidenceBatch the largest
	// batch found to fit with it (0: none) and ConfidenceFit its trial; ConfidenceNote says
	// when Confidence is past what the peak residuals can tell apart.
	Confidence      float64     `json:"confidence,omitempty"`
	ConfidenceBatch int         `json:"max_batch_at_confidence,omitempty"`
	ConfidenceFit   *BatchTrial `json:"fit_at_confidence,omitempty"`
	ConfidenceNote  string      `json:"confidence_note,omitempty"`
}

// maxBatch holds one search's state.
type maxBatch struct {
	ctx  context.Context
	base train.Config
	o    MaxBatchOptions
	run  RunFunc
	seen map[int]int // batch -> index in rep.Trials
	rep  *MaxBatchReport
}

// MaxBatch finds the largest global batch (a multiple of o.Multiple in [o.Min, o.Max]) for which
// base does not run out of memory in o.Steps updates: doubling from the smallest batch until
// one OOMs (Jobs batches at a time; the trials past the first OOM are dropped so that the
// result does not depend on Jobs), then bisection between the last fit and the first OOM, then
// the o.Below batches just below the answer, reported in NotMonotone when they OOM.
//
// Everything of base is kept but Batch and Steps. A trial "fits" when no allocation failed;
// under mixed_float16 a trial whose loss scale skipped updates is re-simulated with more steps
// until at least two updates were applied (the first creates the slots, the step after it
// runs with them resident), at most 4 times. An error of train.Run (a configuration TF
// rejects) ends the search, wrapped with the batch.
func MaxBatch(ctx context.Context, base train.Config, o MaxBatchOptions) (*MaxBatchReport, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Uncertainty == nil {
		o.Uncertainty = ShippedUncertainty()
	}
	lo := (o.Min + o.Multiple - 1) / o.Multiple * o.Multiple
	hi := o.Max / o.Multiple * o.Multiple
	if hi < lo {
		return nil, fmt.Errorf("capacity: no multiple of %d between min %d and max %d", o.Multiple, o.Min, o.Max)
	}
	s := &maxBatch{ctx: ctx, base: base, o: o, run: runFunc(o.Run), seen: map[int]int{},
		rep: &MaxBatchReport{Min: lo, Max: hi, Multiple: o.Multiple, Confidence: o.Confidence}}

	// Exponential phase: lo, 2lo, 4lo, ... and hi, in waves of Jobs.
	ladder := doublings(lo, hi)
	fit, oom := 0, 0
	for start := 0; start < len(ladder) && oom == 0; start += max(o.Jobs, 1) {
		wave := ladder[start:min(start+max(o.Jobs, 1), len(ladder))]
		trials, err := s.try(wave, PhaseExponential)
		if err != nil {
			return nil, err
		}
		for _, t := range trials {
			s.keep(t)
			if !t.Fits {
				oom = t.Batch
				break
			}
			fit = t.Batch
		}
	}
	if fit == 0 {
		s.rep.FirstOOM = s.get(lo)
		return s.rep, nil
	}
	// Binary phase: fit fits, oom OOMs (0 = hi fits).
	if oom == 0 {
		s.rep.AtMax = true
	}
	for oom != 0 && oom-fit > o.Multiple {
		mid := fit + (oom-fit)/o.Multiple/2*o.Multiple
		trials, err := s.try([]int{mid}, PhaseBinary)
		if err != nil {
			return nil, err
		}
		s.keep(trials[0])
		if trials[0].Fits {
			fit = mid
		} else {
			oom = mid
		}
	}
	s.rep.Batch, s.rep.Fit = fit, s.get(fit)
	if oom != 0 {
		s.rep.FirstOOM = s.get(oom)
	}
	// Check phase: the batches just below the answer.
	var below []int
	for k := 1; k <= o.Below && fit-k*o.Multiple >= lo; k++ {
		if b := fit - k*o.Multiple; s.get(b) == nil {
			below = append(below, b)
		}
	}
	trials, err := s.try(below, PhaseCheck)
	if err != nil {
		return nil, err
	}
	for _, t := range trials {
		s.keep(t)
	}
	for _, t := range s.rep.Trials {
		if t.Batch < fit && !t.Fits {
			s.rep.NotMonotone = append(s.rep.NotMonotone, t)
		}
	}
	sort.Slice(s.rep.NotMonotone, func(i, j int) bool { return s.rep.NotMonotone[i].Batch < s.rep.NotMonotone[j].Batch })
	if o.Confidence > 0 {
		if err := s.atConfidence(lo, fit); err != nil {
			return nil, err
		}
	}
	return s.rep, nil
}

// check refuses options the search cannot run with.
func (o MaxBatchOptions) check() error {
	if o.Multiple < 1 {
		return fmt.Errorf("capacity: multiple %d: want at least 1", o.Multiple)
	}
	if o.Min < 1 {
		return fmt.Errorf("capacity: min %d: want at least 1", o.Min)
	}
	if o.Steps < 1 {
		return fmt.Errorf("capacity: steps %d: want at least 1", o.Steps)
	}
	if o.Below < 0 {
		return fmt.Errorf("capacity: below %d: want at least 0", o.Below)
	}
	if o.Confidence < 0 || o.Confidence >= 1 {
		return fmt.Errorf("capacity: confidence %v: want a probability below 1 (0.9), or 0 for the simulated fit", o.Confidence)
	}
	return nil
}

// doublings is the exponential phase's batches: lo, 2lo, 4lo, ... below hi, then hi.
func doublings(lo, hi int) []int {
	var ladder []int
	for b := lo; ; b *= 2 {
		if b >= hi {
			return append(ladder, hi)
		}
		ladder = append(ladder, b)
		if b > hi/2 { // the next doubling passes hi (and could overflow)
			return append(ladder, hi)
		}
	}
}

// atConfidence finds the largest batch up to fit (the simulated answer) that fits at
// o.Confidence: bisection between the largest batch tried that does and the smallest above
// it that does not, assuming the peak grows with the batch between them. lo was tried
// first and fits, so when nothing tried fits at the confidence, lo does not: no answer.
func (s *maxBatch) atConfidence(lo, fit int) error {
	good, bad := 0, fit+s.o.Multiple
	for _, t := range s.rep.Trials {
		if t.Batch <= fit && t.fitsAt() && t.Batch > good {
			good = t.Batch
		}
	}
	for _, t := range s.rep.Trials {
		if t.Batch > good && !t.fitsAt() && t.Batch < bad {
			bad = t.Batch
		}
	}
	for good != 0 && bad-good > s.o.Multiple {
		mid := good + (bad-good)/s.o.Multiple/2*s.o.Multiple
		trials, err := s.try([]int{mid}, PhaseConfidence)
		if err != nil {
			return err
		}
		s.keep(trials[0])
		if trials[0].fitsAt() {
			good = mid
		} else {
			bad = mid
		}
	}
	if good != 0 {
		s.rep.ConfidenceBatch, s.rep.ConfidenceFit = good, s.get(good)
		s.rep.ConfidenceNote = s.rep.ConfidenceFit.ConfidenceNote
	} else if t := s.get(lo); t != nil {
		s.rep.ConfidenceNote = t.ConfidenceNote
	}
	return nil
}

func (s *maxBatch) keep(t BatchTrial) {
	s.seen[t.Batch] = len(s.rep.Trials)
	s.rep.Trials = append(s.rep.Trials, t)
}

// get returns a copy of the trial of batch, nil when it was not simulated.
func (s *maxBatch) get(batch int) *BatchTrial {
	i, ok := s.seen[batch]
	if !ok {
		return nil
	}
	t := s.rep.Trials[i]
	return &t
}

// try simulates the batches in parallel and returns their trials in the order given.
func (s *maxBatch) try(batches []int, phase string) ([]BatchTrial, error) {
	out := make([]BatchTrial, len(batches))
	err := runAll(s.ctx, len(batches), s.o.Jobs, func(i int) error {
		t, err := s.trial(batches[i], phase)
		out[i] = t
		return err
	})
	return out, err
}

// maxExtensions bounds the re-simulations of a trial whose loss scale skipped updates.
const maxExtensions = 4

func (s *maxBatch) trial(batch int, phase string) (BatchTrial, error) {
	cfg := s.base
	cfg.Batch, cfg.Steps = batch, s.o.Steps
	for ext := 0; ; ext++ {
		res, err := s.run(s.ctx, cfg)
		if err != nil {
			return BatchTrial{}, errTrial("batch", batch, err)
		}
		m := measureResult(&Result{Result: res})
		t := BatchTrial{Batch: batch, Phase: phase, Steps: cfg.Steps, Fits: m.oom == nil,
			PeakBytes: m.peak, PoolBytes: m.pool, LimitBytes: m.limit,
			FirstStepPeakBytes: m.firstPeak, SteadyPeakBytes: m.steadyPeak,
			StepTime: m.stepTime, Throughput: m.throughput, OOM: m.oom}
		if t.Fits && t.PeakBytes > 0 {
			if err := s.confidence(&t, cfg, res); err != nil {
				return BatchTrial{}, errTrial("batch", batch, err)
			}
		}
		// Two applied updates: the first created the slots, the last step ran with them.
		if !t.Fits || m.completed-m.skipped >= 2 || cfg.Steps < 2 || ext == maxExtensions {
			return t, nil
		}
		cfg.Steps += m.skipped + 1
	}
}

// confidence fills t's fit confidence and its peak at o.Confidence from the peak residuals
// like the run: the real peak is PeakBytes*exp(e), e the residual.
func (s *maxBatch) confidence(t *BatchTrial, cfg train.Config, res *train.Result) error {
	g, err := runGPU(cfg)
	if err != nil {
		return err
	}
	k := Key{Quantity: QuantityPeak, Arch: ArchOf(g), Mix: MixOf(res), MultiGPU: res.Replicas > 1}
	u := s.o.Uncertainty
	if p, bound, ok := u.Probability(k, math.Log(float64(t.LimitBytes)/float64(t.PeakBytes))); ok {
		t.FitConfidence, t.FitConfidenceBound = p, bound
	}
	if s.o.Confidence > 0 {
		q, ok := u.Quantile(k, s.o.Confidence)
		if !ok {
			return fmt.Errorf("capacity: no peak residuals to answer at confidence %g", s.o.Confidence)
		}
		t.PeakAtConfidence = int64(math.Ceil(float64(t.PeakBytes) * math.Exp(q)))
		if _, hi, basis := u.Supported(k); s.o.Confidence > hi {
			t.ConfidenceNote = fmt.Sprintf("the residuals (%s) tell confidences up to %.0f%%: at %.0f%% the answer rests on the largest miss among them", basis, 100*hi, 100*s.o.Confidence)
		}
	}
	return nil
}
