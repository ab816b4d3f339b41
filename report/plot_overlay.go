package report

import (
	"errors"
	"fmt"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// MemoryOverlayFigure draws the memory of every run on one axis per GPU, so that the runs of
// a comparison (preallocate, growth and limit) can be read against each other: each run has
// its colour, its bytes in use a solid line, its pool a dashed one and its limit a dotted one,
// with a cross where an allocation failed. The per-run figures (MemoryFigure) have a scale
// each; this one shares it. GPU i of every run goes into panel i.
func MemoryOverlayFigure(runs []Run) (*Figure, error) {
	gpus := 0
	for _, r := range runs {
		gpus = max(gpus, len(r.Memory))
	}
	if gpus == 0 {
		return nil, errors.New("no run has a memory series")
	}
	f := &Figure{Name: "memory-compare", Title: "GPU memory over time, every configuration on one axis", Width: figureWidth}
	anyOOM := false
	for g := range gpus {
		title := "Memory of every configuration"
		if gpus > 1 {
			title += fmt.Sprintf(" (GPU %d of each)", g)
		}
		p := newPlot(title, "time (s)", "memory (GiB)")
		lg := newLegend()
		for k, r := range runs {
			if g >= len(r.Memory) {
				continue
			}
			m := r.Memory[g]
			inUse := make(plotter.XYs, 0, len(m.Points)+1)
			pool := make(plotter.XYs, 0, len(m.Points)+1)
			tEnd := 0.0
			for _, pt := range m.Points {
				inUse = append(inUse, plotter.XY{X: pt.T, Y: float64(pt.InUse) / gib})
				pool = append(pool, plotter.XY{X: pt.T, Y: float64(pt.Pool) / gib})
				tEnd = max(tEnd, pt.T)
			}
			for _, t := range m.OOMs {
				tEnd = max(tEnd, t)
			}
			if n := len(inUse); n > 0 && inUse[n-1].X < tEnd {
				inUse = append(inUse, plotter.XY{X: tEnd, Y: inUse[n-1].Y})
				pool = append(pool, plotter.XY{X: tEnd, Y: pool[n-1].Y})
			}
			styled := func(xys plotter.XYs, dash []vg.Length, width vg.Length) (*plotter.Line, error) {
				l, err := stepLine(xys, k)
				if err != nil {
					return nil, fmt.Errorf("memory overlay of %s: %w", r.Label, err)
				}
				l.LineStyle.Color = palette[k%len(palette)]
				l.LineStyle.Dashes = dash
				l.LineStyle.Width = width
				return l, nil
			}
			if m.Limit > 0 {
				y := float64(m.Limit) / gib
				ll, err := styled(plotter.XYs{{X: 0, Y: y}, {X: max(tEnd, 0), Y: y}}, []vg.Length{vg.Points(1), vg.Points(3)}, vg.Points(1.2))
				if err != nil {
					return nil, err
				}
				p.Add(ll)
				lg.Add(fmt.Sprintf("%s: %s %s", r.Label, SeriesLimit, FormatBytes(float64(m.Limit))), ll)
			}
			if len(inUse) > 0 {
				lp, err := styled(pool, []vg.Length{vg.Points(6), vg.Points(3)}, vg.Points(1.6))
				if err != nil {
					return nil, err
				}
				lu, err := styled(inUse, nil, vg.Points(1.8))
				if err != nil {
					return nil, err
				}
				p.Add(lp, lu)
				lg.Add(r.Label+": "+SeriesPool, lp)
				lg.Add(r.Label+": "+SeriesInUse, lu)
			}
			if len(m.OOMs) > 0 {
				anyOOM = true
				s, err := memoryOOMMarks(m)
				if err != nil {
					return nil, fmt.Errorf("memory overlay of %s: %w", r.Label, err)
				}
				p.Add(s)
				lg.Add(r.Label+": "+SeriesOOM, s)
			}
		}
		p.Y.Min = 0
		f.panels = append(f.panels, panel{p, lg})
	}
	f.Series = []string{SeriesInUse, SeriesPool, SeriesLimit}
	if anyOOM {
		f.Series = append(f.Series, SeriesOOM)
	}
	f.Height = panelHeight * 1.4 * vg.Length(len(f.panels)) // room for a legend of 3 entries per run
	if len(f.panels) > 4 {
		f.Height = panelHeight * vg.Length(len(f.panels))
	}
	return f, nil
}
