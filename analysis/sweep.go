package analysis

import (
	"context"
	"fmt"
	"sync"
)

// SweepError is the failure of one configuration of a sweep: its index and its error.
type SweepError struct {
	Index int
	Err   error
}

func (e *SweepError) Error() string { return e.Err.Error() }
func (e *SweepError) Unwrap() error { return e.Err }

// Sweep runs run(ctx, i) for i in [0, n) on up to jobs goroutines (each simulation has its own
// engine, so they share nothing but a Session's memory) and returns the results in index
// order, whatever order they finish in; done, when not nil, is called after each. The first
// failure stops new work; the error returned is a *SweepError for the lowest index that
// failed. Cancelled from outside (Ctrl-C) before every run started, it says so for the first
// that never ran rather than return empty results.
func Sweep[T any](ctx context.Context, n, jobs int, run func(ctx context.Context, i int) (T, error), done func()) ([]T, error) {
	results := make([]T, n)
	errs := make([]error, n)
	ran := make([]bool, n)
	next := make(chan int)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range min(max(jobs, 1), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ran[i] = true
				results[i], errs[i] = run(ctx, i)
				if errs[i] != nil {
					cancel()
				}
				if done != nil {
					done()
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, &SweepError{i, err}
		}
	}
	for i := range n {
		if !ran[i] {
			return nil, &SweepError{i, fmt.Errorf("not run: %w", context.Cause(ctx))}
		}
	}
	return results, nil
}
