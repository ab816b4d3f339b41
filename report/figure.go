package report

import (
	"bytes"
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// Building blocks for figures drawn above this package (validate's predicted-vs-measured
// plot), in the same style as this package's own.

// NewPlot returns a plot with print-sized sans-serif text and a grid.
func NewPlot(title, xlabel, ylabel string) *plot.Plot { return newPlot(title, xlabel, ylabel) }

// NewLegend returns a legend in the figures' style, drawn at the top left of its strip.
func NewLegend() plot.Legend { return newLegend() }

// Color is style i of the figures' colour-blind-safe palette (it cycles).
func Color(i int) color.Color { return palette[i%len(palette)] }

// NewFigure returns an empty figure of the given width (0: the figures' 8 in); AddPanel
// stacks plots in it.
func NewFigure(name, title string, width vg.Length) *Figure {
	if width == 0 {
		width = figureWidth
	}
	return &Figure{Name: name, Title: title, Width: width}
}

// AddPanel adds p below the figure's other panels, with legend in a strip on its right, and
// grows the figure by height.
func (f *Figure) AddPanel(p *plot.Plot, legend plot.Legend, height vg.Length) {
	f.panels = append(f.panels, panel{p: p, legend: legend})
	f.Height += height
}

// WriteFigure writes fig into dir (created if missing) as NAME.png and NAME.svg, each to a
// temporary name renamed over the path, and returns the paths written.
func WriteFigure(dir string, fig *Figure) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	return writeFigure(nil, dir, fig, []string{"png", "svg"})
}

// writeFigure appends to paths the files of fig in each format ("png", "svg") written into
// dir, each to a temporary name renamed over the path.
func writeFigure(paths []string, dir string, fig *Figure, formats []string) ([]string, error) {
	for _, format := range formats {
		var buf bytes.Buffer
		write := fig.WritePNG
		if format == "svg" {
			write = fig.WriteSVG
		}
		if err := write(&buf); err != nil {
			return paths, err
		}
		path := filepath.Join(dir, fig.Name+"."+format)
		if err := WriteFileAtomic(path, buf.Bytes()); err != nil {
			return paths, fmt.Errorf("plots: %w", err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
