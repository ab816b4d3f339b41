package analysis

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/gpusim/gpusim/train"
)

// PlanOptions shapes a plan search.
type PlanOptions struct {
	Goal  Goal
	Space PlanSpace
	// Margin is the share of the allocator's limit a plan must leave free: it fits when its
	// peak in use is at most (1 - Margin) x bytes_limit (0.1 by default in the CLI).
	Margin float64
	// MinBatch and MaxBatch bound the global batch (0 = no bound); MaxNodes the hosts.
	MinBatch, MaxBatch, MaxNodes int
	// Training is the job time-to-train and cost are for (its samples and epochs).
	Training Training
	// Prices are $/GPU-hour by GPU profile name; the cost goal needs one for every GPU.
	Prices map[string]float64
	// BudgetDollars and BudgetSeconds, when > 0, drop the plans whose cost or time to train
	// exceeds them (dollars need Prices).
	BudgetDollars, BudgetSeconds float64
	// Top is how many plans the report ranks (5 when 0).
	Top int
	// Steps is the updates each simulation runs (0 = the base's).
	Steps int
	// Jobs is how many simulations run at once; the report does not depend on it.
	Jobs int
	// Run simulates one configuration (nil = train.Run).
	Run RunFunc
	// Uncertainty gives the residuals of the reported plans' intervals (nil:
	// ShippedUncertainty).
	Uncertainty *Uncertainty
	// Shard, when its Count is above 0, searches only the points of the space it owns (point
	// i belongs to shard i mod Count): MergePlanReports joins the shards' reports into the
	// plans the whole search ranks.
	Shard Shard
}

// PlanResult is one simulated plan.
type PlanResult struct {
	Rank  int       `json:"rank,omitempty"`
	Knobs PlanKnobs `json:"plan"`
	// Point is the plan's place in the space's enumeration order (-1: the base configuration,
	// which may lie outside the space); it breaks ties of Score, so that the ranking does not
	// depend on the order the plans were simulated in, nor on how the space was sharded.
	Point int `json:"point"`
	// Score is the goal's figure of merit, higher better (PlanOptions.score): samples/s,
	// minus the seconds or dollars to train, or for max-batch the global batch plus the
	// throughput / 1e9; 0 for a plan that does not fit.
	Score float64 `json:"score"`
	// Changes are what the plan changes in the base configuration.
	Changes []FieldChange `json:"changes"`
	// Fits says the run has no OOM and its peak in use leaves Margin of the limit free;
	// Feasible adds the budgets.
	Fits     bool `json:"fits"`
	Feasible bool `json:"feasible"`
	OOM      *OOM `json:"oom,omitempty"`
	// Throughput (samples/s) and StepTime (s) at the median step.
	Throughput     float64 `json:"throughput_samples_per_s"`
	StepTime       float64 `json:"step_time_s"`
	PeakBytes      int64   `json:"peak_bytes_in_use"`
	LimitBytes     int64   `json:"bytes_limit"`
	GPUUtilization float64 `json:"gpu_utilization"`
	InputStall     float64 `json:"input_stall_fraction"`
	AllReduceTime  float64 `json:"allreduce_time_s"`
	// Bound and Why are the diagnosis: what limits the run, and the evidence's first sentence.
	Bound string `json:"bound,omitempty"`
	Why   string `json:"why,omitempty"`
	// TrainSeconds is the time to train PlanOptions.Training; GPUHours, PricePerGPUHour and
	// Dollars its cost (GPUHours x PricePerGPUHour; 0 without a price).
	TrainSeconds    float64 `json:"train_seconds"`
	GPUHours        float64 `json:"gpu_hours"`
	PricePerGPUHour float64 `json:"price_per_gpu_hour,omitempty"`
	Dollars         float64 `json:"dollars,omitempty"`
	// The 80% prediction intervals (IntervalLevel) of the reported plans' figures, from the
	// validation residuals (Uncertainty.Intervals); nil where no residual pool answers, and
	// IntervalBasis says which pool did.
	ThroughputInterval   *Interval `json:"throughput_samples_per_s_interval,omitempty"`
	StepTimeInterval     *Interval `json:"step_time_s_interval,omitempty"`
	TrainSecondsInterval *Interval `json:"train_seconds_interval,omitempty"`
	DollarsInterval      *Interval `json:"dollars_interval,omitempty"`
	IntervalBasis        string    `json:"interval_basis,omitempty"`
	// Bounds are the cheap bounds the search ordered and pruned by.
	Bounds Bounds `json:"bounds"`

	// Config is the configuration simulated.
	Config train.Config `json:"-"`
	// result is the run of Config while the search holds it (the top plans found so far).
	result *train.Result
}

// PlanReport is the answer of Plan.
type PlanReport struct {
	Goal Goal `json:"goal"`
	// Space is the points of the space; OutOfRange those outside the global batch range
	// (or with an empty micro-batch); PrunedMemory those whose memory bound exceeds the GPU
	// with the margin; PrunedBudget those whose bound already breaks a budget; PrunedTime those
	// whose roofline bound cannot beat the Top-th plan simulated so far; PrunedCompute those
	// whose compute bound (train.ComputeTime, priced once per step plan) cannot; Simulated the rest.
	Space          int `json:"space"`
	OutOfRange     int `json:"out_of_range"`
	PrunedMemory   int `json:"pruned_memory"`
	PrunedBudget   int `json:"pruned_budget"`
	PrunedRoofline int `json:"pruned_roofline"`
	PrunedCompute  int `json:"pruned_compute"`
	Simulated      int `json:"simulated"`
	// Infeasible counts the simulated plans that ran out of memory, broke the margin or a budget.
	Infeasible int `json:"infeasible"`
	// Training is the job time to train and cost are for.
	Training Training `json:"training"`
	// Current is the base configuration as it is, simulated the same way.
	Current *PlanResult `json:"current"`
	// Plans are the best feasible plans, best first (at most Top).
	Plans []PlanResult `json:"plans"`
}

// candidate is a point of the space with its bounds.
type candidate struct {
	// point is the point's place in the space's enumeration order.
	point  int
	knobs  PlanKnobs
	cfg    train.Config
	bounds Bounds
	// optimistic is the best score the bounds allow (higher is better).
	optimistic float64
}

// planWave is how many candidates are simulated between two pruning checks. It is fixed, not
// Jobs: the candidates simulated, and so the report, must not depend on the pool's size.
const planWave = 16

// Plan searches o.Space around base for the best plans for o.Goal: every point within the
// constraints gets its cheap bounds (Bounds, from the memoized step plan); points whose memory
// bound exceeds the GPU with the margin, or whose bound breaks a budget, are pruned unsimulated.
// The rest are simulated best bound first, planWave at a time on the Sweep pool; after each wave,
// the points whose optimistic score cannot beat the Top-th feasible plan found are pruned. The
// Top plans are then judged (Session.Run: baselines and the diagnosis).
func Plan(ctx context.Context, base train.Config, o PlanOptions) (*PlanReport, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	top := o.Top
	if top <= 0 {
		top = 5
	}
	if o.Steps > 0 {
		base.Steps = o.Steps
	}
	// No plan's report reads op spans (a trace): its runs record none, as compare's do.
	base.TraceSteps = 0
	rep := &PlanReport{Goal: o.Goal, Training: o.Training}
	cands, err := o.candidates(base, rep)
	if err != nil {
		return nil, err
	}
	// The search simulates outside the session, which would keep every result: only the top
	// plans found so far keep theirs (a wave's results go once it is ranked), and the session
	// that judges them starts from those.
	run := runFunc(o.Run)
	q := &planQueue{o: &o, cands: cands, bd: newBounder(), rep: rep}
	var found []PlanResult
	for {
		kth, full := kthPlan(found, top)
		wave, err := q.wave(kth, full)
		if err != nil {
			return nil, err
		}
		if len(wave) == 0 {
			break
		}
		res, err := Sweep(ctx, len(wave), o.Jobs, func(ctx context.Context, i int) (PlanResult, error) {
			return o.simulate(ctx, run, base, wave[i])
		}, nil)
		if err != nil {
			return nil, err
		}
		rep.Simulated += len(wave)
		for _, r := range res {
			if !r.Feasible {
				rep.Infeasible++
				continue
			}
			found = append(found, r)
		}
		// The order is total (ties by point) and a plan past the top-th never climbs back:
		// the plans after it stay after it.
		sortPlans(found)
		for i := top; i < len(found); i++ {
			found[i] = PlanResult{}
		}
		found = found[:min(len(found), top)]
	}
	sess := NewSession(o.Run)
	for i := range found {
		sess.remember(found[i].Config, found[i].result)
		found[i].result = nil
	}
	cur, err := o.simulate(ctx, sess.Simulate, base, candidate{point: -1, knobs: knobsOf(base), cfg: base})
	if err != nil {
		return nil, err
	}
	cur.result = nil // the session holds it
	rep.Current = &cur
	if err := o.judge(ctx, sess, rep.Current); err != nil {
		return nil, err
	}
	for i := range found {
		found[i].Rank = i + 1
		if err := o.judge(ctx, sess, &found[i]); err != nil {
			return nil, err
		}
	}
	rep.Plans = found
	return rep, nil
}

func (o *PlanOptions) check() error {
	if !slices.Contains(Goals, o.Goal) {
		return fmt.Errorf("plan: goal %q: want one of %v", o.Goal, Goals)
	}
	if o.Margin < 0 || o.Margin >= 1 || math.IsNaN(o.Margin) {
		return fmt.Errorf("plan: margin %v: want 0 <= margin < 1", o.Margin)
	}
	if (o.Goal == GoalTimeToTrain || o.Goal == GoalCost || o.BudgetDollars > 0 || o.BudgetSeconds > 0) && o.Training.DatasetSize < 1 {
		return fmt.Errorf("plan: goal %s needs the training job's dataset size", o.Goal)
	}
	if o.Goal == GoalCost || o.BudgetDollars > 0 {
		for _, g := range o.Space.GPUs {
			if _, ok := o.Prices[g]; !ok {
				return fmt.Errorf("plan: no price for GPU %s: the cost needs $/GPU-hour for every GPU searched", g)
			}
		}
	}
	return o.Space.check()
}

// candidates enumerates the space within the constraints, bounds each point, prunes by memory
// and budget, and orders the rest best bound first (ties in enumeration order).
func (o *PlanOptions) candidates(base train.Config, rep *PlanReport) ([]candidate, error) {
	if len(o.Space.GPUs) == 0 {
		o.Space.GPUs = []string{base.GPU}
	}
	bd := newBounder()
	var cands []candidate
	var ferr error
	total, outside, err := o.Space.enumerate(base, o.MaxNodes, o.MinBatch, o.MaxBatch, o.Shard, func(point int, k PlanKnobs) {
		if ferr != nil {
			return
		}
		c := candidate{point: point, knobs: k, cfg: k.apply(base)}
		if c.bounds, ferr = bd.bounds(c.cfg); ferr != nil {
			ferr = errTrial("plan", point, ferr)
			return
		}
		if float64(c.bounds.MemoryBytes) > (1-o.Margin)*float64(c.bounds.CapacityBytes) {
			rep.PrunedMemory++
			return
		}
		secs := o.Training.Seconds(k.GlobalBatch, c.bounds.StepTime)
		if (o.BudgetSeconds > 0 && secs > o.BudgetSeconds) || (o.BudgetDollars > 0 && o.dollars(k, secs) > o.BudgetDollars) {
			rep.PrunedBudget++
			return
		}
		c.optimistic = o.score(k, float64(k.GlobalBatch)/c.bounds.StepTime, c.bounds.StepTime)
		cands = append(cands, c)
	})
	if err != nil {
		return nil, err
	}
	if ferr != nil {
		return nil, ferr
	}
	rep.Space, rep.OutOfRange = total, outside
	// Enumerated in point order: ties of the bound stay in it.
	slices.SortStableFunc(cands, func(a, b candidate) int {
		switch {
		case a.optimistic > b.optimistic:
			return -1
		case a.optimistic < b.optimistic:
			return 1
		}
		return 0
	})
	return cands, nil
}

// dollars is the cost of training for secs on k's GPUs.
func (o *PlanOptions) dollars(k PlanKnobs, secs float64) float64 {
	return float64(k.GPUs) * secs / 3600 * o.Prices[k.GPU]
}

// score is the goal's figure of merit of a plan of k at throughput and stepTime, higher
// better: samples/s, minus the seconds or dollars to train, or for max-batch the global batch
// with the throughput breaking ties (a throughput under 1e9 samples/s never outweighs a sample
// of batch).
func (o *PlanOptions) score(k PlanKnobs, throughput, stepTime float64) float64 {
	switch o.Goal {
	case GoalTimeToTrain:
		return -o.Training.Seconds(k.GlobalBatch, stepTime)
	case GoalCost:
		return -o.dollars(k, o.Training.Seconds(k.GlobalBatch, stepTime))
	case GoalMaxBatch:
		return float64(k.GlobalBatch) + min(throughput, 1e9-1)/1e9
	}
	return throughput
}

// kthPlan is the top-th best plan found (found is sorted), if there are that many.
func kthPlan(found []PlanResult, top int) (PlanResult, bool) {
	if len(found) < top {
		return PlanResult{}, false
	}
	return found[top-1], true
}

// outranks reports whether a plan of score at point ranks above p: a higher score, or the
// same score at an earlier point.
func outranks(score float64, point int, p PlanResult) bool {
	return score > p.Score || (score == p.Score && point < p.Point)
}

// sortPlans orders plans best first: by score, ties by point.
func sortPlans(ps []PlanResult) {
	slices.SortFunc(ps, func(a, b PlanResult) int {
		switch {
		case outranks(a.Score, a.Point, b):
			return -1
		case outranks(b.Score, b.Point, a):
			return 1
		}
		return 0
	})
}

// simulate runs c with run and reads the figures the ranking needs; the result stays with the
// plan (PlanResult.result) until Plan lets it go.
func (o *PlanOptions) simulate(ctx context.Context, run RunFunc, base train.Config, c candidate) (PlanResult, error) {
	res, err := run(ctx, c.cfg)
	if err != nil {
		return PlanResult{}, fmt.Errorf("plan %s: %w", describeKnobs(c.knobs), err)
	}
	r := PlanResult{Knobs: c.knobs, Point: c.point, Changes: c.knobs.changes(base), Config: c.cfg, Bounds: c.bounds,
		Throughput: res.Throughput, StepTime: res.StepTime, GPUUtilization: res.GPUUtilization,
		InputStall: res.InputStallFraction, AllReduceTime: res.AllReduceTime, OOM: newOOM(res.OOM), result: res}
	for _, d := range res.Devices {
		if !d.Idle {
			r.PeakBytes = max(r.PeakBytes, d.PeakBytesInUse)
			r.LimitBytes = max(r.LimitBytes, d.BytesLimit)
		}
	}
	r.Fits = r.OOM == nil && len(res.StepTimes) > 0 && r.StepTime > 0 &&
		float64(r.PeakBytes) <= (1-o.Margin)*float64(r.LimitBytes)
	if r.Fits && o.Training.DatasetSize > 0 {
		r.TrainSeconds = o.Training.Seconds(c.knobs.GlobalBatch, r.StepTime)
		r.GPUHours = float64(c.knobs.GPUs) * r.TrainSeconds / 3600
		if p, ok := o.Prices[c.knobs.GPU]; ok {
			r.PricePerGPUHour, r.Dollars = p, r.GPUHours*p
		}
	}
	r.Feasible = r.Fits && !(o.BudgetSeconds > 0 && r.TrainSeconds > o.BudgetSeconds) &&
		!(o.BudgetDollars > 0 && r.Dollars > o.BudgetDollars)
	if r.Fits {
		r.Score = o.score(c.knobs, r.Throughput, r.StepTime)
	}
	return r, nil
}

// judge adds the diagnosis (with the baselines Session.Run compares against) to r.
func (o *PlanOptions) judge(ctx context.Context, sess *Session, r *PlanResult) error {
	if r.OOM != nil {
		r.Bound, r.Why = "oom", r.OOM.Message
		return nil
	}
	res, err := sess.Run(ctx, r.Config)
	if err != nil {
		return err
	}
	if err := o.intervals(r, res.Result); err != nil {
		return err
	}
	if d := res.Diagnosis; d != nil {
		r.Bound = string(d.Bound)
		if len(d.Evidence) > 0 {
			r.Why = d.Evidence[0]
		}
	}
	return nil
}

// describeKnobs names a plan in an error.
func describeKnobs(k PlanKnobs) string {
	return fmt.Sprintf("%d x %s %s batch %d/%d %s xla=%t", k.GPUs, k.GPU, k.Strategy, k.GlobalBatch, k.Accumulation, k.Precision, k.XLA)
}

// planQueue hands out the candidates best bound first. cands is in roofline order; a candidate
// taken from it gets its compute bound (tighter, and costlier: priced once per step plan) and
// waits in ready, ordered by that (ties by point). A candidate leaves ready only when no candidate left in
// cands could have a better bound: its roofline bound, which the compute bound only lowers,
// is not above the best in ready.
type planQueue struct {
	o     *PlanOptions
	cands []candidate
	next  int
	ready []candidate
	bd    *bounder
	rep   *PlanReport
}

// wave returns the next planWave candidates to simulate, best first, pruning those whose bound
// cannot outrank kth (when full: the top plans are found); empty when none is left.
func (q *planQueue) wave(kth PlanResult, full bool) ([]candidate, error) {
	cannot := func(c candidate) bool { return full && !outranks(c.optimistic, c.point, kth) }
	var wave []candidate
	for len(wave) < planWave {
		for q.next < len(q.cands) && (len(q.ready) == 0 || q.cands[q.next].optimistic > q.ready[0].optimistic) {
			c := q.cands[q.next]
			if cannot(c) {
				// In roofline order, ties in point order: no candidate left there can beat
				// the top plans.
				q.rep.PrunedRoofline += len(q.cands) - q.next
				q.next = len(q.cands)
				break
			}
			q.next++
			t, err := q.bd.compute(c.cfg)
			if err != nil {
				return nil, err
			}
			c.bounds.StepTime = max(c.bounds.StepTime, t)
			c.optimistic = q.o.score(c.knobs, float64(c.knobs.GlobalBatch)/c.bounds.StepTime, c.bounds.StepTime)
			if cannot(c) {
				q.rep.PrunedCompute++
				continue
			}
			i, _ := slices.BinarySearchFunc(q.ready, c, func(a, b candidate) int {
				switch {
				case a.optimistic > b.optimistic:
					return -1
				case a.optimistic < b.optimistic:
					return 1
				}
				return a.point - b.point
			})
			q.ready = slices.Insert(q.ready, i, c)
		}
		if len(q.ready) == 0 {
			break
		}
		if cannot(q.ready[0]) {
			// Ordered by the compute bound, ties by point: none waiting can beat the top plans.
			q.rep.PrunedCompute += len(q.ready)
			q.ready = nil
			continue
		}
		wave = append(wave, q.ready[0])
		q.ready = q.ready[1:]
	}
	return wave, nil
}

// intervals fills r's prediction intervals from res, its run.
func (o *PlanOptions) intervals(r *PlanResult, res *train.Result) error {
	u := o.Uncertainty
	if u == nil {
		u = ShippedUncertainty()
	}
	iv, err := u.Intervals(r.Config, res, IntervalLevel)
	if err != nil || iv == nil || iv.SpeedBasis == "" {
		return err
	}
	tp, st := iv.Throughput, iv.StepTime
	r.ThroughputInterval, r.StepTimeInterval, r.IntervalBasis = &tp, &st, iv.SpeedBasis
	if r.TrainSeconds > 0 {
		// The time to train scales with the step; the dollars with the time.
		tt := Interval{o.Training.Seconds(r.Knobs.GlobalBatch, st[0]), o.Training.Seconds(r.Knobs.GlobalBatch, st[1])}
		r.TrainSecondsInterval = &tt
		if r.PricePerGPUHour > 0 {
			d := Interval{float64(r.Knobs.GPUs) * tt[0] / 3600 * r.PricePerGPUHour, float64(r.Knobs.GPUs) * tt[1] / 3600 * r.PricePerGPUHour}
			r.DollarsInterval = &d
		}
	}
	return nil
}
