package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/gpusim/gpusim/web"
)

func init() {
	register(command{name: "serve", summary: "serve the workshop page: every pitfall, re-simulated as you change it", run: runServe})
}

// serveExamples are the usage examples of gpusim serve.
var serveExamples = []string{
	"gpusim serve",
	"gpusim serve --addr 127.0.0.1:9000",
	"gpusim serve --timeout 5s",
	"gpusim serve --addr 0.0.0.0:8080 --allow-host classroom.lan",
}

func serveUsage() string {
	var b strings.Builder
	b.WriteString(`Usage:
  gpusim serve [--addr 127.0.0.1:8080] [--timeout 10s]

Serves the workshop page on a local address: the guide's pitfalls in docs/pitfalls.md's
order, each with its explanation and the TensorFlow program it stands for; controls for the
settings a class changes (model, batch, GPU, count, precision, XLA, memory mode, limit, growth,
prefetch, parallel calls, cache, accumulation, CUDA_VISIBLE_DEVICES), each change re-simulated
at once; memory within a step and over the run, pool growth, the allocator's regions at an
OOM, utilization over time, the step breakdown, the diagnosis and its remedies, for two
settings side by side. The page's URL encodes the settings; "copy as YAML" and "copy as gpusim
command" give the same run for the CLI.

Everything the page needs is inside the binary: it loads nothing from the network. It binds to
127.0.0.1 by default (the page is for this machine's browser; another address serves whoever
can reach it). Only built-in scenarios and GPU profiles run; every override goes through the
scenario checks of gpusim run --set, and a bad one is a 400 with the same message; a value
that names a file (@FILE, however it is spelled) is refused unread. Requests must name the
server as localhost or an IP address (--allow-host adds a name), so a web page that rebinds its
own domain to this machine cannot use it. --slots requests simulate at once and --queue more
wait; past that the answer is 503 with Retry-After at once. --timeout bounds the simulations of
one request.

Examples:
`)
	for _, e := range serveExamples {
		b.WriteString("  " + e + "\n")
	}
	return b.String()
}

func runServe(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stdout, serveUsage()+"\nFlags:\n")
		fs.SetOutput(stdout)
		fs.PrintDefaults()
	}
	addr := fs.String("addr", "127.0.0.1:8080", "listen on `host:port` (port 0 picks a free one)")
	d := web.DefaultOptions()
	timeout := fs.Duration("timeout", d.Timeout, "longest `duration` the simulations of one request may take")
	slots := fs.Int("slots", d.Slots, "requests simulated at `once`")
	queue := fs.Int("queue", d.Queue, "requests that may wait for a slot (0: none); more get 503 with Retry-After at once")
	allow := fs.StringSlice("allow-host", nil, "a host `name` requests may use besides localhost and IP addresses (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return asUsage(fmt.Errorf("serve: %w", err))
	}
	if fs.NArg() > 0 {
		return usagef("serve: want no arguments, got %s", strings.Join(fs.Args(), " "))
	}
	if *timeout <= 0 {
		return usagef("serve: --timeout %s: want a positive duration", *timeout)
	}
	if *slots <= 0 {
		return usagef("serve: --slots %d: want a positive count", *slots)
	}
	if *queue < 0 {
		return usagef("serve: --queue %d: want zero or more", *queue)
	}
	o := d
	o.Timeout, o.Slots, o.Queue, o.AllowedHosts = *timeout, *slots, *queue, *allow
	if *queue == 0 {
		o.Queue = -1 // web.Options' zero is its default; --queue 0 means none
	}
	h, err := web.New(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return asUsage(fmt.Errorf("serve: --addr %s: %w", *addr, err))
	}
	if host, _, err := net.SplitHostPort(ln.Addr().String()); err == nil {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			fmt.Fprintf(stderr, "gpusim serve: %s is not a loopback address: anyone who can reach it can use the page\n", host)
		}
	}
	srv := h.HTTPServer()
	fmt.Fprintf(stdout, "gpusim serve: the workshop page is at http://%s/ (Ctrl-C stops)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	return nil
}
