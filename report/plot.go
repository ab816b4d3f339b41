package report

// Plots with gonum/plot, written as PNG and SVG. Every figure has a title, axis labels with
// units and a legend beside the data (never over it), in a sans-serif font large enough to read
// on a printed page; series differ by dash pattern as well as colour, so a grey-scale print still
// tells them apart.

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Metric keys the plots look up in Run.Metrics (docs/design.md's JSON keys).
const (
	MetricStepTime     = "step_time_s"
	MetricThroughput   = "throughput_samples_per_s"
	MetricUtilization  = "gpu_utilization"
	MetricInputStall   = "input_stall_fraction"
	MetricAllReduce    = "allreduce_time_s"
	MetricSkippedSteps = "skipped_steps"
	MetricPeakInUse    = "peak_bytes_in_use"
	MetricPeakPool     = "peak_pool_bytes"
	MetricBytesLimit   = "bytes_limit"
)

// Legend entries of the memory plot; tests and the HTML report look for them.
const (
	SeriesInUse = "in use"
	SeriesPool  = "pool"
	SeriesLimit = "limit"
	SeriesOOM   = "OOM"
)

// palette is Okabe and Ito's colour-blind-safe palette ("Color Universal Design", 2008),
// black first.
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0xF0, 0xE4, 0x42, 0xff}, // yellow
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
}

// oomColor marks OOMs (vermillion, the palette's alarm colour).
var oomColor = color.RGBA{0xD5, 0x5E, 0x00, 0xff}

// dashes cycle with the colours so series differ in grey-scale prints too.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

// Text sizes for print: a 8 in wide figure scaled to a page column keeps 10 pt ticks legible.
var (
	sansFont  = font.Font{Typeface: "Liberation", Variant: "Sans"}
	titleSize = vg.Points(14)
	labelSize = vg.Points(12)
	tickSize  = vg.Points(10)
)

const (
	figureWidth = 8 * vg.Inch
	panelHeight = 2.8 * vg.Inch
	legendGap   = 0.15 * vg.Inch
	pngDPI      = 150
)

// Figure is one plot ready to be written as PNG or SVG.
type Figure struct {
	// Name is the file name without extension ("memory-memory.mode=growth").
	Name string
	// Title is the figure's heading, for the HTML report.
	Title string
	// Series are the legend entries, in order.
	Series        []string
	Width, Height vg.Length
	panels        []panel
}

// panel is one plot of a figure and its legend, drawn beside it.
type panel struct {
	p      *plot.Plot
	legend plot.Legend
}

// WritePNG writes the figure as a PNG image at 150 dpi.
func (f *Figure) WritePNG(w io.Writer) error {
	c := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	f.draw(draw.New(c))
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w); err != nil {
		return fmt.Errorf("write %s.png: %w", f.Name, err)
	}
	return nil
}

// WriteSVG writes the figure as an SVG document (fonts referenced by name, not embedded).
func (f *Figure) WriteSVG(w io.Writer) error {
	c := vgsvg.New(f.Width, f.Height)
	f.draw(draw.New(c))
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("write %s.svg: %w", f.Name, err)
	}
	return nil
}

// draw lays the panels out top to bottom, each with its legend in a strip on the right.
func (f *Figure) draw(dc draw.Canvas) {
	legendW := vg.Length(0)
	for _, p := range f.panels {
		r := p.legend.Rectangle(dc)
		legendW = max(legendW, r.Max.X-r.Min.X)
	}
	plotArea := dc
	if legendW > 0 {
		// Rectangle leaves out the gap between thumbnail and text: add room for it.
		legendW += legendGap
		plotArea = draw.Crop(dc, 0, -(legendW + legendGap), 0, 0)
	}
	grid := make([][]*plot.Plot, len(f.panels))
	for i, p := range f.panels {
		grid[i] = []*plot.Plot{p.p}
	}
	cells := plot.Align(grid, draw.Tiles{Rows: len(f.panels), Cols: 1, PadY: vg.Points(6), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4)}, plotArea)
	for i, p := range f.panels {
		p.p.Draw(cells[i][0])
		if legendW > 0 {
			lc := dc
			lc.Min = vg.Point{X: plotArea.Max.X + legendGap, Y: cells[i][0].Min.Y}
			lc.Max = vg.Point{X: dc.Max.X, Y: cells[i][0].Max.Y - titleSize*2}
			p.legend.Draw(lc)
		}
	}
}

// newPlot returns a plot with print-sized sans-serif text.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = sansFont
	p.Title.TextStyle.Font.Size = titleSize
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sansFont
		a.Label.TextStyle.Font.Size = labelSize
		a.Tick.Label.Font = sansFont
		a.Tick.Label.Font.Size = tickSize
	}
	p.Add(plotter.NewGrid())
	return p
}

// newLegend returns a legend drawn at the top left of its strip.
func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = sansFont
	l.TextStyle.Font.Size = tickSize
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(24)
	l.Padding = vg.Points(3)
	return l
}

// line returns a line plotter in style i of the palette.
func line(xys plotter.XYs, i int) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.LineStyle.Width = vg.Points(1.8)
	l.LineStyle.Color = palette[i%len(palette)]
	l.LineStyle.Dashes = dashes[i%len(dashes)]
	return l, nil
}

// oomMarks returns large crosses in the OOM colour.
func oomMarks(xys plotter.XYs) (*plotter.Scatter, error) {
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, err
	}
	s.GlyphStyle.Shape = draw.CrossGlyph{}
	s.GlyphStyle.Radius = vg.Points(6)
	s.GlyphStyle.Color = oomColor
	return s, nil
}

// memoryOOMMarks marks each of m's OOMs at the bytes in use when the allocation failed.
func memoryOOMMarks(m MemorySeries) (*plotter.Scatter, error) {
	xys := make(plotter.XYs, len(m.OOMs))
	for i, t := range m.OOMs {
		xys[i] = plotter.XY{X: t, Y: inUseAt(m.Points, t) / gib}
	}
	return oomMarks(xys)
}

const gib = 1 << 30

// MemoryFigure plots memory over time on each GPU of r: bytes in use, the allocator's pool and
// its limit, with a cross where an allocation failed. One panel per GPU.
func MemoryFigure(r *Run) (*Figure, error) {
	if len(r.Memory) == 0 {
		return nil, errors.New("run has no memory series")
	}
	f := &Figure{Name: "memory-" + slug(r.Label), Title: "GPU memory over time: " + r.Label, Width: figureWidth,
		Series: []string{SeriesInUse, SeriesPool, SeriesLimit}}
	anyOOM := false
	for _, m := range r.Memory {
		title := "Memory on " + m.Device
		if len(r.Memory) == 1 || f.panels == nil {
			title = "Memory on " + m.Device + ": " + r.Label
		}
		p := newPlot(title, "time (s)", "memory (GiB)")
		lg := newLegend()
		inUse := make(plotter.XYs, len(m.Points))
		pool := make(plotter.XYs, len(m.Points))
		tEnd := 0.0
		for i, pt := range m.Points {
			inUse[i] = plotter.XY{X: pt.T, Y: float64(pt.InUse) / gib}
			pool[i] = plotter.XY{X: pt.T, Y: float64(pt.Pool) / gib}
			tEnd = max(tEnd, pt.T)
		}
		for _, t := range m.OOMs {
			tEnd = max(tEnd, t)
		}
		// The allocator holds its last state until the run ends (an OOM waits up to 10 s
		// before it fails): draw the lines to the end.
		if n := len(m.Points); n > 0 && m.Points[n-1].T < tEnd {
			inUse = append(inUse, plotter.XY{X: tEnd, Y: inUse[n-1].Y})
			pool = append(pool, plotter.XY{X: tEnd, Y: pool[n-1].Y})
		}
		// The limit goes under the pool line, which a preallocated pool draws over it.
		var lu, lp *plotter.Line
		if len(m.Points) > 0 {
			var err error
			if lu, err = stepLine(inUse, 0); err != nil {
				return nil, fmt.Errorf("memory plot of %s: %w", m.Device, err)
			}
			if lp, err = stepLine(pool, 1); err != nil {
				return nil, fmt.Errorf("memory plot of %s: %w", m.Device, err)
			}
			lg.Add(SeriesInUse, lu)
			lg.Add(SeriesPool, lp)
		}
		if m.Limit > 0 {
			ll, err := line(plotter.XYs{{X: 0, Y: float64(m.Limit) / gib}, {X: tEnd, Y: float64(m.Limit) / gib}}, 7)
			if err != nil {
				return nil, fmt.Errorf("memory plot of %s: %w", m.Device, err)
			}
			ll.LineStyle.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
			ll.LineStyle.Width = vg.Points(1.2)
			p.Add(ll)
			lg.Add(SeriesLimit+" "+FormatBytes(float64(m.Limit)), ll)
		}
		if lu != nil {
			p.Add(lp, lu)
		}
		if len(m.OOMs) > 0 {
			anyOOM = true
			s, err := memoryOOMMarks(m)
			if err != nil {
				return nil, fmt.Errorf("memory plot of %s: %w", m.Device, err)
			}
			p.Add(s)
			lg.Add(SeriesOOM, s)
		}
		p.Y.Min = 0
		f.panels = append(f.panels, panel{p, lg})
	}
	if anyOOM {
		f.Series = append(f.Series, SeriesOOM)
	}
	h := panelHeight
	if len(f.panels) > 4 {
		h = panelHeight * 3 / 4 // 8 GPUs stay within two printed pages
	}
	f.Height = h * vg.Length(len(f.panels))
	return f, nil
}

// stepLine draws a sampled series as steps (the value holds until the next sample), which is
// what allocator counters do.
func stepLine(xys plotter.XYs, i int) (*plotter.Line, error) {
	l, err := line(xys, i)
	if err != nil {
		return nil, err
	}
	l.StepStyle = plotter.PostStep
	return l, nil
}

// inUseAt is the bytes in use at time t (the last sample at or before t), for placing OOM marks.
func inUseAt(ps []MemoryPoint, t float64) float64 {
	v := 0.0
	for _, p := range ps {
		if p.T > t {
			break
		}
		v = float64(p.InUse)
	}
	return v
}

// UtilizationFigure plots each GPU's busy fraction and the input pipeline's prefetch buffer over
// time: the input-bound pattern of the TF guide (utilization under 70% with big swings while
// the buffer sits at zero) shows at a glance.
func UtilizationFigure(r *Run) (*Figure, error) {
	if len(r.Utilization) == 0 && len(r.InputBuffer.Points) == 0 {
		return nil, errors.New("run has no utilization or input buffer series")
	}
	f := &Figure{Name: "utilization-" + slug(r.Label), Title: "GPU utilization and input buffer: " + r.Label, Width: figureWidth}
	if len(r.Utilization) > 0 {
		p := newPlot("GPU utilization: "+r.Label, "time (s)", "busy (%)")
		lg := newLegend()
		for i, u := range r.Utilization {
			xys := make(plotter.XYs, len(u.Points))
			for j, pt := range u.Points {
				xys[j] = plotter.XY{X: pt.T, Y: pt.V * 100}
			}
			l, err := line(xys, i)
			if err != nil {
				return nil, fmt.Errorf("utilization plot of %s: %w", u.Name, err)
			}
			p.Add(l)
			lg.Add(u.Name, l)
			f.Series = append(f.Series, u.Name)
		}
		p.Y.Min, p.Y.Max = 0, 105
		f.panels = append(f.panels, panel{p, lg})
	}
	if len(r.InputBuffer.Points) > 0 {
		name := r.InputBuffer.Name
		if name == "" {
			name = "prefetch buffer"
		}
		p := newPlot("Input pipeline", "time (s)", "batches ready")
		lg := newLegend()
		xys := make(plotter.XYs, len(r.InputBuffer.Points))
		for j, pt := range r.InputBuffer.Points {
			xys[j] = plotter.XY{X: pt.T, Y: pt.V}
		}
		l, err := stepLine(xys, 2)
		if err != nil {
			return nil, fmt.Errorf("input buffer plot: %w", err)
		}
		p.Add(l)
		lg.Add(name, l)
		f.Series = append(f.Series, name)
		// An empty buffer all along (no prefetch) would get an axis around 0: keep 0..1 at least.
		p.Y.Min, p.Y.Max = 0, max(p.Y.Max, 1)
		f.panels = append(f.panels, panel{p, lg})
	}
	f.Height = panelHeight * vg.Length(len(f.panels))
	return f, nil
}

// BreakdownFigure draws the mean step time of each run as a bar stacked by category (forward,
// backward, all-reduce, ...). Runs without a breakdown (OOM before the first step) are labelled.
func BreakdownFigure(runs []Run) (*Figure, error) {
	// Categories no run spends time in (all-reduce on one GPU) would only crowd the legend.
	var cats []string
	seen := map[string]bool{}
	for _, r := range runs {
		for _, s := range r.Breakdown {
			if !seen[s.Category] && s.Seconds > 0 {
				seen[s.Category] = true
				cats = append(cats, s.Category)
			}
		}
	}
	if len(cats) == 0 {
		return nil, errors.New("no run has a step-time breakdown")
	}
	names := shortLabels(runs)
	p := newPlot("Step time by category", paramKeys(runs), "time per step (ms)")
	lg := newLegend()
	width := vg.Points(min(60, 400/float64(len(runs))))
	var below *plotter.BarChart
	top := make([]float64, len(runs))
	var bars []*plotter.BarChart
	for ci, c := range cats {
		vals := make(plotter.Values, len(runs))
		for i, r := range runs {
			for _, s := range r.Breakdown {
				if s.Category == c {
					vals[i] = s.Seconds * 1e3
				}
			}
			top[i] += vals[i]
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, fmt.Errorf("breakdown plot: %w", err)
		}
		b.Color = palette[ci%len(palette)]
		b.LineStyle.Width = vg.Points(0.5)
		if below != nil {
			b.StackOn(below)
		}
		below = b
		bars = append(bars, b)
		p.Add(b)
	}
	// The legend lists the top of the stack first, as it is drawn.
	for i := len(bars) - 1; i >= 0; i-- {
		lg.Add(cats[i], bars[i])
	}
	var oomXY plotter.XYs
	var oomText []string
	for i, r := range runs {
		if r.OOM && top[i] == 0 {
			oomXY = append(oomXY, plotter.XY{X: float64(i), Y: 0})
			oomText = append(oomText, "OOM")
		}
	}
	if len(oomXY) > 0 {
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: oomXY, Labels: oomText})
		if err != nil {
			return nil, fmt.Errorf("breakdown plot: %w", err)
		}
		for i := range l.TextStyle {
			l.TextStyle[i].Font = sansFont
			l.TextStyle[i].Font.Size = labelSize
			l.TextStyle[i].Color = oomColor
			l.TextStyle[i].XAlign = draw.XCenter
		}
		p.Add(l)
	}
	p.NominalX(names...)
	p.Y.Min = 0
	p.X.Tick.Label.Rotation = rotation(names)
	if p.X.Tick.Label.Rotation != 0 {
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	}
	f := &Figure{Name: "breakdown", Title: "Step time by category", Series: cats, Width: figureWidth,
		Height: panelHeight * 1.4, panels: []panel{{p, lg}}}
	return f, nil
}

// rotation tilts category labels when they would collide.
func rotation(names []string) float64 {
	total := 0
	for _, n := range names {
		total += len(n)
	}
	if total*7 > 480 { // ~7 pt per character of 10 pt text, ~480 pt of axis
		return math.Pi / 6
	}
	return 0
}

// shortLabels names runs by the values of the keys that vary ("growth", "growth, 64"), or by
// their labels when they have no parameters.
func shortLabels(runs []Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		if len(r.Params) == 0 {
			out[i] = r.Label
			continue
		}
		vs := make([]string, len(r.Params))
		for j, p := range r.Params {
			vs[j] = p.Value
		}
		out[i] = strings.Join(vs, ", ")
	}
	return out
}

// paramKeys names what shortLabels shows: the varied keys ("memory.mode, batch"), or
// "configuration" when the runs have no parameters.
func paramKeys(runs []Run) string {
	var keys []string
	for _, r := range runs {
		for _, p := range r.Params {
			if !slices.Contains(keys, p.Key) {
				keys = append(keys, p.Key)
			}
		}
	}
	if len(keys) == 0 {
		return "configuration"
	}
	return strings.Join(keys, ", ")
}

// SweepFigure plots throughput and peak memory in use against the values of one varied key,
// one line per combination of the other varied keys. OOM runs are marked with a cross (at zero
// throughput, and at the memory they held when they failed).
func SweepFigure(runs []Run, key string) (*Figure, error) {
	values, idx, groups := sweepAxes(runs, key)
	if len(values) < 2 {
		return nil, fmt.Errorf("key %s takes fewer than two values", key)
	}
	tp := newPlot("Throughput vs "+key, key, "throughput (samples/s)")
	mp := newPlot("Peak memory in use vs "+key, key, "peak memory in use (GiB)")
	tlg, mlg := newLegend(), newLegend()
	f := &Figure{Name: "sweep-" + slug(key), Title: "Throughput and peak memory vs " + key, Width: figureWidth}
	var oom sweepPoints
	for gi, g := range groups {
		pts := groupPoints(runs, key, g, idx)
		oom.tOOM = append(oom.tOOM, pts.tOOM...)
		oom.mOOM = append(oom.mOOM, pts.mOOM...)
		// With one line per panel the metric names it; otherwise the other keys do.
		tname, mname := g, g
		if g == "" {
			tname, mname = "throughput", "peak in use"
		}
		if err := f.addSweepLine(tp, &tlg, pts.throughput, gi, tname); err != nil {
			return nil, fmt.Errorf("sweep plot of %s: %w", key, err)
		}
		if err := f.addSweepLine(mp, &mlg, pts.memory, gi, mname); err != nil {
			return nil, fmt.Errorf("sweep plot of %s: %w", key, err)
		}
	}
	if err := addOOMMarks(tp, &tlg, oom.tOOM); err != nil {
		return nil, fmt.Errorf("sweep plot of %s: %w", key, err)
	}
	if err := addOOMMarks(mp, &mlg, oom.mOOM); err != nil {
		return nil, fmt.Errorf("sweep plot of %s: %w", key, err)
	}
	if len(oom.tOOM)+len(oom.mOOM) > 0 {
		f.Series = append(f.Series, SeriesOOM)
	}
	for _, p := range []*plot.Plot{tp, mp} {
		p.NominalX(values...)
		p.Y.Min = 0
		p.X.Min, p.X.Max = -0.5, float64(len(values))-0.5
	}
	f.panels = []panel{{tp, tlg}, {mp, mlg}}
	f.Height = 2 * panelHeight
	return f, nil
}

// sweepAxes is the values of key in the order the runs first take them (idx: each value's
// x position) and the combinations of the other parameters, one line each.
func sweepAxes(runs []Run, key string) (values []string, idx map[string]int, groups []string) {
	idx = map[string]int{}
	gidx := map[string]int{}
	for _, r := range runs {
		v := r.Param(key)
		if _, ok := idx[v]; !ok {
			idx[v] = len(values)
			values = append(values, v)
		}
		g := otherParams(r, key)
		if _, ok := gidx[g]; !ok {
			gidx[g] = len(groups)
			groups = append(groups, g)
		}
	}
	return values, idx, groups
}

// sweepPoints is one line's points of a sweep: the throughput and peak memory of the runs
// that fit, and where the OOM runs are marked.
type sweepPoints struct {
	throughput, memory plotter.XYs
	tOOM, mOOM         plotter.XYs
}

// groupPoints collects the points of the runs whose other parameters are g.
func groupPoints(runs []Run, key, g string, idx map[string]int) sweepPoints {
	var s sweepPoints
	for _, r := range runs {
		if otherParams(r, key) != g {
			continue
		}
		x := float64(idx[r.Param(key)])
		if m, ok := r.Metric(MetricThroughput); ok && !r.OOM {
			s.throughput = append(s.throughput, plotter.XY{X: x, Y: m.Value})
		} else if r.OOM {
			s.tOOM = append(s.tOOM, plotter.XY{X: x, Y: 0})
		}
		if m, ok := r.Metric(MetricPeakInUse); ok {
			s.memory = append(s.memory, plotter.XY{X: x, Y: m.Value / gib})
			if r.OOM {
				s.mOOM = append(s.mOOM, plotter.XY{X: x, Y: m.Value / gib})
			}
		}
	}
	return s
}

// addSweepLine draws xys on p as line gi with round markers and names it in lg and f's series
// (nothing when xys is empty).
func (f *Figure) addSweepLine(p *plot.Plot, lg *plot.Legend, xys plotter.XYs, gi int, name string) error {
	if len(xys) == 0 {
		return nil
	}
	l, err := line(xys, gi)
	if err != nil {
		return err
	}
	pts, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	pts.GlyphStyle.Color = palette[gi%len(palette)]
	pts.GlyphStyle.Shape = draw.CircleGlyph{}
	pts.GlyphStyle.Radius = vg.Points(3.5)
	p.Add(l, pts)
	lg.Add(name, l, pts)
	if !slices.Contains(f.Series, name) {
		f.Series = append(f.Series, name)
	}
	return nil
}

// addOOMMarks draws the OOM crosses xys on p and names them in lg (nothing when empty).
func addOOMMarks(p *plot.Plot, lg *plot.Legend, xys plotter.XYs) error {
	if len(xys) == 0 {
		return nil
	}
	m, err := oomMarks(xys)
	if err != nil {
		return err
	}
	p.Add(m)
	lg.Add(SeriesOOM, m)
	return nil
}

// otherParams joins the parameters of r other than key: "batch=64, precision=float32".
func otherParams(r Run, key string) string {
	var parts []string
	for _, p := range r.Params {
		if p.Key != key {
			parts = append(parts, p.Key+"="+p.Value)
		}
	}
	return strings.Join(parts, ", ")
}

// Figures returns every figure that runs support, in a fixed order: for each run its memory and
// utilization figures, then (for two runs or more) their memory on one axis
// (MemoryOverlayFigure), then the step-time breakdown, then one sweep figure per varied key that
// takes at least two values. Runs without the data a figure needs are skipped.
func Figures(runs []Run) ([]*Figure, error) {
	var figs []*Figure
	names := map[string]int{}
	add := func(f *Figure) {
		// Two labels may slug to the same name: number the later ones.
		if n := names[f.Name]; n > 0 {
			names[f.Name]++
			f.Name += "-" + strconv.Itoa(n+1)
		} else {
			names[f.Name] = 1
		}
		figs = append(figs, f)
	}
	for i := range runs {
		r := &runs[i]
		if len(r.Memory) > 0 {
			f, err := MemoryFigure(r)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.Label, err)
			}
			add(f)
		}
		if len(r.Utilization) > 0 || len(r.InputBuffer.Points) > 0 {
			f, err := UtilizationFigure(r)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.Label, err)
			}
			add(f)
		}
	}
	withMemory := 0
	for _, r := range runs {
		if len(r.Memory) > 0 {
			withMemory++
		}
	}
	if withMemory >= 2 {
		// A comparison's memory on one shared axis: what the per-run figures, each on its
		// own scale, cannot show.
		f, err := MemoryOverlayFigure(runs)
		if err != nil {
			return nil, err
		}
		add(f)
	}
	hasBreakdown := false
	for _, r := range runs {
		hasBreakdown = hasBreakdown || len(r.Breakdown) > 0
	}
	if hasBreakdown {
		f, err := BreakdownFigure(runs)
		if err != nil {
			return nil, err
		}
		add(f)
	}
	for _, key := range variedKeys(runs) {
		f, err := SweepFigure(runs, key)
		if err != nil {
			return nil, err
		}
		add(f)
	}
	return figs, nil
}

// variedKeys lists the parameter keys that take at least two values across runs, in the order
// they first appear.
func variedKeys(runs []Run) []string {
	var keys []string
	vals := map[string]map[string]bool{}
	for _, r := range runs {
		for _, p := range r.Params {
			if vals[p.Key] == nil {
				vals[p.Key] = map[string]bool{}
				keys = append(keys, p.Key)
			}
			vals[p.Key][p.Value] = true
		}
	}
	var out []string
	for _, k := range keys {
		if len(vals[k]) >= 2 {
			out = append(out, k)
		}
	}
	return out
}

// WritePlots writes every figure of runs into dir (created if missing) as PNG and SVG, or only
// the formats named ("png", "svg"). It returns the paths written, in order. Each file is
// written to a temporary name and renamed, so a reader never sees half a plot.
func WritePlots(dir string, runs []Run, formats ...string) ([]string, error) {
	if len(formats) == 0 {
		formats = []string{"png", "svg"}
	}
	for _, f := range formats {
		if f != "png" && f != "svg" {
			return nil, fmt.Errorf("plot format %q: want png or svg", f)
		}
	}
	figs, err := Figures(runs)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	var paths []string
	for _, fig := range figs {
		if paths, err = writeFigure(paths, dir, fig, formats); err != nil {
			return paths, err
		}
	}
	return paths, nil
}

// WriteFileAtomic writes data to a temporary file next to path and renames it over path
// (atomicfile.WriteBytes).
func WriteFileAtomic(path string, data []byte) error {
	return atomicfile.WriteBytes(path, data)
}

// slug makes a label safe as a file name: letters, digits and ". _ = -" are kept, anything
// else becomes "_".
func slug(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '=', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "run"
	}
	return b.String()
}
