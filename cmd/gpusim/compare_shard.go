package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/internal/jsonerr"
	"github.com/gpusim/gpusim/internal/limitread"
	"github.com/gpusim/gpusim/report"
)

const compareMergeUsage = `Usage:
  gpusim compare merge PART.json... [-o text|json|csv] [--plot DIR] [--html FILE]

Joins the parts that 'gpusim compare ... --shard K/N' wrote, one per shard, into the
comparison the unsharded 'gpusim compare ...' prints: the same table, figures and report,
byte for byte (the report shows the sweep's command followed by merge's flags). Every shard
of the sweep must be given once, all from the same command.

Examples:
  for k in 0 1 2 3; do gpusim compare --vary batch=32,64,128,256 --shard $k/4 > part-$k.json; done
  gpusim compare merge part-*.json -o csv

Flags:
`

// comparePartFormat names the part file's layout; merge refuses others.
const comparePartFormat = "gpusim-compare-part/1"

// comparePart is what one shard writes: the sweep it belongs to (its command without --shard,
// every configuration's label) and its runs with their places in the sweep. A run's Timeline
// (the Chrome trace's spans, which no comparison output reads) is left out.
type comparePart struct {
	Format  string    `json:"format"`
	Command []string  `json:"command"`
	Shard   int       `json:"shard"`
	Shards  int       `json:"shards"`
	Labels  []string  `json:"labels"`
	Runs    []partRun `json:"runs"`
}

type partRun struct {
	Index int        `json:"index"`
	Run   report.Run `json:"run"`
}

func writeComparePart(ctx context.Context, stdout io.Writer, shard analysis.Shard, command []string, prod *compareProduct, idx []int, results []report.Run) error {
	p := comparePart{Format: comparePartFormat, Command: command, Shard: shard.Index, Shards: shard.Count}
	// Every configuration's label, so that merge knows the whole sweep.
	for i := range int(prod.count.Int64()) {
		if i%4096 == 0 && ctx.Err() != nil {
			return fmt.Errorf("compare: %w", ctx.Err())
		}
		p.Labels = append(p.Labels, prod.config(i).Label)
	}
	for i, r := range results {
		r.Timeline = nil
		p.Runs = append(p.Runs, partRun{Index: idx[i], Run: r})
	}
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("compare: shard %s: %w", shard, err)
	}
	if _, err := stdout.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	return nil
}

// compareWithoutShard returns the compare arguments without the --shard flag and its value.
func compareWithoutShard(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return append(out, args[i:]...)
		case a == "--shard":
			i++
		case strings.HasPrefix(a, "--shard="):
		default:
			out = append(out, a)
		}
	}
	return out
}

func compareMerge(stdout, stderr io.Writer, args []string) error {
	fs := pflag.NewFlagSet("compare merge", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var format, plotDir, htmlFile string
	fs.StringVarP(&format, "output", "o", "text", "table format: text, json or csv")
	widthFlag := fs.Int("width", -1, widthUsage)
	fs.StringVar(&plotDir, "plot", "", "write PNG and SVG figures into `DIR`")
	fs.StringVar(&htmlFile, "html", "", "write a self-contained HTML report to `FILE`")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return usagef("compare merge: %v", err)
	}
	if *help {
		fmt.Fprint(stdout, compareMergeUsage)
		fmt.Fprint(stdout, fs.FlagUsages())
		return nil
	}
	switch format {
	case "text", "json", "csv":
	default:
		return usagef("compare merge: -o %q: want text, json or csv", format)
	}
	width, err := tableWidth(*widthFlag, stdout)
	if err != nil {
		return err
	}
	paths := fs.Args()
	if len(paths) == 0 {
		return usagef("compare merge: no parts given (the files 'gpusim compare ... --shard K/N' wrote)")
	}
	var first *comparePart
	var results []report.Run
	seen := map[int]string{}
	for _, path := range paths {
		p, err := readComparePart(path)
		if err != nil {
			return asUsage(fmt.Errorf("compare merge: %w", err))
		}
		if first == nil {
			first = p
			results = make([]report.Run, len(p.Labels))
		} else if !slices.Equal(p.Command, first.Command) || !slices.Equal(p.Labels, first.Labels) || p.Shards != first.Shards {
			return usagef("compare merge: %s: from another sweep than %s (gpusim compare %s, %d shards; not %s, %d shards)",
				path, paths[0], strings.Join(p.Command, " "), p.Shards, strings.Join(first.Command, " "), first.Shards)
		}
		if prev, dup := seen[p.Shard]; dup {
			return usagef("compare merge: %s: shard %d/%d given twice (also %s)", path, p.Shard, p.Shards, prev)
		}
		seen[p.Shard] = path
		want := analysis.Shard{Index: p.Shard, Count: p.Shards}.Indices(len(p.Labels))
		if len(p.Runs) != len(want) {
			return usagef("compare merge: %s: shard %d/%d holds %d configurations, want %d", path, p.Shard, p.Shards, len(p.Runs), len(want))
		}
		for k, r := range p.Runs {
			if r.Index != want[k] || r.Run.Label != p.Labels[r.Index] {
				return usagef("compare merge: %s: run %d is configuration %d (%s), want %d (%s)", path, k, r.Index, r.Run.Label, want[k], p.Labels[want[k]])
			}
			results[r.Index] = r.Run
		}
	}
	var missing []string
	for k := range first.Shards {
		if _, ok := seen[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, first.Shards))
		}
	}
	if len(missing) > 0 {
		return usagef("compare merge: shard %s missing (give every part of the sweep)", strings.Join(missing, ", "))
	}
	render := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return slices.Contains(paths, a) })
	command := "gpusim compare " + strings.Join(append(slices.Clone(first.Command), render...), " ")
	return compareRender(stdout, stderr, results, format, width, plotDir, htmlFile, command)
}

// maxComparePartBytes bounds a part file: a configuration's results take about 20 kB, so
// 256 MiB holds a part of ten thousand configurations; /dev/zero fails at the bound.
const maxComparePartBytes = 256 << 20

func readComparePart(path string) (*comparePart, error) {
	b, err := limitread.ReadFile(path, maxComparePartBytes)
	if err != nil {
		return nil, err
	}
	var p comparePart
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, jsonerr.Wrap(path, b, err, "not a compare part")
	}
	if p.Format != comparePartFormat {
		return nil, fmt.Errorf("%s: format %q, want %q (a file 'gpusim compare --shard' wrote)", path, p.Format, comparePartFormat)
	}
	if p.Shards < 1 || p.Shard < 0 || p.Shard >= p.Shards {
		return nil, fmt.Errorf("%s: shard %d/%d out of range", path, p.Shard, p.Shards)
	}
	return &p, nil
}
