package analysis

import (
	"slices"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		spec string
		env  map[string]string
		want Shard
		err  string
	}{
		{spec: "0/4", want: Shard{0, 4}},
		{spec: " 3/4 ", want: Shard{3, 4}},
		{spec: "4/4", err: "index must be in 0..3"},
		{spec: "0/0", err: "at least 1 shard"},
		{spec: "a/4", err: `shard index "a"`},
		{spec: "auto", env: map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4"}, want: Shard{2, 4}},
		{spec: "auto", env: map[string]string{"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1"}, want: Shard{3, 4}},
		{spec: "auto", err: "not in a Slurm array job"},
		{spec: "8", env: map[string]string{"JOB_COMPLETION_INDEX": "5"}, want: Shard{5, 8}},
		{spec: "8", env: map[string]string{"SLURM_ARRAY_TASK_ID": "7"}, want: Shard{7, 8}},
		{spec: "8", env: map[string]string{"JOB_COMPLETION_INDEX": "8"}, err: "index must be in 0..7"},
		{spec: "8", err: "give K/N"},
	} {
		got, err := ParseShard(tc.spec, func(k string) string { return tc.env[k] })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseShard(%q, %v) = %v, %v; want an error with %q", tc.spec, tc.env, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseShard(%q, %v) = %v, %v; want %v", tc.spec, tc.env, got, err, tc.want)
		}
	}
}

// The shards of a sweep cover every configuration exactly once.
func TestShardIndicesPartition(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		for _, count := range []int{1, 3, 4, 9} {
			var all []int
			for k := range count {
				s := Shard{k, count}
				for _, i := range s.Indices(n) {
					if !s.Owns(i) {
						t.Errorf("shard %v lists %d but does not own it", s, i)
					}
					all = append(all, i)
				}
			}
			slices.Sort(all)
			for i, v := range all {
				if v != i {
					t.Fatalf("%d configurations in %d shards: indices %v, want 0..%d once each", n, count, all, n-1)
				}
			}
			if len(all) != n {
				t.Errorf("%d configurations in %d shards cover %d", n, count, len(all))
			}
		}
	}
}
