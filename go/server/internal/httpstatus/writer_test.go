package httpstatus

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestWriterRecordsWhatWasSent: the first explicit status, or the implicit
// 200 of a body sent without one; metrics and panic recovery rely on it.
func TestWriterRecordsWhatWasSent(t *testing.T) {
	w := &Writer{ResponseWriter: httptest.NewRecorder()}
	if w.Code != 0 {
		t.Fatalf("fresh writer has code %d", w.Code)
	}
	w.WriteHeader(http.StatusNotFound)
	w.WriteHeader(http.StatusOK)
	if w.Code != http.StatusNotFound {
		t.Fatalf("code %d after 404 then 200, want 404", w.Code)
	}
	w = &Writer{ResponseWriter: httptest.NewRecorder()}
	if _, err := w.Write([]byte("{}")); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusOK {
		t.Fatalf("code %d after a body without a header, want 200", w.Code)
	}
}
