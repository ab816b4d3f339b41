// Command residuals writes analysis/residuals.csv, the validation residuals gpusim's
// prediction intervals rest on (analysis/uncertainty.go): every shipped measurement that
// `gpusim validate` runs (the PyTorch proxies left out), and the peak memory of every real
// Keras 3 steady state of testdata/h200/keras/memory.csv. Run it from the repository root
// when the predictions move:
//
//	go generate ./analysis    # = go run ./tools/residuals -o analysis/residuals.csv
//
// It prints the leave-one-cluster-out coverage of the 80% interval on stderr.
package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/internal/atomicfile"
	"github.com/gpusim/gpusim/scenarios"
	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/validate"
)

func main() {
	data := flag.String("data", "testdata", "the repository's testdata directory")
	out := flag.String("o", "analysis/residuals.csv", "the table to write")
	flag.Parse()
	if err := run(*data, *out); err != nil {
		fmt.Fprintln(os.Stderr, "residuals:", err)
		os.Exit(1)
	}
}

func run(data, out string) error {
	ctx := context.Background()
	ms, err := validate.ReadShipped(data)
	if err != nil {
		return err
	}
	_, rs, err := validate.Residuals(ctx, ms, validate.Options{Jobs: runtime.GOMAXPROCS(0)})
	if err != nil {
		return err
	}
	peaks, err := kerasPeaks(ctx, filepath.Join(data, "h200", "keras", "memory.csv"))
	if err != nil {
		return err
	}
	rs = append(rs, peaks...)
	var buf bytes.Buffer
	if err := analysis.WriteResiduals(&buf, rs); err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(out, buf.Bytes()); err != nil {
		return err
	}
	u := analysis.NewUncertainty(rs)
	for _, q := range []string{analysis.QuantitySpeed, analysis.QuantityPeak} {
		held, n := u.Coverage(q, 0.8)
		fmt.Fprintf(os.Stderr, "%s: 80%% interval holds %d of %d rows left out by cluster (%.1f%%)\n", q, held, n, 100*float64(held)/float64(n))
	}
	return nil
}

// kerasPeaks are the steady-state peaks (phase B, after_device) of memory.csv against the
// simulation of the same fit: Keras 3 on JAX under XLA, SGD with momentum, as
// train/xla_memory_test.go's TestKerasPeaks runs them.
func kerasPeaks(ctx context.Context, path string) ([]analysis.Residual, error) {
	f, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	recs, err := csv.NewReader(bytes.NewReader(f)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	g, err := hw.LookupGPU("h200")
	if err != nil {
		return nil, err
	}
	var out []analysis.Residual
	for line, r := range recs[1:] {
		if r[col["phase"]] != "B" || r[col["point"]] != "after_device" {
			continue
		}
		model, prec, batch := r[col["model"]], r[col["precision"]], r[col["batch"]]
		real, err := strconv.ParseFloat(r[col["peak_bytes_in_use"]], 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: peak_bytes_in_use: %w", path, line+2, err)
		}
		spec := model
		if model == "inceptionv3" {
			spec = "inceptionv3:image=299"
		}
		sc, err := scenarios.Resolve("default")
		if err != nil {
			return nil, err
		}
		if err := sc.SetAll([]string{"model=" + spec, "precision=" + prec, "batch=" + batch, "xla=true", "hardware.gpu=h200",
			"optimizer=momentum", "framework=jax", "steps=3", "memory.fraction=0.75"}); err != nil {
			return nil, err
		}
		res, err := train.Run(ctx, sc.Config)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line+2, err)
		}
		if res.OOM != nil || len(res.Devices) == 0 {
			return nil, fmt.Errorf("%s:%d: %s %s b%s: simulated OOM", path, line+2, model, prec, batch)
		}
		out = append(out, analysis.Residual{Quantity: analysis.QuantityPeak, Arch: analysis.ArchOf(g), Mix: analysis.MixOf(res), GPUs: 1,
			Cluster: "h200-keras memory|" + model + "|" + prec, LogErr: math.Log(real / float64(res.Devices[0].PeakBytesInUse))})
	}
	return out, nil
}
