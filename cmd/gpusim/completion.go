package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/gpusim/gpusim/scenarios"
)

func init() {
	register(command{name: "completion", summary: "print a shell completion script: bash, zsh or fish", run: runCompletion})
}

const completionUsage = `Usage:
  gpusim completion bash|zsh|fish

Prints a completion script for the shell: subcommands, their flags, built-in scenario names
and, after --set or --vary, the scenario keys. It is generated from the commands' own flag
sets, so it lists what this binary accepts.

Examples:
  source <(gpusim completion bash)                          # this bash session
  gpusim completion bash > ~/.local/share/bash-completion/completions/gpusim
  gpusim completion zsh > "${fpath[1]}/_gpusim"              # then: autoload -U compinit; compinit
  gpusim completion fish > ~/.config/fish/completions/gpusim.fish
`

func runCompletion(ctx context.Context, stdout, _ io.Writer, args []string) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, completionUsage)
		return nil
	}
	if len(args) != 1 {
		return usagef("completion: want one shell: bash, zsh or fish")
	}
	tree := completionTree(ctx)
	switch args[0] {
	case "bash":
		writeBashCompletion(stdout, tree)
	case "zsh":
		// zsh runs the bash function through its bashcompinit layer.
		fmt.Fprint(stdout, "#compdef gpusim\nautoload -U +X bashcompinit && bashcompinit\n")
		writeBashCompletion(stdout, tree)
	case "fish":
		writeFishCompletion(stdout, tree)
	default:
		return usagef("completion: unknown shell %q: want bash, zsh or fish", args[0])
	}
	return nil
}

// compNode is a command or subcommand with what may follow it.
type compNode struct {
	name, summary string
	flags         []compFlag
	subs          []*compNode
	scenario      bool // takes a SCENARIO argument: complete the built-in names
	direct        bool // runs without a subcommand too (compare SCENARIO, compare merge)
}

type compFlag struct{ short, long, usage string }

var (
	usageSubRE  = regexp.MustCompile(`gpusim ([a-z]+) ([a-z][a-z-]*(?:\|[a-z][a-z-]*)*)(?:\s|$)`)
	usageFlagRE = regexp.MustCompile(`^\s+(?:-([A-Za-z0-9]), )?--([A-Za-z0-9][\w-]*)\S*(?:\s\S+)?\s{2,}(.*)$`)
)

// completionTree asks every command, and every subcommand its usage names, for its --help,
// and reads the flags pflag prints there: the real flag sets, whatever a command adds later.
func completionTree(ctx context.Context) []*compNode {
	help := func(args ...string) string {
		var b bytes.Buffer
		_ = run(ctx, &b, io.Discard, append(args, "--help"))
		return b.String()
	}
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var tree []*compNode
	for _, n := range names {
		node := &compNode{name: n, summary: commands[n].summary}
		text := help(n)
		usage := usageLines(text)
		node.scenario = strings.Contains(usage, "SCENARIO")
		seen := map[string]bool{}
		for _, m := range usageSubRE.FindAllStringSubmatch(usage, -1) {
			if m[1] != n {
				continue
			}
			for _, s := range strings.Split(m[2], "|") {
				if !seen[s] {
					seen[s] = true
					sub := &compNode{name: s}
					sub.flags = helpFlags(help(n, s))
					sub.scenario = strings.Contains(usageLine(usage, n+" "+s), "SCENARIO")
					node.subs = append(node.subs, sub)
				}
			}
		}
		node.flags = helpFlags(text)
		node.direct = len(node.subs) == 0
		for _, l := range strings.Split(usage, "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 && f[0] == "gpusim" && f[1] == n && (len(f) == 2 || !seen[f[2]] && !strings.Contains(f[2], "|")) {
				node.direct = true
			}
		}
		tree = append(tree, node)
	}
	return tree
}

// usageLines is the text between "Usage:" and the first blank line after it.
func usageLines(help string) string {
	_, rest, ok := strings.Cut(help, "Usage:\n")
	if !ok {
		return ""
	}
	usage, _, _ := strings.Cut(rest, "\n\n")
	return usage
}

// usageLine is the usage line that starts with "gpusim prefix".
func usageLine(usage, prefix string) string {
	for _, l := range strings.Split(usage, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "gpusim "+prefix+" ") {
			return l
		}
	}
	return ""
}

// helpFlags reads the flag lines of pflag's FlagUsages; -h/--help is added when missing.
func helpFlags(help string) []compFlag {
	flags := []compFlag{}
	hasHelp := false
	for _, l := range strings.Split(help, "\n") {
		if m := usageFlagRE.FindStringSubmatch(l); m != nil {
			flags = append(flags, compFlag{short: m[1], long: m[2], usage: m[3]})
			hasHelp = hasHelp || m[2] == "help"
		}
	}
	if !hasHelp {
		flags = append(flags, compFlag{short: "h", long: "help", usage: "show this help"})
	}
	return flags
}

func (n *compNode) words() string {
	var w []string
	for _, f := range n.flags {
		w = append(w, "--"+f.long)
		if f.short != "" {
			w = append(w, "-"+f.short)
		}
	}
	if n.scenario {
		w = append(w, scenarios.Names()...)
	}
	return strings.Join(w, " ")
}

func scenarioKeys() []string {
	var keys []string
	for _, k := range scenarios.Keys() {
		keys = append(keys, k[0]+"=")
	}
	return keys
}

// writeBashCompletion writes a bash function that completes position 1 with the commands,
// position 2 with a command's subcommands, and after that the flags of the (sub)command and,
// where it takes one, the built-in scenarios; after --set and --vary the scenario keys
// (validate's --set takes a measurement set's name instead).
func writeBashCompletion(w io.Writer, tree []*compNode) {
	var top []string
	for _, n := range tree {
		top = append(top, n.name)
	}
	fmt.Fprintf(w, `# bash completion for gpusim, generated by "gpusim completion bash"
_gpusim() {
    local cur prev words
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W %s -- "$cur"))
        return
    fi
    if [[ ( "$prev" == "--set" && "${COMP_WORDS[1]}" != validate ) || "$prev" == "--vary" ]]; then
        compopt -o nospace 2>/dev/null
        COMPREPLY=($(compgen -W %s -- "$cur"))
        return
    fi
    case "${COMP_WORDS[1]}" in
`, shQuote(strings.Join(append(top, "--help", "--version"), " ")), shQuote(strings.Join(scenarioKeys(), " ")))
	for _, n := range tree {
		fmt.Fprintf(w, "    %s)\n", n.name)
		if len(n.subs) == 0 {
			fmt.Fprintf(w, "        words=%s ;;\n", shQuote(n.words()))
			continue
		}
		var subs []string
		for _, s := range n.subs {
			subs = append(subs, s.name)
		}
		first, rest := strings.Join(append(subs, "--help"), " "), ""
		if n.direct {
			first, rest = strings.Join(subs, " ")+" "+n.words(), n.words()
		}
		fmt.Fprintf(w, "        if [[ $COMP_CWORD -eq 2 ]]; then words=%s; else\n        case \"${COMP_WORDS[2]}\" in\n", shQuote(first))
		for _, s := range n.subs {
			fmt.Fprintf(w, "            %s) words=%s ;;\n", s.name, shQuote(s.words()))
		}
		fmt.Fprintf(w, "            *) words=%s ;;\n        esac; fi ;;\n", shQuote(rest))
	}
	fmt.Fprint(w, `    *) words="" ;;
    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _gpusim gpusim
`)
}

// writeFishCompletion writes fish's complete lines, with the flags' and commands' help.
func writeFishCompletion(w io.Writer, tree []*compNode) {
	fmt.Fprintln(w, `# fish completion for gpusim, generated by "gpusim completion fish"`)
	var top []string
	for _, n := range tree {
		top = append(top, n.name)
	}
	none := "not __fish_seen_subcommand_from " + strings.Join(top, " ")
	fmt.Fprintf(w, "complete -c gpusim -n %s -l version -d %s\n", fishQuote(none), fishQuote("print the version"))
	for _, n := range tree {
		fmt.Fprintf(w, "complete -c gpusim -n %s -a %s -d %s\n", fishQuote(none), n.name, fishQuote(n.summary))
		in := "__fish_seen_subcommand_from " + n.name
		if len(n.subs) == 0 {
			writeFishNode(w, n, in)
			continue
		}
		var subs []string
		for _, s := range n.subs {
			subs = append(subs, s.name)
		}
		noSub := in + "; and not __fish_seen_subcommand_from " + strings.Join(subs, " ")
		fmt.Fprintf(w, "complete -c gpusim -n %s -a %s\n", fishQuote(noSub), fishQuote(strings.Join(subs, " ")))
		if n.direct {
			writeFishNode(w, n, noSub)
		}
		for _, s := range n.subs {
			writeFishNode(w, s, in+"; and __fish_seen_subcommand_from "+s.name)
		}
	}
	fmt.Fprintf(w, "complete -c gpusim -n %s -x -a %s\n", fishQuote("__fish_prev_arg_in --set --vary; and not __fish_seen_subcommand_from validate"), fishQuote(strings.Join(scenarioKeys(), " ")))
}

func writeFishNode(w io.Writer, n *compNode, cond string) {
	for _, f := range n.flags {
		short := ""
		if f.short != "" {
			short = " -s " + f.short
		}
		fmt.Fprintf(w, "complete -c gpusim -n %s%s -l %s -d %s\n", fishQuote(cond), short, f.long, fishQuote(f.usage))
	}
	if n.scenario {
		fmt.Fprintf(w, "complete -c gpusim -n %s -a %s\n", fishQuote(cond), fishQuote(strings.Join(scenarios.Names(), " ")))
	}
}

// shQuote single-quotes s for sh and bash.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// fishQuote single-quotes s for fish, where only \ and ' are special inside single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
