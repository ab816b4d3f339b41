package analysis

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/models"

	"github.com/gpusim/gpusim/internal/limitread"
)

// Sources of the measurements Validate compares with.
const (
	// SourceDLE is NVIDIA's DeepLearningExamples README tables: real TensorFlow 1.x/2.x on
	// DGX-1/DGX-2/DGX A100, throughput (testdata/dle).
	SourceDLE = "dle"
	// SourcePyTorch is the PyTorch-eager training steps recorded on the H200 (testdata/h200).
	SourcePyTorch = "h200-pytorch"
	// SourceJAX is the jitted pure-JAX training steps on the H200 (testdata/h200/jax).
	SourceJAX = "h200-jax"
	// SourceKeras is real Keras 3 model.fit on the JAX backend on the H200
	// (testdata/h200/keras).
	SourceKeras = "h200-keras"
)

// Measurement is one real measurement the project ships, with the scenario that reproduces it.
type Measurement struct {
	// Source is one of the Source constants; Ref names the file and line it was read from,
	// and for DLE rows the README and commit it came from.
	Source, Ref string
	// Framework is what ran it ("TF 1.15 (NGC 20.06-tf1-py3)", "PyTorch 2.11 eager", ...).
	Framework string
	// Model is the gpusim zoo spec ("resnet50-v1.5", "bert-large:seq=384").
	Model string
	// GPU is the gpusim profile name and GPUs how many ran data-parallel.
	GPU  string
	GPUs int
	// Host is the hw host profile of the box the row ran on (dgx-1, dgx-2, dgx-a100: the DLE
	// table's system), "" when the row names no box gpusim has a profile of.
	Host string
	// Batch is the batch per GPU (one micro-batch); Accumulation the micro-batches per
	// optimizer update (0 or 1: none).
	Batch, Accumulation int
	// Precision is the Keras policy ("float32", "mixed_float16", "mixed_bfloat16"), TF32 whether
	// TF32 math was on, Label the measurement's own name for it ("amp_fp16", "tf32", "bf16").
	Precision string
	TF32      bool
	Label     string
	XLA       bool
	Optimizer string
	// StepTime says the value is a step time in seconds; otherwise it is a throughput in
	// samples per second summed over the GPUs.
	StepTime bool
	Value    float64
	// Data is "real" (a dataset read from disk) or "synthetic"; Note is free text (how the XLA
	// flag is known, what stands in for what).
	Data, Note string
	// Feed is how the Keras recordings fed the step: "device-fed" (the batch already on the
	// GPU) or "host-fed" (model.fit from host arrays); "" for the others.
	Feed string
	// Samples is, for a host-fed row, how many samples fit's numpy arrays held (an epoch is
	// ceil(Samples/Batch) steps); 0 when unknown or not host-fed.
	Samples int
	// HostGatherRate is the rate at which the recording's host gathered a shuffled batch out
	// of numpy arrays (bytes/s), measured by a probe in the same process just before the fits
	// (tools/h200/keras_host.py, host_probe); 0 when the recording measured none, and the
	// simulation takes the H200 machine's default.
	HostGatherRate float64
	// TFVersion is the TensorFlow release that ran it (MAJOR.MINOR), "" when not TF.
	TFVersion string
	// Env is the TF environment the run set that changes what gpusim simulates (the DLE
	// table's env column: TF_ENABLE_AUTO_MIXED_PRECISION=1 for TF1's graph-rewrite AMP).
	Env map[string]string
	// Commit is, for a DLE row, the README commit its table comes from ("415a9aa3").
	Commit string
	// RunSteps is, for a figure that averages a whole training run (its one-off costs
	// included: dle_runmean.go), the optimizer updates of that run; 0 for a steady state.
	RunSteps int
	// Version groups measurements taken together (one README version and table, one
	// recording run), so that ratios pair like with like.
	Version string
}

// ReadMeasurements reads every measurement under dir (the repository's testdata): the DLE
// rows gpusim can simulate (dle/dle_tf.csv), the PyTorch H200 steps (h200/steps.csv, float32
// CNN rows replaced by their NCHW re-run in h200/nchw as TF lays them out), the JAX steps
// (h200/jax/steps.csv) and the Keras steps (h200/keras/steps.csv and the later recordings in
// h200/keras/host, repeat, split, seq and rep) where present. Errors name the file, line and column.
func ReadMeasurements(dir string) ([]Measurement, error) {
	var all []Measurement
	dle, err := readDLE(filepath.Join(dir, "dle", "dle_tf.csv"))
	if err != nil {
		return nil, err
	}
	all = append(all, dle...)
	pt, err := readPyTorch(filepath.Join(dir, "h200"))
	if err != nil {
		return nil, err
	}
	all = append(all, pt...)
	jax, err := readJAXLike(filepath.Join(dir, "h200", "jax", "steps.csv"), SourceJAX, "JAX 0.11.2 jit (pure JAX step)")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	all = append(all, jax...)
	keras, err := readKeras(filepath.Join(dir, "h200", "keras", "steps.csv"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	all = append(all, keras...)
	// The later Keras recordings, each with its host's speed measured (README.md in each
	// folder): host and repeat re-run keras_fit.py's configs; split times fit's host work
	// piece by piece; seq repeats the first recording's ResNet-50 sequence one process per
	// config; rep runs ResNet-50 batch 64 in three precisions three times over, interleaved,
	// to show how far one config's host-fed step moves between runs on the same machine. A
	// config run again within a recording is kept apart by its round.
	for _, r := range []struct{ sub, file string }{
		{"host", "kmodel.csv"}, {"repeat", "kmodel.csv"}, {"split", "ksplit.csv"}, {"seq", "kseq.csv"}, {"rep", "kseq.csv"},
	} {
		ms, err := readKerasHost(filepath.Join(dir, "h200", "keras", r.sub, r.file), SourceKeras+" "+r.sub)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		all = append(all, ms...)
	}
	return all, nil
}

// readKerasHost reads a kmodel.csv, ksplit.csv or kseq.csv of tools/h200/keras_host.py
// (h200/keras/host, repeat, split, seq and rep; README.md there): repeats of keras_fit.py's configs
// in later recordings, with the same steps: the synchronised device-fed median, and the
// host-fed fit for 5 epochs of 4 steps (wall_ms_5x4 over 20, as keras_fit.py's host_fed_ms).
// version keeps one recording's rows apart from another's when ratios pair float32 twins.
// Each row is simulated on the host its recording measured (HostGatherRate): the host side of
// a host-fed step moves with the VM's memory speed, which differed by up to 1.5x between
// recordings and by up to 1.35x between the configs of one (h200/keras/split/README.md). The
// host's gather rate is fit's own gather during the run where the recording timed it
// (gather_ms: next(iterator), one batch of sample_bytes samples sliced and put on the device),
// else the probe's before the fits (probe_gather_ms), which missed fit's gather by up to 21%
// (h200/keras/split); a recording that measured neither runs on the H200 machine's default.
func readKerasHost(path, version string) ([]Measurement, error) {
	t, err := readTable(path, "model", "precision", "batch", "image", "wall_ms_5x4", "device_sync_median_ms")
	if err != nil {
		return nil, err
	}
	var out []Measurement
	for i := range t.rows {
		v := version
		if r := t.get(i, "round"); r != "" && r != "1" {
			// A config run again later in the same recording (h200/keras/seq, rep): its own
			// version, so that ratios pair it with the float32 twin of its own round.
			v += " round " + r
		}
		base, err := kerasRow(t, i, v)
		if err != nil {
			return nil, err
		}
		// The host's gather as fit itself timed it during the run where the recording has it
		// (gather_ms: next(iterator), one batch's slice and device_put), else as the probe
		// before the fits timed it.
		for _, col := range []string{"gather_ms", "probe_gather_ms"} {
			if t.get(i, col) == "" {
				continue
			}
			ms, err := t.float(i, col)
			if err != nil {
				return nil, err
			}
			sb, err := t.float(i, "sample_bytes")
			if err != nil {
				return nil, err
			}
			if ms <= 0 || sb <= 0 {
				return nil, fmt.Errorf("%s:%d: %s %g, sample_bytes %g: want positive figures", t.path, t.line(i), col, ms, sb)
			}
			base.HostGatherRate = float64(base.Batch) * sb / (ms / 1e3)
			break
		}
		dev, err := t.float(i, "device_sync_median_ms")
		if err != nil {
			return nil, err
		}
		wall, err := t.float(i, "wall_ms_5x4")
		if err != nil {
			return nil, err
		}
		d, h := base, base
		d.Feed, d.Value = "device-fed", dev/1e3
		h.Feed, h.Value, h.Samples = "host-fed", wall/20/1e3, 4*base.Batch
		out = append(out, d, h)
	}
	return out, nil
}

// readKeras reads h200/keras/steps.csv (tools/h200/keras_fit.py; README.md there): real Keras 3
// model.fit with jit_compile=True on the JAX backend, SGD momentum, keras.applications models.
// Each phase-A config gives two measurements: the device-fed step and the host-fed one
// (host_fed_ms: what fit costs per step from host numpy arrays: shuffle, slicing, the
// host-to-device copy). Phase B re-runs the same configs from the compilation cache for memory
// and max-batch phases are not timing data, so both are left out.
//
// The device-fed value is device_sync_median_ms, the compiled train step on a batch already on
// the GPU with the host waiting for each step's result, not device_fed_ms (20 steps
// dispatched back to back, their mean). gpusim's step is the first kind: its host work per
// step (hw.GPU.StepOverhead: dispatch, the Python loop) runs before the step's kernels with the
// GPU idle, and ends when the last kernel does, as a loop that reads the loss every step (TF
// Keras's fit: its progress bar converts the logs to numbers each batch, and TF's backend is
// not thread-safe, so keras/src/callbacks/callback_list.py never dispatches callbacks
// asynchronously there). StepOverhead is itself measured as the synchronised step minus the
// pipelined one (hw.DefaultStepOverhead), so comparing gpusim with device_fed_ms would count
// that host time on one side only. Keras on JAX does dispatch callbacks asynchronously
// (IS_THREAD_SAFE), which is why the pipelined figure is 0.8-4.1 ms below it.
func readKeras(path string) ([]Measurement, error) {
	t, err := readTable(path, "model", "precision", "batch", "phase", "status", "host_fed_ms", "device_sync_median_ms")
	if err != nil {
		return nil, err
	}
	var out []Measurement
	for i := range t.rows {
		if t.get(i, "phase") != "A" || t.get(i, "status") != "ok" {
			continue
		}
		base, err := kerasRow(t, i, SourceKeras)
		if err != nil {
			return nil, err
		}
		for _, feed := range []struct{ col, name string }{{"device_sync_median_ms", "device-fed"}, {"host_fed_ms", "host-fed"}} {
			if t.get(i, feed.col) == "" {
				continue
			}
			m := base
			m.Feed = feed.name
			if feed.name == "host-fed" {
				// keras_fit.py's phase A: 4 batches of samples, fit for 5 epochs.
				m.Samples = 4 * base.Batch
			}
			ms, err := t.float(i, feed.col)
			if err != nil {
				return nil, err
			}
			m.Value = ms / 1e3
			out = append(out, m)
		}
	}
	return out, nil
}

// kerasRow is what one row of a Keras recording says of its run (model, precision, batch;
// the rest is how every Keras recording ran); version keeps one recording's rows apart from
// another's when ratios pair float32 twins.
func kerasRow(t *table, i int, version string) (Measurement, error) {
	m := Measurement{Source: SourceKeras, Ref: t.ref(i), Framework: "Keras 3.16 model.fit, JAX 0.11.2 backend, jit_compile=True",
		GPU: "h200", GPUs: 1, Label: t.get(i, "precision"), Precision: t.get(i, "precision"), TF32: true, XLA: true,
		StepTime: true, Data: "synthetic", Version: version, Optimizer: "momentum"}
	switch m.Precision {
	case "float32", "mixed_float16", "mixed_bfloat16":
	default:
		return m, fmt.Errorf("%s:%d: precision: %q: want float32, mixed_float16 or mixed_bfloat16", t.path, t.line(i), m.Precision)
	}
	size, err := t.int(i, "image")
	if err != nil {
		return m, err
	}
	m.Model, _ = h200Model(t.get(i, "model"), size)
	if m.Model == "inceptionv3:image=299" {
		m.Model = "inceptionv3" // 299 is its zoo default
	}
	if err := checkZooModel(t, i, m.Model); err != nil {
		return m, err
	}
	m.Batch, err = t.int(i, "batch")
	return m, err
}

// checkZooModel refuses a row whose model gpusim's zoo does not have (a typo in the file would
// otherwise surface as one failed row of validate's report, exit 0), and a model file
// ("@path"): a measurement names a zoo model.
func checkZooModel(t *table, i int, spec string) error {
	if strings.HasPrefix(strings.TrimSpace(spec), "@") {
		return fmt.Errorf("%s:%d: model: %q: want a zoo model name, not a file", t.path, t.line(i), spec)
	}
	if _, err := models.Get(spec); err != nil {
		return fmt.Errorf("%s:%d: model: %w", t.path, t.line(i), err)
	}
	return nil
}

// table is a CSV file read with its header, for line-numbered errors.
type table struct {
	path string
	col  map[string]int
	rows [][]string
}

func readTable(path string, need ...string) (*table, error) {
	f, err := limitread.Open(path, maxTableBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseTable(path, f, need...)
}

// maxTableBytes bounds a measurement CSV: the shipped ones are under 100 kB.
const maxTableBytes = 256 << 20

// parseTable parses a measurement CSV. A file cut short is refused on the line where it
// stops, whichever way it was cut: mid-header or mid-row (a row without the header's fields),
// mid-value (no newline at the end: every recording tools/ writes ends its last row with
// one), or right after the header (no rows: the whole set would vanish from the report).
func parseTable(path string, r io.Reader, need ...string) (*table, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s:%d: column %d: %w", path, pe.Line, pe.Column, pe.Err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s:1: no header: the file is empty", path)
	}
	// Every row has the header's fields: a file cut short (a copy that stopped mid-row) would
	// otherwise lose its last row's trailing columns, read as empty, without a word.
	for i, r := range recs[1:] {
		if n := len(recs[0]); len(r) < n {
			return nil, fmt.Errorf("%s:%d: truncated row: %d of the header's %d fields", path, i+2, len(r), n)
		} else if len(r) > n {
			return nil, fmt.Errorf("%s:%d: %d fields, more than the header's %d", path, i+2, len(r), n)
		}
	}
	t := &table{path: path, col: map[string]int{}, rows: recs[1:]}
	for i, h := range recs[0] {
		t.col[h] = i
	}
	for _, k := range need {
		if _, ok := t.col[k]; !ok {
			return nil, fmt.Errorf("%s:1: %s: missing column", path, k)
		}
	}
	if last := bytes.Count(data, []byte("\n")) + 1; data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("%s:%d: no newline at the end: the file is cut short", path, last)
	}
	if len(t.rows) == 0 {
		return nil, fmt.Errorf("%s:2: no rows after the header: the file is cut short", path)
	}
	return t, nil
}

// get returns row i's value of column k ("" when absent).
func (t *table) get(i int, k string) string {
	j, ok := t.col[k]
	if !ok || j >= len(t.rows[i]) {
		return ""
	}
	return strings.TrimSpace(t.rows[i][j])
}

func (t *table) line(i int) int { return i + 2 }

func (t *table) ref(i int) string { return fmt.Sprintf("%s:%d", filepath.ToSlash(t.path), t.line(i)) }

func (t *table) float(i int, k string) (float64, error) {
	v, err := strconv.ParseFloat(t.get(i, k), 64)
	if err != nil || !(v > 0) {
		return 0, fmt.Errorf("%s:%d: %s: %q is not a positive number", t.path, t.line(i), k, t.get(i, k))
	}
	return v, nil
}

func (t *table) int(i int, k string) (int, error) {
	v, err := strconv.Atoi(t.get(i, k))
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%s:%d: %s: %q is not a positive integer", t.path, t.line(i), k, t.get(i, k))
	}
	return v, nil
}

// readDLE reads testdata/dle/dle_tf.csv (tools/dle/select.py's output; README.md there says
// which rows and why).
func readDLE(path string) ([]Measurement, error) {
	t, err := readTable(path, "source_path", "commit", "framework_version", "system", "num_gpus", "precision",
		"xla", "xla_source", "batch_per_gpu", "value", "data", "model", "gpu", "gpusim_precision", "optimizer", "table_heading")
	if err != nil {
		return nil, err
	}
	var out []Measurement
	for i := range t.rows {
		m := Measurement{Source: SourceDLE, Framework: t.get(i, "framework_version"), Model: t.get(i, "model"),
			GPU: t.get(i, "gpu"), Label: t.get(i, "precision"), Precision: t.get(i, "gpusim_precision"),
			Optimizer: t.get(i, "optimizer"), Data: t.get(i, "data"),
			// NGC's TF containers run float32 math as TF32 on Ampere (NVIDIA_TF32_OVERRIDE unset),
			// as stock TF 2.4+ does: TF32 is on for every row; it changes nothing before Ampere.
			TF32: true,
		}
		switch sys := t.get(i, "system"); sys {
		case "DGX-1", "DGX-2", "DGX A100":
			m.Host = strings.ToLower(strings.ReplaceAll(sys, " ", "-"))
		}
		m.Ref = fmt.Sprintf("%s (%s@%s, %q)", t.ref(i), t.get(i, "source_path"), t.get(i, "commit"), t.get(i, "table_heading"))
		m.Commit = t.get(i, "commit")
		m.Version = strings.Join([]string{t.get(i, "source_path"), t.get(i, "commit"), t.get(i, "system"), t.get(i, "table_heading")}, "|")
		switch t.get(i, "xla") {
		case "yes":
			m.XLA = true
		case "no":
		default:
			return nil, fmt.Errorf("%s:%d: xla: %q: want yes or no", t.path, t.line(i), t.get(i, "xla"))
		}
		if s := t.get(i, "xla_source"); s != "stated" {
			m.Note = "XLA " + s
		}
		if m.GPUs, err = t.int(i, "num_gpus"); err != nil {
			return nil, err
		}
		if m.Batch, err = t.int(i, "batch_per_gpu"); err != nil {
			return nil, err
		}
		if m.Value, err = t.float(i, "value"); err != nil {
			return nil, err
		}
		m.Accumulation = 1
		if t.get(i, "accumulation_steps") != "" {
			if m.Accumulation, err = t.int(i, "accumulation_steps"); err != nil {
				return nil, err
			}
		}
		m.TFVersion = t.get(i, "tf_version")
		m.RunSteps = dleRunSteps(t.get(i, "source_path"), m.Commit, m.Model, m.GPUs, m.Batch*m.Accumulation)
		if e := t.get(i, "env"); e != "" {
			m.Env = map[string]string{}
			for _, kv := range strings.Split(e, ";") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return nil, fmt.Errorf("%s:%d: env: %q: want KEY=VALUE[;KEY=VALUE]", t.path, t.line(i), e)
				}
				m.Env[k] = v
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// h200Precision maps the H200 recordings' prec column to a Keras policy and the TF32 flag.
func h200Precision(t *table, i int) (policy string, tf32 bool, err error) {
	switch p := t.get(i, "prec"); p {
	case "fp32":
		return "float32", false, nil
	case "tf32":
		return "float32", true, nil
	case "bf16":
		return "mixed_bfloat16", true, nil
	case "fp16":
		return "mixed_float16", true, nil
	default:
		return "", false, fmt.Errorf("%s:%d: prec: %q: want fp32, tf32, bf16 or fp16", t.path, t.line(i), p)
	}
}

// h200Model is the zoo spec and optimizer of a recorded model: the harnesses ran BERT with its
// masked-LM head at sequence 128 and GPT-2 at 1024 with AdamW, the CNNs with SGD momentum.
func h200Model(name string, size int) (spec, optimizer string) {
	switch name {
	case "bert-base":
		return fmt.Sprintf("bert-base:seq=%d,head=mlm", size), "adamw"
	case "gpt2":
		return fmt.Sprintf("gpt2:seq=%d", size), "adamw"
	}
	if size > 0 && size != 224 {
		return fmt.Sprintf("%s:image=%d", name, size), "momentum"
	}
	return name, "momentum"
}

// readPyTorch reads h200/steps.csv and h200/nchw/steps.csv. TF's layout optimizer runs
// float32 convolutions NCHW (generic_layout_optimizer.cc), so the NCHW re-run replaces the
// float32/TF32 CNN rows, except MobileNetV2's (TF runs its depthwise convolutions with its own
// kernels, not cuDNN's slow NCHW depthwise ones); configs measured only in the NCHW run are
// added.
func readPyTorch(dir string) ([]Measurement, error) {
	read := func(path, version string) ([]Measurement, error) {
		t, err := readTable(path, "model", "prec", "batch", "seq_or_res", "step_s")
		if err != nil {
			return nil, err
		}
		var out []Measurement
		for i := range t.rows {
			m := Measurement{Source: SourcePyTorch, Ref: t.ref(i), Framework: "PyTorch 2.11 eager (" + version + ")",
				GPU: "h200", GPUs: 1, Label: t.get(i, "prec"), StepTime: true, Data: "synthetic", Version: version}
			size, _ := strconv.Atoi(t.get(i, "seq_or_res"))
			m.Model, m.Optimizer = h200Model(t.get(i, "model"), size)
			if m.Precision, m.TF32, err = h200Precision(t, i); err != nil {
				return nil, err
			}
			if m.Batch, err = t.int(i, "batch"); err != nil {
				return nil, err
			}
			if m.Value, err = t.float(i, "step_s"); err != nil {
				return nil, err
			}
			out = append(out, m)
		}
		return out, nil
	}
	nhwc, err := read(filepath.Join(dir, "steps.csv"), "NHWC")
	if err != nil {
		return nil, err
	}
	nchw, err := read(filepath.Join(dir, "nchw", "steps.csv"), "NCHW")
	if err != nil {
		return nil, err
	}
	key := func(m Measurement) string { return fmt.Sprintf("%s|%s|%d", m.Model, m.Label, m.Batch) }
	byKey := map[string]Measurement{}
	for _, m := range nchw {
		byKey[key(m)] = m
	}
	seen := map[string]bool{}
	for i, m := range nhwc {
		seen[key(m)] = true
		isCNN := !strings.HasPrefix(m.Model, "bert") && !strings.HasPrefix(m.Model, "gpt2")
		if n, ok := byKey[key(m)]; ok && m.Precision == "float32" && isCNN && m.Model != "mobilenetv2" {
			nhwc[i] = n
		}
	}
	for _, m := range nchw {
		if !seen[key(m)] {
			nhwc = append(nhwc, m)
		}
	}
	// One ratio group per recording: the NCHW float32 rows stand in for the NHWC run's.
	for i := range nhwc {
		nhwc[i].Version = "h200-pytorch"
	}
	return nhwc, nil
}

// readJAXLike reads a steps.csv in tools/h200/jax_step.py's format (model, prec, batch, size,
// optimizer, step_s, error): the JAX steps and the Keras model.fit steps. Rows with an error
// (a config that failed on the device) or no step time are skipped.
func readJAXLike(path, source, framework string) ([]Measurement, error) {
	t, err := readTable(path, "model", "prec", "batch", "step_s")
	if err != nil {
		return nil, err
	}
	var out []Measurement
	for i := range t.rows {
		if t.get(i, "error") != "" || t.get(i, "step_s") == "" {
			continue
		}
		m := Measurement{Source: source, Ref: t.ref(i), Framework: framework, GPU: "h200", GPUs: 1,
			Label: t.get(i, "prec"), XLA: true, StepTime: true, Data: "synthetic", Version: source}
		size, _ := strconv.Atoi(t.get(i, "size"))
		m.Model, m.Optimizer = h200Model(t.get(i, "model"), size)
		if source == SourceJAX && t.get(i, "model") == "bert-base" {
			// jax_step.py trains BERT-base with a classification head (testdata/h200/jax/README.md).
			m.Model = fmt.Sprintf("bert-base:seq=%d", size)
		}
		if o := t.get(i, "optimizer"); o != "" {
			m.Optimizer = o
		}
		if m.Precision, m.TF32, err = h200Precision(t, i); err != nil {
			return nil, err
		}
		if m.Batch, err = t.int(i, "batch"); err != nil {
			return nil, err
		}
		if m.Value, err = t.float(i, "step_s"); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
