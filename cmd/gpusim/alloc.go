package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gpusim/gpusim/allocator"

	"github.com/gpusim/gpusim/internal/limitread"
)

func init() {
	register(command{name: "alloc", summary: "replay an allocation trace on TensorFlow's BFC allocator", run: runAlloc})
}

const allocUsage = `Usage:
  gpusim alloc replay TRACE.csv --mode growth|preallocate --limit BYTES [flags]

Replays an allocation trace on TensorFlow's GPU allocator (tsl BFCAllocator) and prints the
allocator's statistics after every operation, as CSV with the header
  op,id,bytes,result,bytes_in_use,peak_bytes_in_use,pool_bytes,peak_pool_bytes,largest_free_block_bytes,num_allocs,largest_alloc_size,bytes_limit
(the names of jax.Device.memory_stats()). result is ok or oom.

The trace is CSV with a header naming the columns op, id and bytes (id may be left out: allocs
are then numbered 0, 1, 2, ... in order); more columns are ignored. op is alloc, free or init
(the statistics row that record_bfc_trace.py writes first; it is echoed), so replaying a
recorded trace prints the recorded rows.

A trace may also have a ptr column (record_bfc_trace.py with RECORD_PTR=1: the device
address of each buffer). Each region the allocator grows is then placed at the ptr of the
alloc that grew it, where the CUDA driver placed it on the recording GPU, so ties between
equal-size free chunks of different regions break as they did there; without it (or with
--ignore-ptr) gpusim's model of the driver's placement decides. --with-ptr adds a ptr column: the simulated address of each buffer.

Numeric flag values may carry surrounding whitespace (a \r cut from a CRLF trace): it is ignored.

Examples:
  gpusim alloc replay allocator/testdata/traces/growth-tiny-a.csv --mode growth --limit 750780416
  gpusim alloc replay trace.csv --mode preallocate --limit 112583507968 --variant xla-spatial
  gpusim alloc replay trace.csv --mode growth --limit 8GiB --gc=true -o replayed.csv
  gpusim alloc replay allocator/testdata/traces-ptr/growth-small-b.csv --mode growth --limit 750780416 --with-ptr
`

func runAlloc(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, allocUsage)
		if len(args) == 0 {
			return usagef("alloc: no subcommand (replay)")
		}
		return nil
	}
	if args[0] != "replay" {
		return usagef("alloc: unknown subcommand %q (replay)", args[0])
	}
	return runAllocReplay(ctx, stdout, args[1:])
}

func runAllocReplay(ctx context.Context, stdout io.Writer, args []string) error {
	fs := pflag.NewFlagSet("alloc replay", pflag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprint(stdout, allocUsage+"\nFlags:\n")
		fs.PrintDefaults()
	}
	mode := fs.String("mode", "", "growth (allow_growth, regions doubling from 2 MiB) or preallocate (one region of the whole limit)")
	limitStr := fs.String("limit", "", "the allocator's memory limit (bytes_limit) in bytes, or with a unit: 8GiB, 512MiB")
	variant := fs.String("variant", "classic", "classic (TF 2.x BFC) or xla-spatial (newer XLA, preallocate only); xla-spatial-exact carves the gap exactly")
	gc := fs.Bool("gc", false, "garbage-collect free regions before an OOM (TensorFlow's default is true; JAX, which recorded the example traces, uses false)")
	var frag trimmedFloat // a value cut from a CRLF trace carries a \r: trimmed, like --limit
	fs.Var(&frag, "fragmentation-fraction", "internal_fragmentation_fraction: split chunks that waste more than this fraction of the limit (0 = 128 MiB)")
	withPtr := fs.Bool("with-ptr", false, "add a ptr column: the simulated device address of the buffer each row allocated or freed (0 for init and oom rows)")
	ignorePtr := fs.Bool("ignore-ptr", false, "place regions with gpusim's model of the CUDA driver even when the trace has a ptr column")
	output := fs.StringP("output", "o", "", "write the CSV to `FILE` (atomically) instead of stdout")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return asUsage(fmt.Errorf("alloc replay: %w", err))
	}
	if fs.NArg() != 1 {
		return usagef("alloc replay: want one trace file, got %d arguments", fs.NArg())
	}
	cfg := allocator.ReplayConfig{GarbageCollection: *gc, FragmentationFraction: float64(frag), WithPtr: *withPtr, IgnorePtr: *ignorePtr}
	switch *mode {
	case "growth":
		cfg.Growth = true
	case "preallocate":
	case "":
		return usagef("alloc replay: --mode is required (growth or preallocate)")
	default:
		return usagef("alloc replay: --mode %q: want growth or preallocate", *mode)
	}
	if *limitStr == "" {
		return usagef("alloc replay: --limit is required")
	}
	limit, err := parseAllocBytes(*limitStr)
	if err != nil {
		return usagef("alloc replay: --limit: %v", err)
	}
	cfg.Limit = limit
	if cfg.Variant, err = allocator.ParseVariant(*variant); err != nil {
		return usagef("alloc replay: --variant: %v", err)
	}
	if cfg.Variant != allocator.Classic && cfg.Growth {
		return usagef("alloc replay: --variant %s needs --mode preallocate (spatial partitioning requires a single fixed address range)", *variant)
	}
	if frag < 0 || frag > 1 {
		return usagef("alloc replay: --fragmentation-fraction %v: want a fraction in [0, 1]", float64(frag))
	}
	path := fs.Arg(0)
	f, err := limitread.Open(path, maxAllocTraceBytes)
	if err != nil {
		return asUsage(fmt.Errorf("alloc replay: %w", err))
	}
	defer f.Close()
	tr, err := allocator.ReadTrace(ctxReader{ctx, f}, path)
	if err != nil {
		return asUsage(err)
	}
	if *output == "" {
		err = allocator.WriteReplay(ctxWriter{ctx, stdout}, tr, cfg)
	} else {
		err = writeOutput(ctx, stdout, *output, func(w io.Writer) error { return allocator.WriteReplay(w, tr, cfg) })
		if err != nil {
			err = fmt.Errorf("alloc replay: %w", err)
		}
	}
	if errors.Is(err, allocator.ErrBadTrace) {
		return asUsage(err) // a ptr column that contradicts the replay names file:line
	}
	return err
}

// maxAllocTraceBytes bounds an alloc replay trace: a CSV row is about 30 bytes, so 16 GiB
// holds half a billion operations, more than any TF job's allocator log of one run.
const maxAllocTraceBytes = 16 << 30

// parseAllocBytes reads a byte count: a plain integer or one with a binary unit (KiB, MiB, GiB, TiB).
// Surrounding whitespace is ignored: trace files have CRLF line ends, so a limit cut from one
// with cut or awk ends in "\r".
func parseAllocBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mul    int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	mul := int64(1)
	num := s
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			mul, num = u.mul, strings.TrimSuffix(s, u.suffix)
			break
		}
	}
	var n int64
	if _, err := fmt.Sscan(num, &n); err != nil || fmt.Sprint(n) != num {
		return 0, fmt.Errorf("%q is not a byte count (examples: 750780416, 8GiB)", s)
	}
	if n <= 0 {
		return 0, fmt.Errorf("%q: the limit must be positive", s)
	}
	return n * mul, nil
}

// trimmedFloat is a float64 flag that ignores surrounding whitespace ("0.5\r" from a CRLF file).
type trimmedFloat float64

func (f *trimmedFloat) String() string { return strconv.FormatFloat(float64(*f), 'g', -1, 64) }
func (f *trimmedFloat) Type() string   { return "float64" }
func (f *trimmedFloat) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	*f = trimmedFloat(v)
	return nil
}
