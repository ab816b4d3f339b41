package analysis

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/gpusim/gpusim/train"
)

// Result is one run with its judgement: the run's measurements (train.Result), its
// comparisons with its baselines, the diagnosis and, when asked for, the remedies.
type Result struct {
	*train.Result
	// Scaling compares the run with one replica training alone (nil with one replica, or when
	// the comparison could not run); it sets Result.ScalingEfficiency.
	Scaling *Scaling
	// PrecisionSaving compares a mixed-precision run's peak memory with float32 (nil for
	// float32 runs); outside the TF guide's 30-40% a note says why.
	PrecisionSaving *PrecisionSaving
	// Diagnosis says whether the run is input-, compute-, communication- or compile-bound,
	// with the evidence (nil when no step completed or the run ran out of memory).
	Diagnosis *Diagnosis
	// Remedies are the changes that would feed an input-bound run, re-simulated, best first
	// (Session.Remedies; empty unless asked for).
	Remedies []Remedy
	// Intervals are the run's 80% prediction intervals (nil after an OOM): where the real
	// figure lies for 80% of the shipped validation rows like it (uncertainty.go).
	Intervals *Intervals
}

// Session runs simulations for analyses and remembers them: a configuration simulated once
// (the one-GPU baseline of several multi-GPU runs, the float32 baseline of a run and of its
// remedies) is not simulated again. It is safe for concurrent use; a configuration being
// simulated by one goroutine is waited for by the others, not run twice.
type Session struct {
	run RunFunc

	mu    sync.Mutex
	runs  map[string]*memo
	count int
}

type memo struct {
	done chan struct{}
	res  *train.Result
	err  error
}

// NewSession returns a session that simulates with run (train.Run when nil).
func NewSession(run RunFunc) *Session {
	return &Session{run: runFunc(run), runs: map[string]*memo{}}
}

// Simulations is how many simulations the session ran (a configuration asked for several
// times counts once).
func (s *Session) Simulations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// Simulate returns the result of cfg, simulating it only the first time it is asked for. The
// result is shared: callers must not change it. A simulation stopped by its context is not
// remembered: the next caller simulates again.
func (s *Session) Simulate(ctx context.Context, cfg train.Config) (*train.Result, error) {
	key, err := configKey(cfg)
	if err != nil {
		// Not representable as a key (a NaN knob): simulate without remembering.
		s.mu.Lock()
		s.count++
		s.mu.Unlock()
		return s.run(ctx, cfg)
	}
	s.mu.Lock()
	if m, ok := s.runs[key]; ok {
		s.mu.Unlock()
		<-m.done
		return m.res, m.err
	}
	m := &memo{done: make(chan struct{})}
	s.runs[key] = m
	s.count++
	s.mu.Unlock()
	m.res, m.err = s.run(ctx, cfg)
	if m.err != nil && ctx.Err() != nil {
		s.mu.Lock()
		delete(s.runs, key)
		s.count--
		s.mu.Unlock()
	}
	close(m.done)
	return m.res, m.err
}

// remember records res as cfg's result, as if the session had simulated it (it counts no
// simulation): a search that simulated outside the session keeps only the results it
// reports, and judging them simulates none again. A configuration the session knows keeps
// its result.
func (s *Session) remember(cfg train.Config, res *train.Result) {
	key, err := configKey(cfg)
	if err != nil || res == nil {
		return
	}
	m := &memo{done: make(chan struct{}), res: res}
	close(m.done)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.runs[key]; !ok {
		s.runs[key] = m
	}
}

// started returns the result of cfg if the session has simulated it or is simulating it
// (waiting for the simulation to end), without starting one; false when it has not, or when
// that simulation failed.
func (s *Session) started(ctx context.Context, cfg train.Config) (*train.Result, bool) {
	key, err := configKey(cfg)
	if err != nil {
		return nil, false
	}
	s.mu.Lock()
	m, ok := s.runs[key]
	s.mu.Unlock()
	if !ok {
		return nil, false
	}
	select {
	case <-m.done:
	case <-ctx.Done():
		return nil, false
	}
	return m.res, m.err == nil
}

// configKey identifies a configuration: its JSON encoding, which covers every exported field
// (train.Config has no unexported ones) with map keys sorted.
func configKey(cfg train.Config) (string, error) {
	b, err := json.Marshal(cfg)
	return string(b), err
}

// Run simulates cfg and its baselines and diagnoses it (no remedies: Remedies re-simulates
// those). A baseline that fails or cannot be compared leaves its field nil, as before the
// comparison existed: it does not fail the run.
func (s *Session) Run(ctx context.Context, cfg train.Config) (*Result, error) {
	res, err := s.Simulate(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return s.judge(ctx, cfg, res)
}

// judge adds the baselines and the diagnosis to res (a run of cfg), on a copy: res may be
// shared with other callers. Only ctx's end fails it: a baseline that fails otherwise is left
// out.
func (s *Session) judge(ctx context.Context, cfg train.Config, res *train.Result) (*Result, error) {
	own := *res
	own.Notes = slices.Clip(own.Notes)
	out := &Result{Result: &own}
	if ref, ok := OneGPUBaseline(cfg, res); ok {
		if one, err := s.Simulate(ctx, ref); err == nil {
			if sc := scaling(res, one, ref.Batch); sc != nil {
				out.Scaling = sc
				own.ScalingEfficiency = sc.Efficiency
			}
		}
	}
	if ref, ok := Float32Baseline(cfg, res); ok {
		if f32, err := s.float32Memory(ctx, cfg, ref); err == nil {
			ps, note := precisionSaving(cfg, res, f32)
			out.PrecisionSaving = ps
			if note != "" {
				own.Notes = append(own.Notes, note)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out.Diagnosis = DiagnoseResult(res)
	iv, err := ShippedUncertainty().Intervals(cfg, res, IntervalLevel)
	if err != nil {
		return nil, err
	}
	out.Intervals = iv
	return out, nil
}

// Run is NewSession(nil).Run(ctx, cfg): one run, its baselines and its diagnosis.
func Run(ctx context.Context, cfg train.Config) (*Result, error) {
	return NewSession(nil).Run(ctx, cfg)
}
