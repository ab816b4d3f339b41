package web

import (
	"strings"

	"github.com/gpusim/gpusim/scenarios"
)

// lesson is one pitfall of the TF GPU-settings guide as docs/pitfalls.md lists it, in its order:
// the built-in scenario that shows it and the overrides that show the fix (the page puts them
// on the right-hand side, so pitfall and fix run side by side).
type lesson struct {
	Scenario string   `json:"scenario"`
	Guide    string   `json:"guide"`   // the guide's section numbers
	Pitfall  string   `json:"pitfall"` // the table's "pitfall" column
	Shows    string   `json:"shows"`   // the table's "what gpusim shows" column
	Fix      []string `json:"fix,omitempty"`
	FixLabel string   `json:"fix_label,omitempty"`
}

// lessons follow docs/pitfalls.md's table row by row, in its words (TestLessonsFollowPitfalls
// and TestLessonsQuotePitfalls check it); the fixes are the commands that page gives for each
// case.
var lessons = []lesson{
	{Scenario: "cuda-visible-devices", Guide: "2.1, 5.1", Pitfall: "CUDA_VISIBLE_DEVICES=2,3 renumbers the cards",
		Shows: "TF's GPU:0 is nvidia-smi GPU 2, GPU:1 is GPU 3 (the \"Devices\" table)",
		Fix:   []string{"cuda_visible_devices=0,1,2,3"}, FixLabel: "every card visible"},
	{Scenario: "hardcoded-gpu", Guide: "5.1", Pitfall: "a hard-coded tf.device('/GPU:1')",
		Shows: "the model runs on card 3, card 2 idles with its memory taken",
		Fix:   []string{"tf.device=/GPU:0"}, FixLabel: "tf.device('/GPU:0')"},
	{Scenario: "jupyter-second-process", Guide: "2.3, 3.1, 5.2", Pitfall: "the first process preallocates; a Jupyter kernel keeps its pool",
		Shows: "the second process OOMs in step 1",
		Fix:   []string{"processes=[]"}, FixLabel: "restart the kernel (alone on the card)"},
	{Scenario: "growth-fragmentation", Guide: "3.2", Pitfall: "growth fragments the pool",
		Shows: "OOM with growth at a batch that fits preallocated",
		Fix:   []string{"memory.growth=false"}, FixLabel: "preallocate (no set_memory_growth)"},
	{Scenario: "memory-limit", Guide: "3.3", Pitfall: "memory_limit is a hard cap",
		Shows: "OOM at the 8 GiB cap on a 40 GB card",
		Fix:   []string{"memory.limit_mib=12288"}, FixLabel: "memory_limit=12288"},
	{Scenario: "growth-and-limit", Guide: "3.4", Pitfall: "growth and a limit \"combined\"",
		Shows: "growth is silently dropped (a note says so): one 6 GiB region; memory.growth_after_limit: true is TF's ValueError",
		Fix:   []string{"memory.mode=growth"}, FixLabel: "growth alone"},
	{Scenario: "accumulation", Guide: "4.3", Pitfall: "gradient accumulation",
		Shows: "memory of the micro-batch, BatchNorm warning",
		Fix:   []string{"accumulation_steps=1"}, FixLabel: "no accumulation"},
	{Scenario: "accumulation-v100", Guide: "4.3", Pitfall: "gradient accumulation",
		Shows: "memory of the micro-batch, BatchNorm warning",
		Fix:   []string{"accumulation_steps=1"}, FixLabel: "no accumulation"},
	{Scenario: "mixed-precision-old-card", Guide: "4.4", Pitfall: "mixed precision on an old card",
		Shows: "GTX 1080 Ti: less memory, FP32-rate math (pseudo-half), a small speedup instead of a Tensor Core one, Keras' compute-capability warning",
		Fix:   []string{"precision=float32"}, FixLabel: "float32"},
	{Scenario: "input-bound", Guide: "6.1", Pitfall: "GPU near 10% busy waiting for input",
		Shows: "10% utilization, diagnosis and the fix re-simulated",
		Fix:   []string{"input.map.parallel_calls=autotune", "input.prefetch=autotune"}, FixLabel: "parallel map and prefetch"},
	{Scenario: "xla-recompile", Guide: "6.2", Pitfall: "XLA recompiles for each new shape",
		Shows: "8 compiles take 98% of the run: compile-bound",
		Fix:   []string{"xla_distinct_shapes=1"}, FixLabel: "one input shape"},
}

// lessonJSON is a lesson or another built-in as the page lists it.
type lessonJSON struct {
	lesson
	Name        string `json:"name"`
	IsPitfall   bool   `json:"is_pitfall"`
	Description string `json:"description"`
	// Explanation is the comment at the top of the scenario's YAML file.
	Explanation string `json:"explanation"`
	// Settings are the controls' values in the scenario as written.
	Settings map[string]string `json:"settings"`
}

// allLessons returns the pitfalls in docs/pitfalls.md's order, then the other built-ins by
// name.
func allLessons() ([]lessonJSON, error) {
	var out []lessonJSON
	seen := map[string]bool{}
	add := func(l lesson, pitfall bool) error {
		sc, err := scenarios.Builtin(l.Scenario)
		if err != nil {
			return err
		}
		src, err := scenarios.BuiltinYAML(l.Scenario)
		if err != nil {
			return err
		}
		out = append(out, lessonJSON{lesson: l, Name: l.Scenario, IsPitfall: pitfall, Description: sc.Description, Explanation: headComment(string(src)), Settings: settings(&sc.Config)})
		seen[l.Scenario] = true
		return nil
	}
	for _, l := range lessons {
		if err := add(l, true); err != nil {
			return nil, err
		}
	}
	for _, n := range scenarios.Names() {
		if !seen[n] {
			if err := add(lesson{Scenario: n}, false); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// headComment returns the comment lines at the top of a YAML file, without their '#'.
func headComment(src string) string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "#") {
			if t == "" && b.Len() == 0 {
				continue
			}
			break
		}
		t = strings.TrimPrefix(strings.TrimPrefix(t, "#"), " ")
		b.WriteString(t + "\n")
	}
	return strings.TrimSpace(b.String())
}
