package validate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/internal/limitread"
	"github.com/gpusim/gpusim/models"
)

// Sources of the measurements the project ships.
const (
	// SourceDLE is NVIDIA's DeepLearningExamples README tables: real TensorFlow 1.x/2.x on
	// DGX-1/DGX-2/DGX A100, throughput (testdata/dle, a measurement-set file).
	SourceDLE = "dle"
	// SourcePyTorch is the PyTorch-eager training steps recorded on the H200 (testdata/h200).
	SourcePyTorch = "h200-pytorch"
	// SourceJAX is the jitted pure-JAX training steps on the H200 (testdata/h200/jax).
	SourceJAX = "h200-jax"
	// SourceKeras is real Keras 3 model.fit on the JAX backend on the H200
	// (testdata/h200/keras).
	SourceKeras = "h200-keras"
)

// ReadShipped reads every measurement under dir (the repository's testdata): the DLE rows
// gpusim can simulate (dle/dle_tf.csv, a measurement-set file), the tf_cnn_benchmarks rows of
// two consumer GPUs (tfcnn/tfcnn.csv, another), the PyTorch H200 steps
// (h200/steps.csv, float32 CNN rows replaced by their NCHW re-run in h200/nchw as TF lays them
// out), the JAX steps (h200/jax/steps.csv) and the Keras steps (h200/keras/steps.csv and the
// later recordings in h200/keras/host, repeat, split, seq and rep) where present. Errors name
// the file, line and column.
func ReadShipped(dir string) ([]Measurement, error) { return readShipped(diskFiles, dir) }

// ReadShippedFS reads the shipped measurements from fsys, dir being the testdata directory's
// path in it (the binary's embedded copy: the root package's Testdata, "testdata"), so that
// gpusim validate runs from any directory. Refs and errors name the files by that path.
func ReadShippedFS(fsys fs.FS, dir string) ([]Measurement, error) {
	return readShipped(func(p string) (io.ReadCloser, error) { return fsys.Open(filepath.ToSlash(p)) }, dir)
}

// files opens a shipped file by the path refs and errors name it by.
type files func(path string) (io.ReadCloser, error)

func diskFiles(path string) (io.ReadCloser, error) { return limitread.Open(path, maxTableBytes) }

func readShipped(open files, dir string) ([]Measurement, error) {
	all, err := readSet(open, filepath.Join(dir, "dle", "dle_tf.csv"))
	if err != nil {
		return nil, err
	}
	tfcnn, err := readSet(open, filepath.Join(dir, "tfcnn", "tfcnn.csv"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	all = append(all, tfcnn...)
	pt, err := readPyTorch(open, filepath.Join(dir, "h200"))
	if err != nil {
		return nil, err
	}
	all = append(all, pt...)
	jax, err := readJAX(open, filepath.Join(dir, "h200", "jax", "steps.csv"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	all = append(all, jax...)
	keras, err := readKeras(open, filepath.Join(dir, "h200", "keras", "steps.csv"))
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
		ms, err := readKerasHost(open, filepath.Join(dir, "h200", "keras", r.sub, r.file), SourceKeras+" "+r.sub)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		all = append(all, ms...)
	}
	return all, nil
}

// recording is what one row of an H200 recording says of its run, before it becomes a
// Measurement's overrides.
type recording struct {
	model, precision, optimizer string
	tf32, xla                   bool
	batch                       int
	extra                       []string // further overrides (the Keras feed)
}

// measurement makes r the Measurement of t's row i: its scenario as overrides, built and
// checked.
func (r recording) measurement(t *table, i int, m Measurement) (Measurement, error) {
	m.Ref = t.ref(i)
	m.Overrides = append([]string{
		"model=" + r.model, "hardware.gpu=h200", "hardware.count=1", "batch=" + strconv.Itoa(r.batch),
		"precision=" + r.precision, "tf32=" + strconv.FormatBool(r.tf32), "xla=" + strconv.FormatBool(r.xla),
		"optimizer=" + r.optimizer,
	}, r.extra...)
	if err := m.build(); err != nil {
		return m, fmt.Errorf("%s:%d: %v", t.path, t.line(i), err)
	}
	if m.Set == "" {
		m.Set = m.Source
	}
	return m, nil
}

// readKerasHost reads a kmodel.csv, ksplit.csv or kseq.csv of tools/h200/keras_host.py
// (h200/keras/host, repeat, split, seq and rep; README.md there): repeats of keras_fit.py's configs
// in later recordings, with the same steps: the synchronised device-fed median, and the
// host-fed fit for 5 epochs of 4 steps (wall_ms_5x4 over 20, as keras_fit.py's host_fed_ms).
// version keeps one recording's rows apart from another's when ratios pair float32 twins.
// Each row is simulated on the host its recording measured (hardware.host.gather_rate): the
// host side of a host-fed step moves with the VM's memory speed, which differed by up to 1.5x
// between recordings and by up to 1.35x between the configs of one (h200/keras/split/README.md).
// The host's gather rate is fit's own gather during the run where the recording timed it
// (gather_ms: next(iterator), one batch of sample_bytes samples sliced and put on the device),
// else the probe's before the fits (probe_gather_ms), which missed fit's gather by up to 21%
// (h200/keras/split); a recording that measured neither runs on the H200 machine's default.
func readKerasHost(open files, path, version string) ([]Measurement, error) {
	t, err := readTable(open, path, "model", "precision", "batch", "image", "wall_ms_5x4", "device_sync_median_ms")
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
		rate, err := kerasGatherRate(t, i)
		if err != nil {
			return nil, err
		}
		dev, err := t.float(i, "device_sync_median_ms")
		if err != nil {
			return nil, err
		}
		wall, err := t.float(i, "wall_ms_5x4")
		if err != nil {
			return nil, err
		}
		d, h, err := kerasFeeds(t, i, v, dev/1e3, wall/20/1e3, rate)
		if err != nil {
			return nil, err
		}
		out = append(out, d, h)
	}
	return out, nil
}

// kerasGatherRate is the host's gather of row i as fit itself timed it during the run where
// the recording has it (gather_ms: next(iterator), one batch's slice and device_put), else as
// the probe before the fits timed it (bytes/s; 0: neither measured).
func kerasGatherRate(t *table, i int) (float64, error) {
	for _, col := range []string{"gather_ms", "probe_gather_ms"} {
		if t.get(i, col) == "" {
			continue
		}
		ms, err := t.float(i, col)
		if err != nil {
			return 0, err
		}
		sb, err := t.float(i, "sample_bytes")
		if err != nil {
			return 0, err
		}
		b, err := t.int(i, "batch")
		if err != nil {
			return 0, err
		}
		return float64(b) * sb / (ms / 1e3), nil
	}
	return 0, nil
}

// kerasFeeds is row i's two measurements, device-fed (step seconds dev; -1: none) and host-fed
// (host; -1: none), on a host that gathers at rate bytes/s (0: the H200 machine's default).
func kerasFeeds(t *table, i int, version string, dev, host, rate float64) (d, h Measurement, err error) {
	r, err := kerasRecording(t, i)
	if err != nil {
		return d, h, err
	}
	base := Measurement{Source: SourceKeras, Framework: "Keras 3.16 model.fit, JAX 0.11.2 backend, jit_compile=True",
		Label: r.precision, Metric: StepTime, Version: version, Note: ""}
	// Keras 3.16 on its JAX backend (testdata/h200/keras/README.md): JAX's gradients and the
	// train step's dispatch over every state array (train/dispatch.go).
	keras := []string{"keras_version=3", "framework=jax"}
	if dev >= 0 {
		// The device-fed rows timed the step on a batch already in GPU memory: no input copy.
		dr := r
		dr.extra = append(append([]string{}, keras...), "input_on_device=true")
		base.Set, base.Value = SourceKeras+" device-fed", dev
		if d, err = dr.measurement(t, i, base); err != nil {
			return d, h, err
		}
	}
	if host >= 0 {
		// model.fit from host numpy arrays: keras_fit.py's phase A, 4 batches of samples fit
		// for 5 epochs, on the host the recording measured.
		hr := r
		hr.extra = append(append([]string{"fit_from_arrays=true"}, keras...), "fit_arrays_samples="+strconv.Itoa(4*r.batch))
		if rate > 0 {
			hr.extra = append(hr.extra, "hardware.host.gather_rate="+formatFloat(rate))
		}
		base.Set, base.Value = SourceKeras+" host-fed", host
		if h, err = hr.measurement(t, i, base); err != nil {
			return d, h, err
		}
	}
	return d, h, nil
}

// readKeras reads h200/keras/steps.csv (tools/h200/keras_fit.py; README.md there): real Keras 3
// model.fit with jit_compile=True on the JAX backend, SGD momentum, keras.applications models.
// Each phase-A config gives two measurements: the device-fed step and the host-fed one
// (host_fed_ms: what fit costs per step from host numpy arrays: shuffle, slicing, the
// host-to-device copy). Phase B re-runs the same configs from the compilation cache for memory
// and max-batch phases are not timing data, so both are left out. The recording measured no
// host speed: its host-fed rows run on the H200 machine's default.
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
func readKeras(open files, path string) ([]Measurement, error) {
	t, err := readTable(open, path, "model", "precision", "batch", "phase", "status", "host_fed_ms", "device_sync_median_ms")
	if err != nil {
		return nil, err
	}
	var out []Measurement
	for i := range t.rows {
		if t.get(i, "phase") != "A" || t.get(i, "status") != "ok" {
			continue
		}
		dev, host := -1.0, -1.0
		if t.get(i, "device_sync_median_ms") != "" {
			ms, err := t.float(i, "device_sync_median_ms")
			if err != nil {
				return nil, err
			}
			dev = ms / 1e3
		}
		if t.get(i, "host_fed_ms") != "" {
			ms, err := t.float(i, "host_fed_ms")
			if err != nil {
				return nil, err
			}
			host = ms / 1e3
		}
		d, h, err := kerasFeeds(t, i, SourceKeras, dev, host, 0)
		if err != nil {
			return nil, err
		}
		if dev >= 0 {
			out = append(out, d)
		}
		if host >= 0 {
			out = append(out, h)
		}
	}
	return out, nil
}

// kerasRecording is what one row of a Keras recording says of its run (model, precision,
// batch; the rest is how every Keras recording ran).
func kerasRecording(t *table, i int) (recording, error) {
	r := recording{precision: t.get(i, "precision"), tf32: true, xla: true, optimizer: "momentum"}
	switch r.precision {
	case "float32", "mixed_float16", "mixed_bfloat16":
	default:
		return r, t.errorf(i, "precision", "%q: want float32, mixed_float16 or mixed_bfloat16", r.precision)
	}
	size, err := t.int(i, "image")
	if err != nil {
		return r, err
	}
	r.model, _ = h200Model(t.get(i, "model"), size)
	if r.model == "inceptionv3:image=299" {
		r.model = "inceptionv3" // 299 is its zoo default
	}
	if err := checkZooModel(t, i, r.model); err != nil {
		return r, err
	}
	r.batch, err = t.int(i, "batch")
	return r, err
}

// checkZooModel refuses a row whose model gpusim's zoo does not have (a typo in the file would
// otherwise surface as one failed row of validate's report, exit 0), and a model file
// ("@path"): a measurement names a zoo model.
func checkZooModel(t *table, i int, spec string) error {
	if strings.HasPrefix(strings.TrimSpace(spec), "@") {
		return t.errorf(i, "model", "%q: want a zoo model name, not a file", spec)
	}
	if _, err := models.Get(spec); err != nil {
		return t.errorf(i, "model", "%v", err)
	}
	return nil
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
		return "", false, t.errorf(i, "prec", "%q: want fp32, tf32, bf16 or fp16", p)
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
func readPyTorch(open files, dir string) ([]Measurement, error) {
	nhwc, err := readPyTorchFile(open, filepath.Join(dir, "steps.csv"), "NHWC")
	if err != nil {
		return nil, err
	}
	nchw, err := readPyTorchFile(open, filepath.Join(dir, "nchw", "steps.csv"), "NCHW")
	if err != nil {
		return nil, err
	}
	key := func(m Measurement) string { return fmt.Sprintf("%s|%s|%d", m.Model(), m.Label, m.Batch()) }
	byKey := map[string]Measurement{}
	for _, m := range nchw {
		byKey[key(m)] = m
	}
	seen := map[string]bool{}
	for i, m := range nhwc {
		seen[key(m)] = true
		isCNN := !strings.HasPrefix(m.Model(), "bert") && !strings.HasPrefix(m.Model(), "gpt2")
		if n, ok := byKey[key(m)]; ok && m.Precision() == "float32" && isCNN && m.Model() != "mobilenetv2" {
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
		nhwc[i].Version = SourcePyTorch
	}
	return nhwc, nil
}

func readPyTorchFile(open files, path, layout string) ([]Measurement, error) {
	t, err := readTable(open, path, "model", "prec", "batch", "seq_or_res", "step_s")
	if err != nil {
		return nil, err
	}
	var out []Measurement
	for i := range t.rows {
		m := Measurement{Source: SourcePyTorch, Framework: "PyTorch 2.11 eager (" + layout + ")",
			Label: t.get(i, "prec"), Metric: StepTime}
		size, _ := strconv.Atoi(t.get(i, "seq_or_res"))
		var r recording
		r.model, r.optimizer = h200Model(t.get(i, "model"), size)
		if r.precision, r.tf32, err = h200Precision(t, i); err != nil {
			return nil, err
		}
		if r.batch, err = t.int(i, "batch"); err != nil {
			return nil, err
		}
		if m.Value, err = t.float(i, "step_s"); err != nil {
			return nil, err
		}
		if m, err = r.measurement(t, i, m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// readJAX reads h200/jax/steps.csv, in tools/h200/jax_step.py's format (model, prec, batch,
// size, optimizer, step_s, error). Rows with an error (a config that failed on the device) or
// no step time are skipped.
func readJAX(open files, path string) ([]Measurement, error) {
	t, err := readTable(open, path, "model", "prec", "batch", "step_s")
	if err != nil {
		return nil, err
	}
	var out []Measurement
	for i := range t.rows {
		if t.get(i, "error") != "" || t.get(i, "step_s") == "" {
			continue
		}
		m := Measurement{Source: SourceJAX, Framework: "JAX 0.11.2 jit (pure JAX step)",
			Label: t.get(i, "prec"), Metric: StepTime, Version: SourceJAX}
		r := recording{xla: true}
		size, _ := strconv.Atoi(t.get(i, "size"))
		r.model, r.optimizer = h200Model(t.get(i, "model"), size)
		if t.get(i, "model") == "bert-base" {
			// jax_step.py trains BERT-base with a classification head (testdata/h200/jax/README.md).
			r.model = fmt.Sprintf("bert-base:seq=%d", size)
		}
		if o := t.get(i, "optimizer"); o != "" {
			r.optimizer = o
		}
		if r.precision, r.tf32, err = h200Precision(t, i); err != nil {
			return nil, err
		}
		if r.batch, err = t.int(i, "batch"); err != nil {
			return nil, err
		}
		if m.Value, err = t.float(i, "step_s"); err != nil {
			return nil, err
		}
		if m, err = r.measurement(t, i, m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
