package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/internal/jsonerr"
	"github.com/gpusim/gpusim/internal/limitread"
)

const planMergeUsage = `Usage:
  gpusim plan merge PART.json... [-o text|json] [--show 1]

Joins the parts that 'gpusim plan ... --shard K/N' wrote, one per shard, into the plans the
unsharded 'gpusim plan ...' ranks: the same table, figures, intervals, diagnoses, scenario
diffs and TF code, byte for byte. Only the search's counts differ: each shard prunes against
its own top plans, so the roofline, compute and simulated counts are the shards' work summed
("searched N plans in K shards"). Every shard of the search must be given once, all from the
same command.

Examples:
  for k in 0 1 2 3; do gpusim plan resnet50-a100 --shard $k/4 > part-$k.json; done
  gpusim plan merge part-*.json --show 2

Flags:
`

// planPartFormat names the part file's layout; merge refuses others.
const planPartFormat = "gpusim-plan-part/1"

// planPart is what one shard of a plan search writes: the command it belongs to (without
// --shard), its place, how many plans the command ranks, and what it found, as printed.
type planPart struct {
	Format  string   `json:"format"`
	Command []string `json:"command"`
	Shard   int      `json:"shard"`
	Shards  int      `json:"shards"`
	Top     int      `json:"top"`
	View    planView `json:"view"`
}

// planShardFlag parses --shard (nil when not given); a shard writes a part, so the rendering
// flags belong to merge.
func planShardFlag(fs *pflag.FlagSet, arg string) (*analysis.Shard, error) {
	if !fs.Changed("shard") {
		return nil, nil
	}
	s, err := analysis.ParseShard(arg, os.Getenv)
	if err != nil {
		return nil, usagef("plan: --shard: %v", err)
	}
	for _, f := range []string{"output", "show"} {
		if fs.Changed(f) {
			return nil, usagef("plan: --shard writes a part; give --%s to 'gpusim plan merge'", f)
		}
	}
	return &s, nil
}

func writePlanPart(stdout io.Writer, shard analysis.Shard, command []string, top int, v planView) error {
	p := planPart{Format: planPartFormat, Command: command, Shard: shard.Index, Shards: shard.Count, Top: top, View: v}
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("plan: shard %s: %w", shard, err)
	}
	if _, err := stdout.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	return nil
}

func planMerge(stdout io.Writer, args []string) error {
	fs := pflag.NewFlagSet("plan merge", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.StringP("output", "o", "text", "output format: text or json")
	show := fs.Int("show", 1, "top plans shown with their --set lines and TF code")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return usagef("plan merge: %v", err)
	}
	if *help {
		fmt.Fprint(stdout, planMergeUsage+fs.FlagUsages())
		return nil
	}
	switch {
	case *format != "text" && *format != "json":
		return usagef("plan merge: -o %q: want text or json", *format)
	case *show < 0:
		return usagef("plan merge: --show %d: want at least 0", *show)
	case fs.NArg() == 0:
		return usagef("plan merge: no parts given (the files 'gpusim plan ... --shard K/N' wrote)")
	}
	v, err := mergePlanParts(fs.Args())
	if err != nil {
		return err
	}
	if *format == "json" {
		return writeCapacityJSON(stdout, planJSON(v))
	}
	return writePlanText(stdout, v, *show)
}

// mergePlanParts reads the parts at paths, checks they are every shard of one search once,
// and joins them into the view the whole search prints.
func mergePlanParts(paths []string) (planView, error) {
	var first *planPart
	seen := map[int]string{}
	var reps []*analysis.PlanReport
	code := map[int]string{}
	for _, path := range paths {
		p, err := readPlanPart(path)
		if err != nil {
			return planView{}, asUsage(fmt.Errorf("plan merge: %w", err))
		}
		if first == nil {
			first = p
		} else if !slices.Equal(p.Command, first.Command) || p.Shards != first.Shards || p.Top != first.Top {
			return planView{}, usagef("plan merge: %s: from another search than %s (gpusim plan %s, %d shards; not %s, %d shards)",
				path, paths[0], strings.Join(p.Command, " "), p.Shards, strings.Join(first.Command, " "), first.Shards)
		}
		if prev, dup := seen[p.Shard]; dup {
			return planView{}, usagef("plan merge: %s: shard %d/%d given twice (also %s)", path, p.Shard, p.Shards, prev)
		}
		seen[p.Shard] = path
		rep := p.View.Report
		for _, r := range rep.Plans {
			if r.Point < 0 || r.Point%p.Shards != p.Shard {
				return planView{}, usagef("plan merge: %s: plan %d is point %d, not one of shard %d/%d's", path, r.Rank, r.Point, p.Shard, p.Shards)
			}
		}
		reps = append(reps, rep)
		maps.Copy(code, p.View.TFCode)
	}
	var missing []string
	for k := range first.Shards {
		if _, ok := seen[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, first.Shards))
		}
	}
	if len(missing) > 0 {
		return planView{}, usagef("plan merge: shard %s missing (give every part of the search)", strings.Join(missing, ", "))
	}
	rep, err := analysis.MergePlanReports(reps, first.Top)
	if err != nil {
		return planView{}, asUsage(fmt.Errorf("plan merge: %w", err))
	}
	v := first.View
	v.Report, v.TFCode, v.Shards = rep, code, first.Shards
	return v, nil
}

// maxPlanPartBytes bounds a part file: a plan with its TF code takes about 5 kB, and a part
// holds at most --top of them; /dev/zero fails at the bound.
const maxPlanPartBytes = 64 << 20

func readPlanPart(path string) (*planPart, error) {
	b, err := limitread.ReadFile(path, maxPlanPartBytes)
	if err != nil {
		return nil, err
	}
	var p planPart
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, jsonerr.Wrap(path, b, err, "not a plan part")
	}
	switch {
	case p.Format != planPartFormat:
		return nil, fmt.Errorf("%s: format %q, want %q (a file 'gpusim plan --shard' wrote)", path, p.Format, planPartFormat)
	case p.Shards < 1 || p.Shard < 0 || p.Shard >= p.Shards:
		return nil, fmt.Errorf("%s: shard %d/%d out of range", path, p.Shard, p.Shards)
	case p.View.Report == nil || p.View.Report.Current == nil:
		return nil, fmt.Errorf("%s: no report", path)
	case p.Top < 1 || len(p.View.Report.Plans) > p.Top:
		return nil, fmt.Errorf("%s: %d plans for --top %d", path, len(p.View.Report.Plans), p.Top)
	}
	return &p, nil
}
