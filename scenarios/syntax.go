package scenarios

import (
	"regexp"
	"strconv"
	"strings"
)

// yamlLine matches yaml.v3's syntax errors, "yaml: line 4: did not find expected key".
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlSyntaxError is a YAML syntax error without yaml.v3's "yaml: line N:" prefix; the line
// goes to Error.Place.
type yamlSyntaxError struct {
	msg string
	err error
}

func (e *yamlSyntaxError) Error() string { return "yaml syntax: " + e.msg }
func (e *yamlSyntaxError) Unwrap() error { return e.err }

// syntaxError turns a yaml.v3 decode error into file:line form ("bad.yaml:1: yaml syntax:
// did not find expected ',' or ']'"), like every other scenario error. The line is
// yaml.v3's own (parser.fail in decode.go), which is not always the offending line:
//   - scanner errors (a tab in indentation, an unterminated quote, "mapping values are not
//     allowed") give the problem's line;
//   - parser errors give the line of the *context* mark, 0-based and not incremented, i.e.
//     near where the enclosing construct starts, at or before the problem: "batch: [1, 2"
//     left open reports line 1 wherever the stream ends; a mis-indented key in a nested
//     mapping ("memory:\n  growth: true\n limit_mib: 6144", the last at line 5) reports
//     line 4; a sequence item inside a mapping at line 3 reports line 1.
//
// Errors that carry no line ("yaml: unknown anchor 'x' referenced") keep the bare file name.
func syntaxError(file string, err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		if n, cerr := strconv.Atoi(m[1]); cerr == nil {
			return &Error{Place: file + ":" + strconv.Itoa(n), Err: &yamlSyntaxError{msg: m[2], err: err}}
		}
	}
	return &Error{Place: file, Err: &yamlSyntaxError{msg: strings.TrimPrefix(err.Error(), "yaml: "), err: err}}
}
