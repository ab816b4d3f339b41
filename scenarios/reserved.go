package scenarios

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// YAML reserves '@' and '`' as indicators that cannot start a plain scalar (YAML 1.2,
// section 5.3, c-reserved), so `gpu: @my.yaml` is a syntax error. A --set value that starts with
// one is taken as a string (hardware.gpu=@FILE, the profile file syntax of hw.LookupGPU); a
// file gets an error that names the line and suggests quotes.

// startsReserved reports whether a value begins with a YAML reserved indicator.
func startsReserved(v string) bool {
	v = strings.TrimSpace(v)
	return strings.HasPrefix(v, "@") || strings.HasPrefix(v, "`")
}

// reservedValueError finds the first line of data whose value (after "key:" or a "- " list
// marker) starts with a reserved indicator, and explains it; nil when there is none (the syntax
// error is something else).
func reservedValueError(file string, data []byte) error {
	type open struct {
		indent int
		key    string
	}
	var stack []open // the mappings the current line is inside, by indentation
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), len(data)+1)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		body := strings.TrimSpace(text)
		if body == "" || strings.HasPrefix(body, "#") {
			continue
		}
		indent := len(text) - len(strings.TrimLeft(text, " "))
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		item := strings.TrimPrefix(body, "- ")
		key, val, isKey := strings.Cut(item, ":")
		if isKey && !strings.ContainsAny(key, "\"'{[") && (val == "" || val[0] == ' ' || val[0] == '\t') {
			key = strings.TrimSpace(key)
		} else {
			key, val = "", item
		}
		val = strings.TrimSpace(val)
		if i := strings.Index(val, " #"); i >= 0 {
			val = strings.TrimSpace(val[:i])
		}
		if key != "" && (val == "" || strings.HasPrefix(val, "#")) {
			stack = append(stack, open{indent, key})
			continue
		}
		if !startsReserved(val) || (key == "" && item == body) {
			continue
		}
		var path []string
		for _, o := range stack {
			path = append(path, o.key)
		}
		quoted := fmt.Sprintf("%q", val)
		if key != "" {
			return &Error{Place: fmt.Sprintf("%s:%d", file, line), Field: strings.Join(append(path, key), "."),
				Err: fmt.Errorf("a YAML value cannot start with %q (a reserved character): quote it, %s: %s", val[:1], key, quoted)}
		}
		return &Error{Place: fmt.Sprintf("%s:%d", file, line), Field: strings.Join(path, "."),
			Err: fmt.Errorf("a YAML value cannot start with %q (a reserved character): quote it, - %s", val[:1], quoted)}
	}
	return nil
}
