package validate

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gpusim/gpusim/report"
)

// PlotName is the file name (without .png or .svg) that WritePlot writes.
const PlotName = "predicted-vs-measured"

// panelHeight is one metric's panel: square enough for a y = x diagonal to read as 45°.
const panelHeight = 6.5 * vg.Inch

// glyphs cycle with the palette so groups differ in grey-scale prints too.
var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// Plot draws predicted against measured, one log-log panel per metric in v's rows, with the
// y = x line and the band within 10% of it; each point is a row, coloured by group: when the
// rows come from one source (a user's file), by GPU, filled for one GPU and hollow for
// several; else by set. Rows without a prediction (OOM, rejected) are left out and counted in
// the panel's title, as are the rows outside the band.
func Plot(v *Validation) (*report.Figure, error) {
	// 10 in: a square panel beside a legend of a dozen groups.
	fig := report.NewFigure(PlotName, "gpusim predicted vs measured", 10*vg.Inch)
	for _, metric := range metrics {
		var rows []Row
		for _, r := range v.Rows {
			if r.Metric == metric {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			continue
		}
		p, legend, err := metricPanel(metric, rows)
		if err != nil {
			return nil, err
		}
		fig.AddPanel(p, legend, panelHeight)
	}
	if fig.Height == 0 {
		return nil, fmt.Errorf("plot: no measurement to draw")
	}
	return fig, nil
}

// titles names each metric in its panel's title, units on its axes.
var titles = map[Metric]string{Throughput: "throughput", StepTime: "step time", RunMean: "run-mean throughput", TimeToTrain: "time to train"}

// units names each metric's axis.
var units = map[Metric]string{Throughput: "throughput, samples/s", StepTime: "step time, s",
	RunMean: "run-mean throughput, samples/s", TimeToTrain: "time to train, s"}

func metricPanel(metric Metric, rows []Row) (*plot.Plot, plot.Legend, error) {
	by := func(r Row) string { return r.Set }
	if oneSource(rows) {
		by = func(r Row) string {
			if r.GPUs() > 1 {
				return r.GPU() + ", several GPUs"
			}
			return r.GPU() + ", 1 GPU"
		}
	}
	groups := map[string][]Row{}
	lo, hi := math.Inf(1), math.Inf(-1)
	failed, n, outside := 0, 0, 0
	var errs []float64
	for _, r := range rows {
		if !r.ok() {
			failed++
			continue
		}
		groups[by(r)] = append(groups[by(r)], r)
		lo, hi = min(lo, r.Value, r.Predicted), max(hi, r.Value, r.Predicted)
		errs = append(errs, r.Err)
		n++
		if math.Abs(r.Err) > 0.10 {
			outside++
		}
	}
	title := fmt.Sprintf("%s: %d rows, MAE %.0f%%, %d outside ±10%%", titles[metric], n, 100*errStats("", "", "", errs, 0).MAE, outside)
	if failed > 0 {
		title += fmt.Sprintf(", %d not run", failed)
	}
	p := report.NewPlot(title, "measured "+units[metric], "predicted "+units[metric])
	legend := report.NewLegend()
	if n == 0 {
		return p, legend, nil
	}
	// A decade's margin split around the data, so the band and the diagonal span the panel.
	lo, hi = lo/1.25, hi*1.25
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lo, hi, lo, hi
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Scale = plot.LogScale{}
		a.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if err := addBand(p, &legend, lo, hi); err != nil {
		return nil, legend, err
	}
	colour := map[string]int{}
	for _, g := range sortedKeys(groups) {
		rs := groups[g]
		key := g
		if oneSource(rows) {
			key = rs[0].GPU() // one colour per GPU, hollow for several GPUs
		}
		i, ok := colour[key]
		if !ok {
			i = len(colour)
			colour[key] = i
		}
		xys := make(plotter.XYs, len(rs))
		for j, r := range rs {
			xys[j].X, xys[j].Y = r.Value, r.Predicted
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, legend, err
		}
		s.GlyphStyle.Color = report.Color(i)
		s.GlyphStyle.Shape = glyphs[i%len(glyphs)]
		if oneSource(rows) {
			s.GlyphStyle.Shape = draw.CircleGlyph{}
			if rs[0].GPUs() > 1 {
				s.GlyphStyle.Shape = draw.RingGlyph{}
			}
		}
		s.GlyphStyle.Radius = vg.Points(3.5)
		p.Add(s)
		legend.Add(fmt.Sprintf("%s: %d rows, MAE %.0f%%", g, len(rs), 100*mae(rs)), s)
	}
	return p, legend, nil
}

// addBand draws the band within 10% of y = x (light grey) and the diagonal itself.
func addBand(p *plot.Plot, legend *plot.Legend, lo, hi float64) error {
	band, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: lo * 0.9}, {X: hi, Y: hi * 0.9}, {X: hi, Y: hi * 1.1}, {X: lo, Y: lo * 1.1}})
	if err != nil {
		return err
	}
	band.Color = color.Gray{Y: 0xdd}
	band.LineStyle.Width = 0
	diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return err
	}
	diag.LineStyle.Color = color.Gray{Y: 0x40}
	diag.LineStyle.Width = vg.Points(1)
	p.Add(band, diag)
	legend.Add("predicted = measured", diag)
	legend.Add("within ±10%", band)
	return nil
}

func oneSource(rows []Row) bool {
	for _, r := range rows {
		if r.Source != rows[0].Source {
			return false
		}
	}
	return true
}

// WritePlot writes Plot(v) into dir as PNG and SVG and returns the paths.
func WritePlot(dir string, v *Validation) ([]string, error) {
	fig, err := Plot(v)
	if err != nil {
		return nil, err
	}
	return report.WriteFigure(dir, fig)
}
