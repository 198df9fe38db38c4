package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
)

// readAPIKey picks the API key: --api-key-file, else $STRATA_API_KEY, else
// --api-key (kept for compatibility; its value shows in ps). It returns
// where the key came from ("" when there is none), for the log.
func readAPIKey(flagKey, file string) (key, from string, err error) {
	if file != "" && flagKey != "" {
		return "", "", errors.New("give --api-key-file or --api-key, not both")
	}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return "", "", fmt.Errorf("--api-key-file: %w", err)
		}
		key, _, _ = strings.Cut(string(data), "\n")
		key = strings.TrimSpace(key)
		if key == "" {
			return "", "", fmt.Errorf("--api-key-file: %s holds no key on its first line", file)
		}
		return key, "--api-key-file", nil
	}
	if flagKey != "" {
		return flagKey, "--api-key", nil
	}
	if env := os.Getenv("STRATA_API_KEY"); env != "" {
		return env, "$STRATA_API_KEY", nil
	}
	return "", "", nil
}

// debugMux serves pprof's handlers, and nothing else: not
// http.DefaultServeMux, which any imported package may have added routes
// to, and not /debug/pprof/cmdline, which shows the command line (and a
// key given with --api-key) to anyone who reaches the port.
func debugMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/debug/pprof/cmdline" {
			http.Error(w, "not served: the command line may hold secrets", http.StatusNotFound)
			return
		}
		pprof.Index(w, r)
	})
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
