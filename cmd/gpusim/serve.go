package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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
scenario checks of gpusim run --set, and a bad one is a 400 with the same message. --timeout
bounds the simulations of one request.

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
	timeout := fs.Duration("timeout", web.DefaultOptions().Timeout, "longest `duration` the simulations of one request may take")
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
	o := web.DefaultOptions()
	o.Timeout = *timeout
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
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 64 << 10}
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
