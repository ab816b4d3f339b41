// Package pool is the module's one worker pool: indexed work (a sweep's configurations, a
// capacity search's trials, a validation's measurements) on a bounded number of goroutines,
// with results the caller stores by index and an error that does not depend on scheduling,
// so that the same input gives the same output whatever --jobs is.
package pool

import (
	"context"
	"fmt"
	"sync"
)

// Error is the failure of the call for one index.
type Error struct {
	Index int
	Err   error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Run calls fn(i) for each i in [0, n) on up to jobs goroutines (at least one), handing the
// indices out in increasing order. Once a call fails, or ctx is done, it hands out no more and
// waits for the calls under way (they see ctx themselves; a failure does not cancel them).
// It returns nil when every call ran and succeeded. Otherwise it returns an *Error for the
// lowest index that failed: every lower index was handed out before it and ran to its end,
// so that is the lowest failure of all, whatever the scheduling. When ctx ended before some
// index was handed out and no call failed, the *Error is the first index never run, wrapping
// ctx's cause.
func Run(ctx context.Context, n, jobs int, fn func(i int) error) error {
	if n <= 0 {
		return nil
	}
	errs := make([]error, n)
	next := make(chan int)
	failed := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for range min(max(jobs, 1), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if errs[i] = fn(i); errs[i] != nil {
					once.Do(func() { close(failed) })
				}
			}
		}()
	}
	handed := 0
feed:
	for ; handed < n; handed++ {
		// A failure or an ended ctx seen before the hand-out wins over a free worker.
		select {
		case <-failed:
			break feed
		case <-ctx.Done():
			break feed
		default:
		}
		select {
		case next <- handed:
		case <-failed:
			break feed
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	for i, err := range errs[:handed] {
		if err != nil {
			return &Error{i, err}
		}
	}
	if handed < n {
		return &Error{handed, fmt.Errorf("not run: %w", context.Cause(ctx))}
	}
	return nil
}
