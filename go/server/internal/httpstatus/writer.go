// Package httpstatus remembers the HTTP status a handler sent, for the metrics,
// logs and panic recovery of both of strata-server's doors (the native API
// in go/server and the Qdrant API in go/server/qdrant).
package httpstatus

import "net/http"

// Writer is an http.ResponseWriter that records the status it sends. Code
// is 0 until the handler writes a header or a body (a body without a header
// is 200, as net/http sends it), so a recovered panic can tell whether an
// error answer can still be written.
type Writer struct {
	http.ResponseWriter
	Code int
}

// WriteHeader records code (the first one: net/http ignores later calls).
func (w *Writer) WriteHeader(code int) {
	if w.Code == 0 {
		w.Code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records the implicit 200 of a body written without a header.
func (w *Writer) Write(b []byte) (int, error) {
	if w.Code == 0 {
		w.Code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection underneath.
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }
