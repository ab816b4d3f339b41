package calibrate

import (
	"errors"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func lines(texts ...string) []Line {
	out := make([]Line, len(texts))
	for i, s := range texts {
		out[i] = Line{TNS: int64(i), Stream: "stdout", Text: s}
	}
	return out
}

func TestStepTimes(t *testing.T) {
	tests := []struct {
		name   string
		lines  []Line
		re     string
		warmup int
		want   StepSeries
	}{
		{
			name:   "step_time seconds, automatic warm-up",
			lines:  lines("context_ready", "step=0 step_time=2.5 loss=7", "step=1 step_time=0.120", "step=2 step_time=0.110", "step=3 step_time=0.130"),
			warmup: -1,
			want:   StepSeries{Source: "step_time", Times: []float64{2.5, 0.12, 0.11, 0.13}, Warmup: 1, Median: 0.12},
		},
		{
			name:   "step_time with units",
			lines:  lines("step_time=120ms", "step_time: 950us", "step_time=1.5e-1"),
			warmup: 0,
			want:   StepSeries{Source: "step_time", Times: []float64{0.12, 0.00095, 0.15}, Warmup: 0, Median: 0.12},
		},
		{
			// Keras 2 (tf.keras) and Keras 3 progress bars, redrawn with \r (the recorder splits
			// at \r); the last value of each epoch is its mean, the first epoch is warm-up.
			name: "keras epochs",
			lines: lines(
				"Epoch 1/3",
				" 10/100 [==>...........................] - ETA: 40s - loss: 2.3",
				"100/100 [==============================] - 14s 135ms/step - loss: 2.1",
				"Epoch 2/3",
				" 50/100 ━━━━━━━━━━━━━━━━━━━━ 6s 121ms/step - loss: 1.9",
				"100/100 ━━━━━━━━━━━━━━━━━━━━ 12s 120ms/step - loss: 1.8",
				"Epoch 3/3",
				"100/100 [==============================] - 12s 118ms/step - loss: 1.7 - val_loss: 1.9",
			),
			warmup: -1,
			want:   StepSeries{Source: "keras", Times: []float64{0.135, 0.120, 0.118}, Warmup: 1, Median: 0.119},
		},
		{
			name:   "keras single epoch in seconds and microseconds",
			lines:  lines("Epoch 1/1", "5/5 - 10s - 2s/step - loss: 1", "Epoch 1/1", "5/5 - 0s - 900us/step"),
			warmup: 0,
			want:   StepSeries{Source: "keras", Times: []float64{2, 0.0009}, Warmup: 0, Median: 1.00045},
		},
		{
			name:   "regex with unit group",
			lines:  lines("iter 1 took 30 ms", "iter 2 took 20 ms", "iter 3 took 22 ms", "step_time=9"),
			re:     `took (\d+) (ms)`,
			warmup: 1,
			want:   StepSeries{Source: "regex", Times: []float64{0.03, 0.02, 0.022}, Warmup: 1, Median: 0.021},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var re *regexp.Regexp
			if tt.re != "" {
				re = regexp.MustCompile(tt.re)
			}
			got, err := StepTimes(tt.lines, re, tt.warmup)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b float64) bool { return a == b || abs(a-b) < 1e-12 })); d != "" {
				t.Errorf("StepTimes mismatch (-want +got):\n%s", d)
			}
		})
	}
}

func TestStepTimesErrors(t *testing.T) {
	if _, err := StepTimes(lines("hello", "loss=1"), nil, -1); !errors.Is(err, ErrNoSteps) {
		t.Errorf("StepTimes(no steps) = %v, want ErrNoSteps", err)
	}
	if _, err := StepTimes(lines("step_time=1"), regexp.MustCompile(`step_time`), -1); err == nil {
		t.Error("StepTimes(regex without group): no error")
	}
	if _, err := StepTimes(lines("step_time=1"), nil, 1); err == nil {
		t.Error("StepTimes(warm-up of all values): no error")
	}
}

func FuzzStepTimes(f *testing.F) {
	f.Add("100/100 [====] - 12s 120ms/step - loss: 1.8")
	f.Add("step_time=0.5")
	f.Add("Epoch 1/2")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := StepTimes(lines(s, s, s), nil, -1)
		if err != nil {
			return
		}
		if len(got.Times) == 0 || got.Warmup >= len(got.Times) || got.Median < 0 {
			t.Errorf("StepTimes(%q) = %+v: inconsistent", s, got)
		}
	})
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
