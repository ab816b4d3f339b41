package report

// The HTML report: one self-contained file (no scripts, no external styles, fonts or images)
// with the comparison table, the OOM messages and every figure as inline SVG, for sharing by
// mail or putting on a workshop page.

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
)

// HTMLOptions describe the report's page.
type HTMLOptions struct {
	// Title is the page heading; "gpusim comparison" when empty.
	Title string
	// Command is the command line that produced the report, shown under the title so a reader
	// can reproduce it.
	Command string
}

type htmlColumn struct {
	Label string
	OOM   bool
}

type htmlCell struct {
	Value, Delta string
	OOM          bool
	// Sign is "up", "down" or "" for the delta's direction (styled, not judged: more memory
	// and more throughput are both "up").
	Sign string
}

type htmlRow struct {
	Name, Key, Unit string
	Cells           []htmlCell
}

type htmlOOM struct{ Label, Message string }

type htmlFigure struct {
	Name, Title string
	Series      string
	SVG         template.HTML
}

type htmlPage struct {
	Title, Command string
	Columns        []htmlColumn
	Rows           []htmlRow
	OOMs           []htmlOOM
	Figures        []htmlFigure
}

var htmlTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="gpusim">
<title>{{.Title}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 2em auto; max-width: 1100px; padding: 0 1em; color: #111; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
code { font-family: "Liberation Mono", Menlo, Consolas, monospace; font-size: 0.95em; }
table { border-collapse: collapse; margin: 1em 0; font-variant-numeric: tabular-nums; }
th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #ddd; }
th { text-align: center; background: #f4f4f4; }
td.metric { text-align: left; white-space: nowrap; }
td.value { text-align: right; white-space: nowrap; }
td.delta { text-align: left; color: #555; white-space: nowrap; font-size: 0.9em; }
td.delta.up::before { content: "\25B2\00A0"; font-size: 0.7em; }
td.delta.down::before { content: "\25BC\00A0"; font-size: 0.7em; }
.oom { color: #D55E00; font-weight: bold; }
figure { margin: 2em 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #444; }
@media print { body { max-width: none; } figure { break-inside: avoid; } }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Command}}<p><code>{{.Command}}</code></p>{{end}}
<h2>Comparison</h2>
<p>One column per configuration; changes are relative to the first column.</p>
<table id="comparison">
<thead><tr><th>metric</th>{{range $i, $c := .Columns}}<th colspan="{{if $i}}2{{else}}1{{end}}">{{$c.Label}}</th>{{end}}</tr></thead>
<tbody>
<tr><td class="metric">result</td>{{range $i, $c := .Columns}}<td class="value{{if $c.OOM}} oom{{end}}">{{if $c.OOM}}OOM{{else}}ok{{end}}</td>{{if $i}}<td class="delta"></td>{{end}}{{end}}</tr>
{{range .Rows}}<tr><td class="metric" title="{{.Key}}">{{.Name}}</td>{{range $i, $c := .Cells}}<td class="value{{if and $c.OOM (eq $c.Value "OOM")}} oom{{end}}">{{$c.Value}}</td>{{if $i}}<td class="delta {{$c.Sign}}">{{$c.Delta}}</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>
{{if .OOMs}}<h2>Out of memory</h2>
<ul>{{range .OOMs}}<li><b>{{.Label}}</b>: <code>{{.Message}}</code></li>{{end}}</ul>{{end}}
{{if .Figures}}<h2>Figures</h2>{{end}}
{{range .Figures}}<figure id="{{.Name}}">
{{.SVG}}
<figcaption>{{.Title}} ({{.Series}})</figcaption>
</figure>
{{end}}</body>
</html>
`))

// WriteHTML writes the comparison of runs (the first is the base) and all their figures as one
// self-contained HTML page.
func WriteHTML(w io.Writer, runs []Run, opts HTMLOptions) error {
	page := htmlPage{Title: opts.Title, Command: opts.Command}
	if page.Title == "" {
		page.Title = "gpusim comparison"
	}
	tab := Compare(runs)
	for _, c := range tab.Runs {
		page.Columns = append(page.Columns, htmlColumn{Label: c.Label, OOM: c.OOM})
		if c.OOM && c.OOMMessage != "" {
			page.OOMs = append(page.OOMs, htmlOOM{c.Label, c.OOMMessage})
		}
	}
	for _, row := range tab.Rows {
		hr := htmlRow{Name: row.Name, Key: row.Key, Unit: row.Unit}
		for _, c := range row.Cells {
			hc := htmlCell{Value: c.cellText(row.Unit), Delta: c.deltaText(), OOM: c.OOM}
			switch {
			case hc.Delta == "" || hc.Delta == "~":
			case c.Delta > 0:
				hc.Sign = "up"
			case c.Delta < 0:
				hc.Sign = "down"
			}
			hr.Cells = append(hr.Cells, hc)
		}
		page.Rows = append(page.Rows, hr)
	}
	figs, err := Figures(runs)
	if err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	for _, f := range figs {
		var buf bytes.Buffer
		if err := f.WriteSVG(&buf); err != nil {
			return fmt.Errorf("html report: %w", err)
		}
		page.Figures = append(page.Figures, htmlFigure{Name: f.Name, Title: f.Title, Series: strings.Join(f.Series, ", "),
			// The SVG comes from our own canvas (text escaped by vgsvg), not from user input.
			SVG: template.HTML(inlineSVG(buf.String()))})
	}
	if err := htmlTemplate.Execute(w, page); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// inlineSVG drops the XML declaration and comments before the <svg> element, which HTML does
// not want inside a document.
func inlineSVG(s string) string {
	if i := strings.Index(s, "<svg"); i >= 0 {
		return s[i:]
	}
	return s
}
