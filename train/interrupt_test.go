package train

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpusim/gpusim/pipeline"
)

// A cancelled context stops a run that would take minutes (100k steps step by step), with the
// context's error and no result. How soon is only logged (it depends on the machine's load);
// that it stops at all, rather than running its 100k steps, is what fails here.
func TestRunStopsOnCancel(t *testing.T) {
	c := cfgWith(func(c *Config) { c.Steps, c.FastForward = 100_000, false })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	res, err := Run(ctx, c)
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("Run cancelled after 50ms = %v, %v; want nil, context.Canceled", res, err)
	}
	t.Logf("Run stopped %v after its start, 50ms of it before the cancel", time.Since(start))
	if _, err := Run(ctx, c); !errors.Is(err, context.Canceled) {
		t.Errorf("Run on a done context = %v, want context.Canceled", err)
	}
}

// A run past its event cap ends with ErrTooManyEvents naming the step it reached.
func TestRunStopsAtEventCap(t *testing.T) {
	c := cfgWith(func(c *Config) { c.Steps, c.FastForward = 1000, false })
	res, err := runCapped(context.Background(), c, 1<<14)
	if !errors.Is(err, ErrTooManyEvents) || res != nil {
		t.Fatalf("run capped at 16384 events = %v, %v; want nil, ErrTooManyEvents", res, err)
	}
	t.Log(err)
	if _, err := runCapped(context.Background(), cfgWith(func(c *Config) { c.Steps = 2 }), 1<<20); err != nil {
		t.Errorf("2 steps under a cap of 1M events: %v", err)
	}
}

// A map function of a day per element (past what scenarios accept, but train.Config may hold
// it) ends the run with ErrTooLong instead of filling memory with utilization samples.
func TestRunStopsAtSimulatedTimeCap(t *testing.T) {
	c := cfgWith(func(c *Config) {
		in := Input{Cache: "none", Pipeline: pipeline.DefaultConfig()}
		in.Pipeline.MapCost.Mean = 86400
		c.Input = &in
	})
	res, err := Run(context.Background(), c)
	if !errors.Is(err, ErrTooLong) || res != nil {
		t.Fatalf("run with a day per element = %v, %v; want nil, ErrTooLong", res, err)
	}
	t.Log(err)
}

// A fast-forwarded run past MaxSimulatedTime stops at the step that crosses it (replayed in
// O(1), so the 20M-step request costs no more than its first steps).
func TestFastForwardStopsAtSimulatedTimeCap(t *testing.T) {
	c := cfgWith(func(c *Config) { c.Steps = 20_000_000 })
	short := mustRun(t, cfgWith(func(c *Config) { c.Steps = 10 }))
	res, err := Run(context.Background(), c)
	if !errors.Is(err, ErrTooLong) || res != nil {
		t.Fatalf("20M steps = %v, %v; want nil, ErrTooLong", res, err)
	}
	// The step whose last kernel ends past the cap, counted from the replay's start.
	want := int(MaxSimulatedTime.Seconds()/short.StepTime) + 1
	var step int
	if _, e := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "step "):], "step %d", &step); e != nil || step < want-3 || step > want+3 {
		t.Errorf("error %q names step %d, want about %d", err, step, want)
	}
}

// A mixed_float16 run that runs out of memory in step 1 says nothing about skipped steps: the
// loss scale's schedule covered steps that never ran ("4.0% of steps skipped" next to 0).
func TestOOMRunHasNoScheduleNotes(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) {
		c.Precision, c.GPU, c.Batch, c.Steps = "mixed_float16", "t4", 4096, 100
	}))
	if res.OOM == nil {
		t.Fatal("resnet50 at batch 4096 on a T4 fits; the test wants an OOM")
	}
	for _, n := range res.Notes {
		if strings.Contains(n, "skipped by loss scaling") && res.SkippedSteps == 0 {
			t.Errorf("OOM run with 0 skipped steps notes %q", n)
		}
	}
}
