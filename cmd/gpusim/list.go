package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/report"
	"github.com/gpusim/gpusim/scenarios"
)

func init() {
	register(command{name: "list", summary: "list models, GPU profiles or built-in scenarios", run: runList})
}

// listExamples are the usage examples of gpusim list; a test runs each of them.
var listExamples = []string{
	"gpusim list models",
	"gpusim list models -o json",
	"gpusim list devices",
	"gpusim list scenarios",
	"gpusim list hosts",
	"gpusim list models --file model.json",
}

func listUsage() string {
	s := `Usage:
  gpusim list models|devices|hosts|scenarios [-o text|json] [--file MODEL.json]

Lists the model zoo (Keras names in lower case), the GPU profiles (hardware.gpu), the host and
box profiles (hardware.host.profile: tf.data's CPU, the GPUs' interconnect, the network) or the
built-in scenarios. --file imports a Keras model JSON (model.to_json()) and lists that model.

Examples:
`
	for _, e := range listExamples {
		s += "  " + e + "\n"
	}
	return s
}

// modelJSON is one entry of gpusim list models -o json.
type modelJSON struct {
	Name                     string  `json:"name"`
	Params                   int64   `json:"params"`
	TrainableParams          int64   `json:"trainable_params"`
	FLOPsPerSample           float64 `json:"flops_per_sample"`
	ActivationBytesPerSample float64 `json:"activation_bytes_per_sample"`
}

type deviceJSON struct {
	Name            string   `json:"name"`
	Description     string   `json:"description"`
	MemoryBytes     int64    `json:"memory_bytes"`
	ComputeCap      string   `json:"compute_capability"`
	SMs             int      `json:"sms"`
	MemBandwidth    float64  `json:"mem_bandwidth_bytes_per_s"`
	PeakFP32        float64  `json:"peak_fp32_flops"`
	PeakTF32        float64  `json:"peak_tf32_flops"`
	PeakFP16        float64  `json:"peak_fp16_flops"`
	PeakBF16        float64  `json:"peak_bf16_flops"`
	NVLinkBandwidth float64  `json:"nvlink_bandwidth_bytes_per_s"`
	L2Bytes         int64    `json:"l2_bytes"`
	PowerLimit      float64  `json:"power_limit_w"`
	Cooling         string   `json:"cooling"`
	BoostMHz        float64  `json:"boost_clock_mhz"`
	SustainedMHz    float64  `json:"sustained_clock_mhz"`
	Aliases         []string `json:"aliases"`
	Source          string   `json:"source"`
}

// hostJSON is one entry of gpusim list hosts -o json: the keys of a host file (hw.Host).
type hostJSON struct {
	Name                 string  `json:"name"`
	Cores                int     `json:"cores"`
	ThreadsPerCore       int     `json:"threads_per_core"`
	SMTGain              float64 `json:"smt_gain"`
	MemoryBytes          int64   `json:"memory_bytes"`
	PCIeBandwidth        float64 `json:"pcie_bandwidth"`
	DiskBandwidth        float64 `json:"disk_bandwidth"`
	GPUs                 int     `json:"gpus"`
	Interconnect         string  `json:"interconnect"`
	NVLinkBandwidth      float64 `json:"nvlink_bandwidth"`
	PCIePath             string  `json:"pcie_path"`
	InterSocketBandwidth float64 `json:"inter_socket_bandwidth"`
	Network              string  `json:"network"`
	NICBandwidth         float64 `json:"nic_bandwidth"`
}

type scenarioJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Model       string `json:"model"`
	GPU         string `json:"gpu"`
	GPUs        int    `json:"gpus"`
	Batch       int    `json:"batch"`
}

func runList(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := pflag.NewFlagSet("list", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stdout, listUsage()+"\nFlags:\n")
		fs.SetOutput(stdout)
		fs.PrintDefaults()
	}
	format := fs.StringP("output", "o", "text", "output format: text or json")
	file := fs.String("file", "", "list the model of a Keras JSON `file` instead of the zoo (models only)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return asUsage(fmt.Errorf("list: %w", err))
	}
	if fs.NArg() != 1 {
		return usagef("list: want one of models, devices, hosts, scenarios")
	}
	if *format != "text" && *format != "json" {
		return usagef("list: -o %q: want text or json", *format)
	}
	what := fs.Arg(0)
	if *file != "" && what != "models" {
		return usagef("list: --file applies to models only")
	}
	var rows any
	var err error
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	switch what {
	case "models":
		rows, err = listModels(ctx, tw, *file)
	case "devices":
		rows, err = listDevices(tw)
	case "hosts":
		rows, err = listHosts(tw)
	case "scenarios":
		rows, err = listScenarios(tw)
	default:
		return usagef("list: unknown list %q: want models, devices, hosts or scenarios", what)
	}
	if err != nil {
		return err
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	return tw.Flush()
}

// listModels writes the zoo's table (or file's model alone) to tw and returns its JSON rows.
func listModels(ctx context.Context, tw io.Writer, file string) ([]modelJSON, error) {
	var ms []*models.Model
	if file != "" {
		// As model=@FILE reads it: Keras JSON or a .keras archive, at most models' bound,
		// its sidecar of custom layers, and FILE:image=N.
		m, err := models.GetContext(ctx, "@"+file)
		if err != nil {
			return nil, asUsage(fmt.Errorf("list models: %w", err))
		}
		ms = append(ms, m)
	} else {
		for _, n := range models.Names() {
			m, err := models.Get(n)
			if err != nil {
				return nil, fmt.Errorf("list models: %w", err)
			}
			ms = append(ms, m)
		}
	}
	var out []modelJSON
	// The FLOPs are one sample's forward pass, the activations what it keeps for backward in
	// float32 (models.Model, docs/models.md); the header says so.
	fmt.Fprintln(tw, "NAME\tPARAMS\tTRAINABLE\tFORWARD FLOP/SAMPLE\tACTIVATIONS KEPT/SAMPLE (FP32)")
	for _, m := range ms {
		out = append(out, modelJSON{m.Name, m.Params, m.TrainableParams, m.FLOPsPerSample, m.ActivationBytesPerSample})
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", m.Name, m.Params, m.TrainableParams, report.FormatValue(m.FLOPsPerSample, "FLOP"), report.FormatBytes(m.ActivationBytesPerSample))
	}
	return out, nil
}

// listDevices writes the GPU profiles' table to tw and returns its JSON rows.
func listDevices(tw io.Writer) ([]deviceJSON, error) {
	var out []deviceJSON
	// CLOCK is the clock the card trains at (hw.GPU.SustainedClock: its power limit against
	// its architecture's reference board), and its spec boost clock where they differ.
	fmt.Fprintln(tw, "NAME\tMEMORY\tCC\tSMS\tFP32\tTF32\tFP16\tBF16\tMEM BW\tPOWER\tCLOCK (BOOST)\tALIASES\tDESCRIPTION")
	for _, n := range hw.GPUNames() {
		g, err := hw.LookupGPU(n)
		if err != nil {
			return nil, fmt.Errorf("list devices: %w", err)
		}
		cc := fmt.Sprintf("%d.%d", g.CCMajor, g.CCMinor)
		out = append(out, deviceJSON{g.Name, g.Description, g.MemoryBytes, cc, g.SMs, g.MemBandwidth,
			g.PeakFP32, g.PeakTF32, g.PeakFP16, g.PeakBF16, g.NVLinkBandwidth, g.L2Bytes, g.PowerLimit, g.Cooling,
			math.Round(g.BoostClock() / 1e6), math.Round(g.SustainedClock() / 1e6), append([]string{}, hw.Aliases(n)...), hw.SpecSource(n)})
		clock := fmt.Sprintf("%.0fMHz", g.SustainedClock()/1e6)
		if b := math.Round(g.BoostClock() / 1e6); math.Round(g.SustainedClock()/1e6) != b {
			clock += fmt.Sprintf(" (%.0f)", b)
		}
		al := strings.Join(hw.Aliases(n), ",")
		if al == "" {
			al = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%.0fGB/s\t%gW %s\t%s\t%s\t%s\n", g.Name, report.FormatBytes(float64(g.MemoryBytes)), cc, g.SMs,
			teraFLOPs(g.PeakFP32), teraFLOPs(g.PeakTF32), teraFLOPs(g.PeakFP16), teraFLOPs(g.PeakBF16), g.MemBandwidth/1e9, g.PowerLimit, g.Cooling, clock, al, g.Description)
	}
	return out, nil
}

// teraFLOPs is a peak rate in TFLOP/s for the devices table; "-" for a precision the GPU lacks.
func teraFLOPs(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fT", v/1e12)
}

// listHosts writes the host profiles' table to tw and returns its JSON rows.
func listHosts(tw io.Writer) ([]hostJSON, error) {
	var out []hostJSON
	fmt.Fprintln(tw, "NAME\tCORES\tRAM\tPCIE/GPU\tDISK\tGPUS\tINTERCONNECT\tNETWORK")
	for _, n := range hw.HostNames() {
		h, err := hw.LookupHost(n)
		if err != nil {
			return nil, fmt.Errorf("list hosts: %w", err)
		}
		out = append(out, hostJSON{h.Name, h.Cores, h.ThreadsPerCore, h.SMTGain, h.MemoryBytes, h.PCIeBandwidth,
			h.DiskBandwidth, h.GPUs, h.Interconnect, h.NVLinkBandwidth, h.PCIePath, h.InterSocketBandwidth, h.Network, h.NICBandwidth})
		cores := fmt.Sprint(h.Cores)
		if h.ThreadsPerCore > 1 {
			cores = fmt.Sprintf("%d (%d per core)", h.Cores, h.ThreadsPerCore)
		}
		gpus, nw := "any", "-"
		if h.GPUs > 0 {
			gpus = fmt.Sprint(h.GPUs)
		}
		if h.Network != "" {
			nw = fmt.Sprintf("%s %.1fGB/s per GPU", h.Network, h.NICBandwidth/1e9)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1fGB/s\t%.0fGB/s\t%s\t%s\t%s\n", h.Name, cores, report.FormatBytes(float64(h.MemoryBytes)),
			h.PCIeBandwidth/1e9, h.DiskBandwidth/1e9, gpus, hostInterconnect(h), nw)
	}
	return out, nil
}

// hostInterconnect is the hosts table's INTERCONNECT cell: the PCIe path, or the link and its
// bandwidth; "from the GPU" when the profile leaves it to the GPU's.
func hostInterconnect(h hw.Host) string {
	switch {
	case h.Interconnect == hw.InterconnectPCIe && h.PCIePath != "":
		return "pcie (" + h.PCIePath + ")"
	case h.Interconnect != "" && h.NVLinkBandwidth > 0:
		return fmt.Sprintf("%s %.0fGB/s", h.Interconnect, h.NVLinkBandwidth/1e9)
	case h.Interconnect != "":
		return h.Interconnect
	}
	return "from the GPU"
}

// listScenarios writes the built-in scenarios' table to tw and returns its JSON rows.
func listScenarios(tw io.Writer) ([]scenarioJSON, error) {
	var out []scenarioJSON
	fmt.Fprintln(tw, "NAME\tMODEL\tGPUS\tBATCH\tDESCRIPTION")
	for _, n := range scenarios.Names() {
		s, err := scenarios.Builtin(n)
		if err != nil {
			return nil, fmt.Errorf("list scenarios: %w", err)
		}
		c := s.Config
		out = append(out, scenarioJSON{n, s.Description, c.Model, c.GPU, c.GPUCount, c.Batch})
		fmt.Fprintf(tw, "%s\t%s\t%d x %s\t%d\t%s\n", n, c.Model, c.GPUCount, c.GPU, c.Batch, s.Description)
	}
	return out, nil
}
