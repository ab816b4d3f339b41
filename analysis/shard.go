package analysis

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one part of a sweep split across machines: configuration i belongs to shard
// i mod Count, so every shard gets a spread of the sweep (a sweep over batch sizes puts the
// slow large batches on every shard, not all on the last). Index is 0-based.
type Shard struct {
	Index, Count int
}

// Owns reports whether configuration i belongs to the shard.
func (s Shard) Owns(i int) bool { return i%s.Count == s.Index }

// Indices returns the configurations of a sweep of n that belong to the shard, in order.
func (s Shard) Indices(n int) []int {
	var out []int
	for i := s.Index; i < n; i += s.Count {
		out = append(out, i)
	}
	return out
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Environment variables a batch scheduler sets in each task of an array job.
const (
	// Slurm job arrays (sbatch --array=0-3): the task's index, how many tasks the array has,
	// and its lowest index (an array may start at 1).
	EnvSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	EnvSlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	// Kubernetes Indexed Jobs (completionMode: Indexed): the pod's 0-based index. The count
	// (the Job's completions) is not in the environment; give it as --shard N.
	EnvJobCompletionIndex = "JOB_COMPLETION_INDEX"
)

// ParseShard reads a shard spec: "K/N" (shard K of N, 0-based), "N" (N shards, this task's
// index from the environment: JOB_COMPLETION_INDEX, else SLURM_ARRAY_TASK_ID less
// SLURM_ARRAY_TASK_MIN) or "auto" (index and count from a Slurm array's environment).
// getenv reads the environment (os.Getenv).
func ParseShard(spec string, getenv func(string) string) (Shard, error) {
	spec = strings.TrimSpace(spec)
	num := func(what, v string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("%s %q: want an integer", what, v)
		}
		return n, nil
	}
	var s Shard
	var err error
	switch k, n, ok := strings.Cut(spec, "/"); {
	case ok:
		if s.Index, err = num("shard index", k); err != nil {
			return s, err
		}
		if s.Count, err = num("shard count", n); err != nil {
			return s, err
		}
	case spec == "auto":
		id, count := getenv(EnvSlurmTaskID), getenv(EnvSlurmTaskCount)
		if id == "" || count == "" {
			return s, fmt.Errorf("shard auto: %s and %s are not set (not in a Slurm array job; give K/N, or N with %s)", EnvSlurmTaskID, EnvSlurmTaskCount, EnvJobCompletionIndex)
		}
		if s.Index, err = slurmIndex(id, getenv, num); err != nil {
			return s, err
		}
		if s.Count, err = num(EnvSlurmTaskCount, count); err != nil {
			return s, err
		}
	default:
		if s.Count, err = num("shard count", spec); err != nil {
			return s, err
		}
		switch {
		case getenv(EnvJobCompletionIndex) != "":
			if s.Index, err = num(EnvJobCompletionIndex, getenv(EnvJobCompletionIndex)); err != nil {
				return s, err
			}
		case getenv(EnvSlurmTaskID) != "":
			if s.Index, err = slurmIndex(getenv(EnvSlurmTaskID), getenv, num); err != nil {
				return s, err
			}
		default:
			return s, fmt.Errorf("shard %s: neither %s nor %s is set: give K/N", spec, EnvJobCompletionIndex, EnvSlurmTaskID)
		}
	}
	if s.Count < 1 {
		return s, fmt.Errorf("shard %s: want at least 1 shard", s)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return s, fmt.Errorf("shard %s: index must be in 0..%d", s, s.Count-1)
	}
	return s, nil
}

// slurmIndex is the task's 0-based place in its array: its ID less the array's lowest.
func slurmIndex(id string, getenv func(string) string, num func(string, string) (int, error)) (int, error) {
	k, err := num(EnvSlurmTaskID, id)
	if err != nil {
		return 0, err
	}
	if m := getenv(EnvSlurmTaskMin); m != "" {
		lo, err := num(EnvSlurmTaskMin, m)
		if err != nil {
			return 0, err
		}
		k -= lo
	}
	return k, nil
}
