package main

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRawClientReadsNetHTTPAnswersOnOneSocket: answers of several sizes
// (one past the 64 KiB buffer) and statuses come back whole, in order, on
// one keep-alive connection.
func TestRawClientReadsNetHTTPAnswersOnOneSocket(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		size := len(body) * 1000
		w.Header().Set("Content-Length", strconv.Itoa(size))
		if bytes.HasPrefix(body, []byte("missing")) {
			w.WriteHeader(http.StatusNotFound)
		}
		w.Write(bytes.Repeat(body[:1], size))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	h := httpConn{addr: host}
	defer h.close()
	for i, body := range []string{"a", "bb", "missing", strings.Repeat("c", 70), "d"} {
		status, got, err := h.roundTrip(requestBytes(host, "/x", []byte(body)))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		want := http.StatusOK
		if body == "missing" {
			want = http.StatusNotFound
		}
		if status != want || len(got) != len(body)*1000 || got[0] != body[0] || got[len(got)-1] != body[0] {
			t.Fatalf("request %d: status %d, %d bytes %.10q; want %d, %d bytes of %q", i, status, len(got), got, want, len(body)*1000, body[0])
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 5 requests, want 1 (keep-alive)", n)
	}
}

// TestRawClientSurvivesAnswersSplitAnywhere: the header's end marker and
// the body may arrive in any pieces; an answer written one byte at a time
// parses like one written at once.
func TestRawClientSurvivesAnswersSplitAnywhere(t *testing.T) {
	answer := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 13\r\n\r\n{\"results\":1}"
	got := serveRaw(t, answer+answer, 1, 2)
	for _, a := range got {
		if a.err != nil || a.status != 200 || a.body != `{"results":1}` {
			t.Fatalf("got %+v", a)
		}
	}
}

// TestRawClientRefusesWhatItCannotFrame: without a Content-Length (chunked),
// with "Connection: close", or with a garbled status line, an answer is an
// error, never a success with a wrong body.
func TestRawClientRefusesWhatItCannotFrame(t *testing.T) {
	for _, tc := range []struct {
		answer string
		want   error
	}{
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", errChunked},
		{"HTTP/1.1 200 OK\r\n\r\n{}", errChunked},
		{"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", errClose},
		{"HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\n{}", errMalformed},
		{"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", errMalformed},
		{"HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\n{}", errMalformed},
	} {
		got := serveRaw(t, tc.answer, len(tc.answer), 1)
		if !errors.Is(got[0].err, tc.want) {
			t.Errorf("%q: error %v, want %v", tc.answer, got[0].err, tc.want)
		}
	}
}

type answer struct {
	status int
	body   string
	err    error
}

// serveRaw writes text to the client in pieces of piece bytes and returns
// what n round trips read.
func serveRaw(t *testing.T, text string, piece, n int) []answer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		for i := 0; i < len(text); i += piece {
			if _, err := c.Write([]byte(text[i:min(i+piece, len(text))])); err != nil {
				return
			}
			time.Sleep(10 * time.Microsecond)
		}
		time.Sleep(100 * time.Millisecond) // let the client read before the close
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second)) // a parser that misses the answer fails, not hangs
	h := httpConn{addr: ln.Addr().String(), conn: c}
	defer h.close()
	var got []answer
	for range n {
		status, body, err := h.roundTrip([]byte("x"))
		got = append(got, answer{status, string(body), err})
		if err != nil {
			break // the next call would dial a connection nobody accepts
		}
	}
	return got
}

// TestLatencyQuantilesWithinABucket: quantiles read from the histogram are
// within 1/128 of the exact order statistic.
func TestLatencyQuantilesWithinABucket(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var l latencies
	var all []time.Duration
	for range 100_000 {
		d := time.Duration(rng.ExpFloat64() * float64(300*time.Microsecond))
		all = append(all, d)
		l.record(d)
	}
	slices.Sort(all)
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 0.999, 1} {
		exact := all[int(q*float64(len(all)-1))]
		got := l.quantile(q)
		if diff := float64(got-exact) / float64(exact); diff > 1.0/128 || diff < -1.0/128 {
			t.Errorf("q=%v: %v, exact %v", q, got, exact)
		}
	}
	if l.max != all[len(all)-1] {
		t.Errorf("max %v, want %v", l.max, all[len(all)-1])
	}
}

// A result written into a directory must carry the name bench/report.py and
// bench/runinfo.py parse; a drifting format would drop it from the docs.
func TestResultNameFollowsTheResultsLayout(t *testing.T) {
	now := time.Date(2026, 12, 1, 4, 12, 57, 0, time.FixedZone("CET", 3600))
	for _, tc := range []struct{ commit, label, want string }{
		{"610215c", "", "server-load-20261201T031257Z-610215c.json"},
		{"610215c", "query-only", "server-load-20261201T031257Z-610215c-query-only.json"},
		{"", "", "server-load-20261201T031257Z-nogit.json"},
	} {
		if got := resultName(now, tc.commit, tc.label); got != tc.want {
			t.Errorf("resultName(%q, %q) = %q, want %q", tc.commit, tc.label, got, tc.want)
		}
	}
}

// TestRawClientSendsARequestInTwoWrites: a request sent as its header
// block and then its body (httpx's two writes) reaches the server whole,
// its method, extra headers and body intact, and the answer parses.
func TestRawClientSendsARequestInTwoWrites(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		answer := r.Method + " " + r.URL.RequestURI() + " " + r.Header.Get("User-Agent") + " " + string(body)
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		w.Write([]byte(answer))
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	h := httpConn{addr: host}
	defer h.close()
	wire := requestWith("PUT", host, "/p?wait=true", "User-Agent: python-client/1\r\n", []byte(`{"points":[1]}`))
	head := bytes.Index(wire, []byte("\r\n\r\n")) + 4
	for i, split := range []int{head, 0, head} {
		status, got, err := h.roundTripIn2(wire, split)
		if want := `PUT /p?wait=true python-client/1 {"points":[1]}`; err != nil || status != http.StatusOK || string(got) != want {
			t.Fatalf("request %d (head %d): %d %q %v; want 200 %q", i, split, status, got, err, want)
		}
	}
}

// TestPyVectorWritesWhatPythonWrites: numbers as json.dumps writes
// np.float32 values after tolist() (float(np.float32(x)) in repr).
func TestPyVectorWritesWhatPythonWrites(t *testing.T) {
	got := string(pyVector([]float32{0.3, -1.5, 1e-7, 2, 0, 1e-4, 1234567, 1e16, 3e38}))
	// json.dumps of the float32 values widened (what tolist() gives), spaces removed:
	// python3 -c 'import json, struct; print(json.dumps([struct.unpack("f", struct.pack("f", x))[0]
	//   for x in [0.3, -1.5, 1e-7, 2, 0, 1e-4, 1234567, 1e16, 3e38]]).replace(" ", ""))'
	want := "[0.30000001192092896,-1.5,1.0000000116860974e-07,2.0,0.0,9.999999747378752e-05," +
		"1234567.0,1.0000000272564224e+16,3.0000000054977558e+38]"
	if got != want {
		t.Fatalf("pyVector = %s, want %s", got, want)
	}
}
