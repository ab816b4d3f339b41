package calibrate

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// StepSeries is the step times read from a job's output.
type StepSeries struct {
	// Source is how they were found: "step_time", "keras" or "regex".
	Source string `json:"source"`
	// Times are the step times in seconds, in output order, warm-up included.
	Times []float64 `json:"times_s"`
	// Warmup is how many leading values Median ignores (compilation, autotuning, first epoch).
	Warmup int `json:"warmup"`
	// Median is the median of Times[Warmup:].
	Median float64 `json:"median_s"`
}

var (
	// stepTimeRE matches `step_time=0.123` (seconds) or `step_time=123ms`.
	stepTimeRE = regexp.MustCompile(`step_time\s*[=:]\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us|µs|ns)?\b`)
	// kerasStepRE matches Keras progress bars: ` 120ms/step`, ` 2s/step`, ` 950us/step`
	// (keras/src/utils/progbar.py, Progbar.update: time per unit formatted with :.0f in s, ms
	// or us, followed by "/step").
	kerasStepRE  = regexp.MustCompile(`(?:^|\s)([0-9]*\.?[0-9]+)(s|ms|us)/step\b`)
	kerasEpochRE = regexp.MustCompile(`^\s*Epoch\s+\d+/\d+`)
)

// ErrNoSteps says that no step time was found in the output.
var ErrNoSteps = errors.New("no step times in the output (print step_time=SECONDS per step, use Keras verbose=1/2, or pass a regex)")

// StepTimes extracts step times from a job's output. If re is not nil it must have one capture
// group holding the number and may have a second holding its unit (s, ms, us, ns; default s).
// Otherwise `step_time=` lines are used if any, else Keras progress lines. warmup < 0 chooses
// it: for step_time and regex lines the first value (if at least 3), for Keras the first epoch
// (if there are at least 2; Keras already leaves out each epoch's first step).
func StepTimes(lines []Line, re *regexp.Regexp, warmup int) (StepSeries, error) {
	if re != nil {
		if re.NumSubexp() < 1 {
			return StepSeries{}, fmt.Errorf("regex %q: needs a capture group for the number", re)
		}
		return finish(StepSeries{Source: "regex"}, matchAll(lines, re), warmup)
	}
	if times := matchAll(lines, stepTimeRE); len(times) > 0 {
		return finish(StepSeries{Source: "step_time"}, times, warmup)
	}
	// Keras: the value on a progress line is the epoch's running mean; the last one of each
	// epoch is that epoch's mean step time.
	var epochs []float64
	have := false
	for _, l := range lines {
		if kerasEpochRE.MatchString(l.Text) {
			if have {
				epochs = append(epochs, 0)
				have = false
			}
			continue
		}
		ms := kerasStepRE.FindAllStringSubmatch(l.Text, -1)
		if len(ms) == 0 {
			continue
		}
		m := ms[len(ms)-1]
		v, err := scaled(m[1], m[2])
		if err != nil {
			return StepSeries{}, err
		}
		if !have {
			epochs = append(epochs, v)
			have = true
		} else {
			epochs[len(epochs)-1] = v
		}
	}
	// Drop the placeholders of epochs that printed no step line.
	kept := epochs[:0]
	for _, v := range epochs {
		if v > 0 {
			kept = append(kept, v)
		}
	}
	if len(kept) == 0 {
		return StepSeries{}, ErrNoSteps
	}
	s := StepSeries{Source: "keras"}
	if warmup < 0 {
		warmup = 0
		if len(kept) >= 2 {
			warmup = 1
		}
	}
	return finish(s, kept, warmup)
}

func matchAll(lines []Line, re *regexp.Regexp) []float64 {
	var out []float64
	for _, l := range lines {
		for _, m := range re.FindAllStringSubmatch(l.Text, -1) {
			unit := ""
			if len(m) > 2 {
				unit = m[2]
			}
			if v, err := scaled(m[1], unit); err == nil {
				out = append(out, v)
			}
		}
	}
	return out
}

func finish(s StepSeries, times []float64, warmup int) (StepSeries, error) {
	if len(times) == 0 {
		return s, ErrNoSteps
	}
	if warmup < 0 {
		warmup = 0
		if len(times) >= 3 {
			warmup = 1
		}
	}
	if warmup >= len(times) {
		return s, fmt.Errorf("warmup %d leaves none of %d step times", warmup, len(times))
	}
	s.Times, s.Warmup = times, warmup
	s.Median = median(times[warmup:])
	return s, nil
}

func scaled(num, unit string) (float64, error) {
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("step time %q: %w", num, err)
	}
	switch strings.TrimSpace(unit) {
	case "", "s":
	case "ms":
		v *= 1e-3
	case "us", "µs":
		v *= 1e-6
	case "ns":
		v *= 1e-9
	default:
		return 0, fmt.Errorf("step time unit %q: want s, ms, us or ns", unit)
	}
	return v, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
