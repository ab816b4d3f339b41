package main

// The doc checker behind TestDocs: docs quote what gpusim prints, and these functions run the
// quoted commands in-process and compare.
//
// A markdown doc marks a code block with an HTML comment on the line before it (invisible on
// the rendered page):
//
//	<!-- gpusim-doc -->               the block holds "$ gpusim ..." lines, each followed by the
//	                                  output it prints; the output must match line for line, and
//	                                  -update rewrites it. A command may pipe through grep,
//	                                  head and tail, as a reader's shell would.
//	<!-- gpusim-doc: block -->        an output block whose section's prose quotes other sources
//	                                  (a test's table, a paper): the block is compared, the
//	                                  prose is not checked against it.
//	<!-- gpusim-doc: figures -->      the block lists commands (one a line, "$ " optional, "#"
//	                                  comments kept as prose); they run, nothing is shown.
//	<!-- gpusim-doc: figures: gpusim run a; gpusim run b -->
//	                                  the same for commands named in the comment itself (for a
//	                                  table or a paragraph with no block).
//
// Every figure the prose of a section with such a marker quotes (from the section's heading to
// the next heading) must be one the section's commands print, equal after rounding the printed
// figure to the digits the prose gives: "9.7%" and "10%" both quote a printed 9.7%, "8.4%"
// does not. A figure is a number with a unit gpusim prints (%, x, s, ms, µs, GiB, MiB, GB,
// samples/s, ...) that has a decimal point, is a percentage, a ratio or a throughput, or is
// marked approximate with "~"; whole numbers of bytes or seconds are settings, not checked.

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// docCmd is one command a doc quotes.
type docCmd struct {
	line  int      // 1-based line of the command in the doc
	cmd   string   // the command line without the "$ " prompt and any "#" comment
	raw   string   // the line as the doc has it, for -update
	shown []string // the output lines the doc shows (output blocks only)
	check bool     // whether shown must equal what the command prints
	quiet bool     // the section's prose is not checked against this command (block marker)
}

// docSection is the text from one heading to the next.
type docSection struct {
	cmds  []docCmd
	prose []docLine // every line of the section that is not a checked block or a marker
}

type docLine struct {
	n    int
	text string
}

// docBlock is an output block's place in the doc, for -update.
type docBlock struct {
	first, last int // 0-based line range of the block's content (inclusive)
	indent      string
	cmds        []int // indices into the section's cmds
	section     int
}

const docMarker = "<!-- gpusim-doc"

// parseDoc splits a markdown doc into sections and finds its marked blocks.
func parseDoc(text string) ([]docSection, []docBlock, error) {
	lines := strings.Split(text, "\n")
	sections := []docSection{{}}
	var blocks []docBlock
	inFence := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		trim := strings.TrimSpace(l)
		if strings.HasPrefix(trim, "```") {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(l, "#") {
			sections = append(sections, docSection{})
		}
		sec := &sections[len(sections)-1]
		if inFence || !strings.HasPrefix(trim, docMarker) {
			sec.prose = append(sec.prose, docLine{i + 1, l})
			continue
		}
		mode, ok := strings.CutSuffix(strings.TrimSpace(strings.TrimPrefix(trim, docMarker)), "-->")
		if !ok {
			return nil, nil, fmt.Errorf("line %d: a gpusim-doc marker ends with --> on its line", i+1)
		}
		mode = strings.TrimSpace(strings.TrimPrefix(mode, ":"))
		if inline, ok := strings.CutPrefix(mode, "figures:"); ok {
			for _, c := range strings.Split(inline, ";") {
				sec.cmds = append(sec.cmds, docCmd{line: i + 1, cmd: strings.TrimSpace(c)})
			}
			continue
		}
		if mode != "" && mode != "figures" && mode != "block" {
			return nil, nil, fmt.Errorf("line %d: unknown gpusim-doc marker %q (want none, block, figures or figures: commands)", i+1, mode)
		}
		first, last, indent, err := blockAfter(lines, i+1)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		b := docBlock{first: first, last: last, indent: indent, section: len(sections) - 1}
		for j := first; j <= last; j++ {
			body := strings.TrimPrefix(lines[j], indent)
			if mode == "figures" {
				cmd, comment := splitComment(strings.TrimPrefix(body, "$ "))
				if strings.TrimSpace(cmd) != "" {
					sec.cmds = append(sec.cmds, docCmd{line: j + 1, cmd: strings.TrimSpace(cmd)})
				}
				sec.prose = append(sec.prose, docLine{j + 1, comment})
				continue
			}
			if c, ok := strings.CutPrefix(body, "$ "); ok {
				cmd, comment := splitComment(c)
				b.cmds = append(b.cmds, len(sec.cmds))
				sec.cmds = append(sec.cmds, docCmd{line: j + 1, cmd: strings.TrimSpace(cmd), raw: body, check: true, quiet: mode == "block"})
				sec.prose = append(sec.prose, docLine{j + 1, comment})
				continue
			}
			if len(b.cmds) == 0 {
				return nil, nil, fmt.Errorf("line %d: an output block starts with \"$ gpusim ...\"", j+1)
			}
			c := &sec.cmds[len(sec.cmds)-1]
			c.shown = append(c.shown, body)
		}
		if mode != "figures" {
			blocks = append(blocks, b)
		}
		// The fences (if any) and the block are consumed; the closing fence is skipped.
		i = last
		if strings.HasPrefix(strings.TrimSpace(lines[first-1]), "```") {
			i = last + 1
		}
	}
	return sections, blocks, nil
}

// blockAfter finds the code block that starts at the first non-blank line at or after i: a
// fenced block (its content lines) or an indented one. The range is empty (last < first) for
// an empty fenced block.
func blockAfter(lines []string, i int) (first, last int, indent string, err error) {
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) {
		return 0, 0, "", fmt.Errorf("a gpusim-doc marker is followed by no code block")
	}
	if f := strings.TrimSpace(lines[i]); strings.HasPrefix(f, "```") {
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == "```" {
				return i + 1, j - 1, "", nil
			}
		}
		return 0, 0, "", fmt.Errorf("unclosed code block")
	}
	if !strings.HasPrefix(lines[i], "    ") {
		return 0, 0, "", fmt.Errorf("a gpusim-doc marker is followed by text, not a code block")
	}
	// Blank lines belong to an indented block when indented lines follow them, as in markdown.
	j := i
	for k := i + 1; k < len(lines); k++ {
		if strings.HasPrefix(lines[k], "    ") {
			j = k
		} else if strings.TrimSpace(lines[k]) != "" {
			break
		}
	}
	return i, j, "    ", nil
}

// splitComment cuts a shell line at its first " #" outside quotes.
func splitComment(line string) (cmd, comment string) {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' '):
			return line[:i], line[i:]
		}
	}
	return line, ""
}

// shellWords splits a command line as sh would for the quoting docs use (single and double
// quotes, backslash escapes outside single quotes) and returns its pipeline stages.
func shellWords(line string) ([][]string, error) {
	var stages [][]string
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\' && i+1 < len(rs) && (quote == 0 || strings.ContainsRune(`"\$`, rs[i+1])):
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			flush()
		case r == '|':
			flush()
			stages = append(stages, words)
			words = nil
		case strings.ContainsRune("<>;&`$()", r):
			return nil, fmt.Errorf("%q: only pipes into grep, head and tail are run", line)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%q: unclosed quote", line)
	}
	flush()
	return append(stages, words), nil
}

// runDocCommand runs a doc's command line in-process: gpusim, then any filters. full is what
// gpusim itself prints (stdout and stderr as a terminal shows them, then main's error line);
// shown is what the pipeline leaves of it.
func runDocCommand(ctx context.Context, line string) (full, shown string, err error) {
	stages, err := shellWords(line)
	if err != nil {
		return "", "", err
	}
	if len(stages[0]) == 0 || stages[0][0] != "gpusim" {
		return "", "", fmt.Errorf("%q: a doc command starts with gpusim", line)
	}
	full = docRunCached(ctx, stages[0][1:])
	text := full
	for _, st := range stages[1:] {
		if text, err = docFilter(st, text); err != nil {
			return "", "", fmt.Errorf("%q: %w", line, err)
		}
	}
	return full, text, nil
}

// docRuns caches what each gpusim command line printed, keyed by its arguments: the docs
// quote one `gpusim validate --rows` (a minute and more of simulation) in several sections
// and filter it differently, and gpusim's output is deterministic, so one run serves them all.
var docRuns struct {
	sync.Mutex
	out map[string]string
}

// docRunCached runs gpusim with args in-process, once per distinct args and working directory
// (relative paths in args name other files elsewhere) in the test binary.
func docRunCached(ctx context.Context, args []string) string {
	wd, _ := os.Getwd()
	key := wd + "\x00" + strings.Join(args, "\x00")
	docRuns.Lock()
	defer docRuns.Unlock()
	if out, ok := docRuns.out[key]; ok {
		return out
	}
	var out bytes.Buffer
	if rerr := run(ctx, &out, &out, args); rerr != nil {
		fmt.Fprintf(&out, "gpusim: %v\n", rerr)
	}
	if docRuns.out == nil {
		docRuns.out = map[string]string{}
	}
	docRuns.out[key] = out.String()
	return out.String()
}

// docFilter applies one pipeline stage: grep [-E] [-v] [-i] [-F] [-A N] PATTERN, head/tail
// [-n] N.
func docFilter(args []string, text string) (string, error) {
	if len(args) == 0 {
		return "", fmt.Errorf("empty pipeline stage")
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	switch args[0] {
	case "grep":
		var invert, fold, fixed bool
		after := 0
		i := 1
		for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
			if count, ok := strings.CutPrefix(args[i], "-A"); ok {
				if count == "" && i+1 < len(args) {
					i++
					count = args[i]
				}
				n, err := strconv.Atoi(count)
				if err != nil || n < 0 {
					return "", fmt.Errorf("grep -A %q: want a count", count)
				}
				after = n
				continue
			}
			for _, f := range args[i][1:] {
				switch f {
				case 'E':
				case 'v':
					invert = true
				case 'i':
					fold = true
				case 'F':
					fixed = true
				default:
					return "", fmt.Errorf("grep -%c is not supported", f)
				}
			}
		}
		if i != len(args)-1 {
			return "", fmt.Errorf("grep takes one pattern")
		}
		pat := args[i]
		if fixed {
			pat = regexp.QuoteMeta(pat)
		}
		if fold {
			pat = "(?i)" + pat
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		left := 0 // lines still to print after a match (-A)
		for _, l := range lines {
			if re.MatchString(strings.TrimSuffix(l, "\n")) != invert {
				b.WriteString(l)
				left = after
			} else if left > 0 {
				b.WriteString(l)
				left--
			}
		}
		return b.String(), nil
	case "head", "tail":
		n := 10
		rest := args[1:]
		if len(rest) > 0 && rest[0] == "-n" {
			rest = rest[1:]
		}
		if len(rest) == 1 {
			v, err := strconv.Atoi(strings.TrimPrefix(rest[0], "-"))
			if err != nil {
				return "", fmt.Errorf("%s: bad count %q", args[0], rest[0])
			}
			n = v
		} else if len(rest) > 1 {
			return "", fmt.Errorf("%s takes one count", args[0])
		}
		n = min(n, len(lines))
		if args[0] == "head" {
			return strings.Join(lines[:n], ""), nil
		}
		return strings.Join(lines[len(lines)-n:], ""), nil
	}
	return "", fmt.Errorf("%s: only grep, head and tail are run", args[0])
}

// docLines splits output into lines as a doc shows them: no trailing blanks, no final empty
// lines, tabs as the terminal's 8-column stops would not survive markdown, so kept verbatim.
func docLines(s string) []string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, " ")
	}
	if len(ls) == 1 && ls[0] == "" {
		return nil
	}
	return ls
}

// figure is one quoted or printed number with its unit, in base units (s, bytes, 1 for %).
type figure struct {
	text   string
	family string
	value  float64 // signed, in the family's base unit
	prec   float64 // the smallest step its digits can tell, in base units
	signed bool
	check  bool
}

var figureRE = regexp.MustCompile(`(~)?([+\-−])?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:(x)|\s?([kMG])?\s?(%|samples/s|img/s|images/s|tokens/s|steps/s|ns|µs|us|ms|s|KiB|MiB|GiB|TiB|KB|MB|GB|TB))`)

var figureUnits = map[string]struct {
	family string
	mult   float64
}{
	"%": {"%", 1}, "x": {"x", 1},
	"samples/s": {"/s", 1}, "img/s": {"/s", 1}, "images/s": {"/s", 1}, "tokens/s": {"tokens/s", 1}, "steps/s": {"steps/s", 1},
	"ns": {"s", 1e-9}, "µs": {"s", 1e-6}, "us": {"s", 1e-6}, "ms": {"s", 1e-3}, "s": {"s", 1},
	"KiB": {"iB", 1 << 10}, "MiB": {"iB", 1 << 20}, "GiB": {"iB", 1 << 30}, "TiB": {"iB", 1 << 40},
	"KB": {"B", 1e3}, "MB": {"B", 1e6}, "GB": {"B", 1e9}, "TB": {"B", 1e12},
}

var figureScale = map[string]float64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9}

// figures finds the figures in a line of text.
func figures(s string) []figure {
	var out []figure
	for _, m := range figureRE.FindAllStringSubmatchIndex(s, -1) {
		if m[0] > 0 {
			prev := s[m[0]-1]
			if prev == '.' || prev == '_' || prev == '/' || prev == '^' || isWordByte(prev) {
				continue
			}
		}
		if next, _ := utf8.DecodeRuneInString(s[m[1]:]); next == '/' || next == '_' || unicode.IsLetter(next) || unicode.IsNumber(next) {
			continue // 3x² or 16gb: part of a word or a formula
		}
		sub := func(k int) string {
			if m[2*k] < 0 {
				return ""
			}
			return s[m[2*k]:m[2*k+1]]
		}
		unit := sub(7)
		if sub(5) != "" {
			if sub(3)+sub(4) == "0" {
				continue // 0x: a hex prefix, not a ratio
			}
			unit = "x"
		}
		u := figureUnits[unit]
		num, _ := strconv.ParseFloat(strings.ReplaceAll(sub(3), ",", "")+sub(4), 64)
		decimals := max(len(sub(4))-1, 0)
		scale := figureScale[sub(6)] * u.mult
		f := figure{text: strings.TrimSpace(s[m[0]:m[1]]), family: u.family, value: num * scale,
			prec: math.Pow10(-decimals) * scale, signed: sub(2) != ""}
		if sub(2) == "-" || sub(2) == "−" {
			f.value = -f.value
		}
		f.check = decimals > 0 || sub(1) == "~" || u.family == "%" || u.family == "x" || strings.HasSuffix(u.family, "/s")
		out = append(out, f)
	}
	return out
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// quotes says whether a quoted figure q is the printed figure p rounded to q's digits.
func (q figure) quotes(p figure) bool {
	if q.family != p.family {
		return false
	}
	v := p.value
	if !q.signed {
		v = math.Abs(v)
	}
	return math.Abs(v-q.value) <= q.prec/2*(1+1e-9)
}

// docProblems runs a parsed doc's commands and returns what does not match, each problem
// starting with the doc's line number. external lists figures the doc quotes from elsewhere (a
// published table, a spec sheet), as the doc writes them. With update, output blocks are
// rewritten in lines.
func docProblems(ctx context.Context, sections []docSection, blocks []docBlock, lines []string, external []string, update bool) ([]string, []string) {
	var problems []string
	printed := make([][]figure, len(sections))
	actual := make([][][]string, len(sections))
	for si := range sections {
		sec := &sections[si]
		actual[si] = make([][]string, len(sec.cmds))
		for ci, c := range sec.cmds {
			full, shown, err := runDocCommand(ctx, c.cmd)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%d: %v", c.line, err))
				continue
			}
			for _, l := range strings.Split(full, "\n") {
				printed[si] = append(printed[si], figures(l)...)
			}
			got := docLines(shown)
			actual[si][ci] = got
			if c.check && !update && strings.Join(got, "\n") != strings.Join(c.shown, "\n") {
				problems = append(problems, fmt.Sprintf("%d: $ %s prints\n%s\nbut the doc shows\n%s", c.line, c.cmd,
					strings.Join(got, "\n"), strings.Join(c.shown, "\n")))
			}
		}
		if !slices.ContainsFunc(sec.cmds, func(c docCmd) bool { return !c.quiet }) {
			continue
		}
		for _, l := range sec.prose {
			for _, q := range figures(l.text) {
				if q.check && !quotedIn(q, printed[si]) && !slices.Contains(external, q.text) {
					problems = append(problems, fmt.Sprintf("%d: %s is no figure this section's commands print%s", l.n, q.text, nearest(q, printed[si])))
				}
			}
		}
	}
	if update {
		lines = rewriteBlocks(sections, blocks, lines, actual)
	}
	return problems, lines
}

func quotedIn(q figure, printed []figure) bool {
	for _, p := range printed {
		if q.quotes(p) {
			return true
		}
	}
	return false
}

// nearest names the printed figure of the same unit closest to q, to say what the doc should quote.
func nearest(q figure, printed []figure) string {
	best, bestD := "", math.Inf(1)
	for _, p := range printed {
		if p.family == q.family {
			if d := math.Abs(math.Abs(p.value) - math.Abs(q.value)); d < bestD {
				best, bestD = p.text, d
			}
		}
	}
	if best == "" {
		return ""
	}
	return " (nearest printed: " + best + ")"
}

// rewriteBlocks replaces each output block's content with its commands and what they print,
// from the last block up so that earlier line numbers stay valid.
func rewriteBlocks(sections []docSection, blocks []docBlock, lines []string, actual [][][]string) []string {
	for bi := len(blocks) - 1; bi >= 0; bi-- {
		b := blocks[bi]
		var body []string
		for _, ci := range b.cmds {
			body = append(body, b.indent+sections[b.section].cmds[ci].raw)
			for _, l := range actual[b.section][ci] {
				body = append(body, strings.TrimRight(b.indent+l, " "))
			}
		}
		lines = append(lines[:b.first], append(body, lines[b.last+1:]...)...)
	}
	return lines
}
