// Command strata-server serves the collections in a data directory over
// HTTP: the REST API, Prometheus metrics at /metrics and the playground at
// /. It holds flags, signals and wiring only; package server does the
// work.
//
//	strata-server --data-dir DIR [--addr 127.0.0.1:8080] [--api-key-file FILE] [--qdrant-addr 127.0.0.1:6333]
//	              [--qdrant-grpc-addr 127.0.0.1:6334]
//	              [--allow-origin URL,...] [--allow-host NAME,...] [--max-body-bytes N] [--max-k N]
//	              [--max-results N] [--max-answer-bytes N] [--debug-addr 127.0.0.1:6060] [--gomaxprocs N]
//
// The API key comes from --api-key-file (the file's first line) or the
// STRATA_API_KEY environment variable. --api-key KEY still works, with a
// warning: any user of the machine reads it in ps.
//
// Browsers: a page of another origin may not write (package guard); allow
// one with --allow-origin http://host:port (or "*"). Listening on loopback
// only, the server answers only Host names of loopback (localhost,
// 127.0.0.1, ::1) and those of --allow-host, against DNS rebinding.
//
// Limits (both doors; package guard): --max-body-bytes, --max-k (results
// per query), --max-results (per request), --max-answer-bytes (estimated
// answer size).
//
// --qdrant-addr (off by default) also serves Qdrant's REST API (package
// qdrant) on its own listener, over the same collections and API key.
// --qdrant-grpc-addr (off by default) serves Qdrant's gRPC API (the same
// package: what qdrant-client speaks with prefer_grpc=True) on another,
// with the same key (the "api-key" metadata) and limits.
//
// --debug-addr (off by default) serves net/http/pprof's /debug/pprof/ on
// its own listener, without the API key: bind it to loopback. The load
// generator (bench/loadgen --profile) reads CPU profiles from it. It
// never serves /debug/pprof/cmdline: the command line may hold a key.
//
// --gomaxprocs N sets how many threads run Go code at once (GOMAXPROCS).
// By default (0) it is one more than the CPUs, unless a GOMAXPROCS
// environment variable or a cgroup CPU limit set the runtime's choice,
// which then stands: see chooseProcs for why and what it was measured to
// gain and cost. More threads still (--gomaxprocs 4 on 2 cores) lowered
// the co-located p99 a little further but cost 8 % per query alone. GC
// settings (GOGC=400, or GOGC=off with GOMEMLIMIT=1GiB) changed nothing
// measurable: the collector takes under 1 % of the CPU.
//
// SIGTERM or SIGINT stops accepting connections, lets in-flight requests
// finish, checkpoints every collection and exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/strata-db/strata/go/demo"
	"github.com/strata-db/strata/go/server"
	"github.com/strata-db/strata/go/server/guard"
	"github.com/strata-db/strata/go/server/qdrant"
	"google.golang.org/grpc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "strata-server:", err)
		os.Exit(1)
	}
}

func run() error {
	fl := flag.NewFlagSet("strata-server", flag.ContinueOnError)
	dataDir := fl.String("data-dir", "", "directory holding one subdirectory per collection (required)")
	addr := fl.String("addr", "127.0.0.1:8080", "listen address; loopback by default")
	apiKey := fl.String("api-key", "", "API key (visible in ps: prefer --api-key-file or $STRATA_API_KEY)")
	apiKeyFile := fl.String("api-key-file", "", "file whose first line is the API key required by every route but /health and the playground's files (default $STRATA_API_KEY)")
	allowOrigins := fl.String("allow-origin", "", "comma-separated browser origins (http://host:port, or *) whose pages may write; default only the server's own")
	allowHosts := fl.String("allow-host", "", "comma-separated Host names to answer besides loopback's when listening on loopback (or, when listening wider, the only ones)")
	maxBody := fl.Int64("max-body-bytes", guard.DefaultMaxBodyBytes, "largest request body accepted")
	maxK := fl.Int("max-k", guard.DefaultMaxK, "most results one query may ask for (k, Qdrant limit+offset)")
	maxResults := fl.Int("max-results", guard.DefaultMaxResults, "most results one request may ask for over all its queries")
	maxAnswer := fl.Int64("max-answer-bytes", guard.DefaultMaxAnswerBytes, "largest estimated answer; larger requests are refused with 422")
	logLevel := fl.String("log-level", "info", "debug, info, warn or error")
	logJSON := fl.Bool("log-json", false, "log JSON lines instead of text")
	demoSource := fl.String("demo", "", "load a demo collection: a pypi-demo directory, or \"generated\"")
	playgroundModel := fl.String("playground-model", "", "directory of the playground's sentence encoder for semantic search (make playground-model builds go/server/playground/model/dist; from a pip install, python -m strata.playground_model DIR); off when empty")
	headerTimeout := fl.Duration("header-timeout", 5*time.Second, "longest time to read a request's headers")
	readTimeout := fl.Duration("read-timeout", 30*time.Second, "longest time to read a request, body included")
	writeTimeout := fl.Duration("write-timeout", 60*time.Second, "longest time to handle a request and write its answer")
	qdrantAddr := fl.String("qdrant-addr", "", "also serve the Qdrant REST API on this address (off when empty)")
	qdrantGRPCAddr := fl.String("qdrant-grpc-addr", "", "also serve the Qdrant gRPC API on this address, as qdrant-client's prefer_grpc=True speaks it (off when empty)")
	snapshotsDir := fl.String("snapshots-dir", "", "directory of the Qdrant door's collection snapshots (default <data-dir>/qdrant.snapshots)")
	debugAddr := fl.String("debug-addr", "", "serve net/http/pprof on this address, unauthenticated (off when empty)")
	shutdownTimeout := fl.Duration("shutdown-timeout", 30*time.Second, "how long in-flight requests may run after SIGTERM")
	gomaxprocs := fl.Int("gomaxprocs", 0, "threads running Go code at once (GOMAXPROCS); 0: one more than the CPUs, or the runtime's choice under $GOMAXPROCS or a cgroup CPU limit")
	if err := fl.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if *dataDir == "" {
		return errors.New("--data-dir is required")
	}
	if *gomaxprocs < 0 {
		return fmt.Errorf("--gomaxprocs must be 0 (the runtime's choice) or more, got %d", *gomaxprocs)
	}
	procs, procsWhy := chooseProcs(*gomaxprocs, os.Getenv("GOMAXPROCS") != "", runtime.GOMAXPROCS(0), runtime.NumCPU())
	if procs != runtime.GOMAXPROCS(0) {
		// Only then: setting it stops the runtime from following later
		// changes of a cgroup CPU limit.
		runtime.GOMAXPROCS(procs)
	}
	if *playgroundModel != "" {
		if _, err := os.Stat(filepath.Join(*playgroundModel, "embed.js")); err != nil {
			return fmt.Errorf("--playground-model: not a built model directory (make playground-model, or python -m strata.playground_model DIR): %w", err)
		}
	}
	key, keyFrom, err := readAPIKey(*apiKey, *apiKeyFile)
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	hopts := &slog.HandlerOptions{Level: level}
	var log *slog.Logger
	if *logJSON {
		log = slog.New(slog.NewJSONHandler(os.Stderr, hopts))
	} else {
		log = slog.New(slog.NewTextHandler(os.Stderr, hopts))
	}

	if keyFrom == "--api-key" {
		log.Warn("--api-key is visible to every user of this machine (ps, /proc): use --api-key-file or $STRATA_API_KEY")
	}
	listens := []string{*addr}
	if *qdrantAddr != "" {
		listens = append(listens, *qdrantAddr)
	}
	srv, err := server.New(server.Config{DataDir: *dataDir, APIKey: key, Logger: log,
		AllowOrigins: splitList(*allowOrigins), Hosts: guard.HostsFor(listens, splitList(*allowHosts)),
		Limits:          guard.Limits{MaxBodyBytes: *maxBody, MaxK: *maxK, MaxResults: *maxResults, MaxAnswerBytes: *maxAnswer},
		PlaygroundModel: *playgroundModel})
	if err != nil {
		return err
	}
	if *demoSource != "" {
		name, loaded, err := demo.Load(srv, *demoSource)
		if err != nil {
			srv.Close()
			return fmt.Errorf("--demo: %w", err)
		}
		log.Info("demo collection ready", "name", name, "loaded", loaded)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		srv.Close()
		return err
	}
	timeouts := server.Timeouts{ReadHeader: *headerTimeout, Read: *readTimeout, Write: *writeTimeout}
	hs := srv.HTTPServer(timeouts)
	var qs *http.Server
	var qln, gln net.Listener
	var gs *grpc.Server
	if *qdrantAddr != "" || *qdrantGRPCAddr != "" {
		qh, err := qdrant.New(qdrant.Config{Collections: srv, Guard: srv.Guard(), Logger: log, Metrics: srv.MetricsHandler(),
			SnapshotsDir: *snapshotsDir})
		if err == nil && *qdrantAddr != "" {
			if qln, err = net.Listen("tcp", *qdrantAddr); err != nil {
				err = fmt.Errorf("--qdrant-addr: %w", err)
			}
		}
		if err == nil && *qdrantGRPCAddr != "" {
			if gln, err = net.Listen("tcp", *qdrantGRPCAddr); err != nil {
				err = fmt.Errorf("--qdrant-grpc-addr: %w", err)
			}
		}
		if err != nil {
			for _, l := range []net.Listener{ln, qln} {
				if l != nil {
					l.Close()
				}
			}
			srv.Close()
			return err
		}
		if qln != nil {
			// The native server's timeouts and limits, with the Qdrant handler.
			qs = srv.HTTPServer(timeouts)
			qs.Handler = qh
			log.Info("serving the Qdrant REST API", "addr", qln.Addr().String())
		}
		if gln != nil {
			gs = qh.GRPCServer()
			log.Info("serving the Qdrant gRPC API", "addr", gln.Addr().String())
		}
	}
	if *debugAddr != "" {
		dln, err := net.Listen("tcp", *debugAddr)
		if err != nil {
			ln.Close()
			srv.Close()
			return fmt.Errorf("--debug-addr: %w", err)
		}
		ds := &http.Server{Handler: debugMux(), ReadHeaderTimeout: *headerTimeout}
		go ds.Serve(dln) // ends with the process
		log.Warn("serving pprof without authentication", "addr", dln.Addr().String())
	}
	log.Info("listening", "addr", ln.Addr().String(), "data_dir", *dataDir, "auth", key != "", "api_key_from", keyFrom,
		"collections", srv.Collections(), "gomaxprocs", procs, "gomaxprocs_why", procsWhy)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	served := make(chan error, 3)
	go func() { served <- hs.Serve(ln) }()
	if qs != nil {
		go func() { served <- qs.Serve(qln) }()
	}
	if gs != nil {
		go func() { served <- gs.Serve(gln) }()
	}
	select {
	case err := <-served:
		srv.Close()
		return err
	case <-ctx.Done():
	}
	stop() // a second signal kills the process the default way
	log.Info("shutting down: finishing in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), *shutdownTimeout)
	defer cancel()
	if gs != nil {
		stopGRPC(sctx, gs)
	}
	shutdownErr := hs.Shutdown(sctx)
	if qs != nil {
		shutdownErr = errors.Join(shutdownErr, qs.Shutdown(sctx))
	}
	if shutdownErr != nil {
		log.Warn("in-flight requests did not finish in time", "error", shutdownErr)
	}
	if err := srv.Close(); err != nil {
		return fmt.Errorf("closing collections: %w", err)
	}
	log.Info("stopped: collections checkpointed and closed")
	return nil
}

// stopGRPC lets gs's in-flight calls finish until ctx ends, then cuts
// the rest.
func stopGRPC(ctx context.Context, gs *grpc.Server) {
	done := make(chan struct{})
	go func() {
		gs.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		gs.Stop()
	}
}
