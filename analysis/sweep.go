package analysis

import (
	"context"
	"errors"

	"github.com/gpusim/gpusim/internal/pool"
)

// SweepError is the failure of one configuration of a sweep: its index and its error.
type SweepError struct {
	Index int
	Err   error
}

func (e *SweepError) Error() string { return e.Err.Error() }
func (e *SweepError) Unwrap() error { return e.Err }

// Sweep runs run(ctx, i) for i in [0, n) on up to jobs goroutines (each simulation has its own
// engine, so they share nothing but a Session's memory; internal/pool) and returns the results
// in index order, whatever order they finish in; done, when not nil, is called after each.
// The first failure stops new work; the error returned is a *SweepError for the lowest index
// that failed. Cancelled from outside (Ctrl-C) before every run started, it says so for the
// first that never ran rather than return empty results.
func Sweep[T any](ctx context.Context, n, jobs int, run func(ctx context.Context, i int) (T, error), done func()) ([]T, error) {
	results := make([]T, n)
	err := pool.Run(ctx, n, jobs, func(i int) error {
		var err error
		results[i], err = run(ctx, i)
		if done != nil {
			done()
		}
		return err
	})
	var pe *pool.Error
	if errors.As(err, &pe) {
		return nil, &SweepError{pe.Index, pe.Err}
	}
	return results, err
}
