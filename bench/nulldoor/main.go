// Command nulldoor is a Qdrant door that does no work: it answers
// qdrant-client's query and upsert calls with fixed, valid Qdrant answers,
// over REST and over gRPC, so that a client's throughput against it is the
// client's own ceiling on this machine (bench/bench_qdrant_served.py, doors
// null-rest and null-grpc).
//
//	nulldoor --rest-addr 127.0.0.2:7001 --grpc-addr 127.0.0.2:7002 \
//	    --query-answer query.json --upsert-answer upsert.json
//
// The answers are the bytes strata's own Qdrant door sent for the bench's
// case (the bench captures them from the real server before it starts this
// one): --query-answer is the body of a POST /collections/{c}/points/query
// answer, --upsert-answer that of a PUT /collections/{c}/points answer.
// REST sends them as they are; gRPC sends the same ids, versions and scores
// as a QueryResponse, and the same operation id as a
// PointsOperationResponse, built once at start-up.
//
// Per request the door reads and drops the body (HTTP) or lets grpc-go
// decode the message (gRPC: it cannot be skipped), then writes the fixed
// answer. Any other route answers 404, any other gRPC call Unimplemented.
// GET / answers Qdrant's version document, for readiness checks.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"

	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
	"google.golang.org/grpc"
)

func main() {
	restAddr := flag.String("rest-addr", "", "address of the REST door (host:port)")
	grpcAddr := flag.String("grpc-addr", "", "address of the gRPC door (host:port); empty: none")
	queryFile := flag.String("query-answer", "", "body of a Qdrant query answer (JSON file)")
	upsertFile := flag.String("upsert-answer", "", "body of a Qdrant upsert answer (JSON file)")
	flag.Parse()
	if *restAddr == "" || *queryFile == "" || *upsertFile == "" {
		log.Fatal("nulldoor: --rest-addr, --query-answer and --upsert-answer are required")
	}
	query, err := os.ReadFile(*queryFile)
	if err != nil {
		log.Fatalf("nulldoor: %v", err)
	}
	upsert, err := os.ReadFile(*upsertFile)
	if err != nil {
		log.Fatalf("nulldoor: %v", err)
	}
	qa, err := queryAnswerOf(query)
	if err != nil {
		log.Fatalf("nulldoor: --query-answer %s: %v", *queryFile, err)
	}
	ua, err := upsertAnswerOf(upsert)
	if err != nil {
		log.Fatalf("nulldoor: --upsert-answer %s: %v", *upsertFile, err)
	}
	if *grpcAddr != "" {
		ln, err := net.Listen("tcp", *grpcAddr)
		if err != nil {
			log.Fatalf("nulldoor: %v", err)
		}
		s := grpc.NewServer()
		pb.RegisterPointsServer(s, points{query: qa, upsert: ua})
		go func() { log.Fatal(s.Serve(ln)) }()
	}
	srv := &http.Server{Addr: *restAddr, Handler: rest{query: query, upsert: upsert}}
	log.Fatal(srv.ListenAndServe())
}

// rest answers the two routes with the fixed bodies.
type rest struct{ query, upsert []byte }

func (h rest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/":
		body = []byte(`{"title":"qdrant - vector search engine (strata nulldoor)","version":"1.15.0"}`)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/points/query"):
		body = h.query
	case r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/points"):
		body = h.upsert
	default:
		http.Error(w, `{"status":{"error":"nulldoor: not served"}}`, http.StatusNotFound)
		return
	}
	// the body is read so that the connection can carry the next request
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// points answers Query and Upsert with messages built once.
type points struct {
	pb.UnimplementedPointsServer
	query  *pb.QueryResponse
	upsert *pb.PointsOperationResponse
}

func (p points) Query(context.Context, *pb.QueryPoints) (*pb.QueryResponse, error) {
	return p.query, nil
}

func (p points) Upsert(context.Context, *pb.UpsertPoints) (*pb.PointsOperationResponse, error) {
	return p.upsert, nil
}

// queryAnswerOf is the gRPC answer carrying the REST answer's points.
func queryAnswerOf(body []byte) (*pb.QueryResponse, error) {
	var a struct {
		Result struct {
			Points []struct {
				ID      uint64  `json:"id"`
				Version uint64  `json:"version"`
				Score   float32 `json:"score"`
			} `json:"points"`
		} `json:"result"`
		Time float64 `json:"time"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, err
	}
	if len(a.Result.Points) == 0 {
		return nil, fmt.Errorf("no result.points in %.200q", body)
	}
	out := &pb.QueryResponse{Time: a.Time}
	for _, p := range a.Result.Points {
		out.Result = append(out.Result, &pb.ScoredPoint{
			Id:      &pb.PointId{PointIdOptions: &pb.PointId_Num{Num: p.ID}},
			Version: p.Version, Score: p.Score,
		})
	}
	return out, nil
}

// upsertAnswerOf is the gRPC answer carrying the REST answer's operation id.
func upsertAnswerOf(body []byte) (*pb.PointsOperationResponse, error) {
	var a struct {
		Result struct {
			OperationID *uint64 `json:"operation_id"`
			Status      string  `json:"status"`
		} `json:"result"`
		Time float64 `json:"time"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, err
	}
	if a.Result.Status != "completed" || a.Result.OperationID == nil {
		return nil, fmt.Errorf("not a completed upsert answer: %.200q", body)
	}
	return &pb.PointsOperationResponse{
		Result: &pb.UpdateResult{OperationId: a.Result.OperationID, Status: pb.UpdateStatus_Completed},
		Time:   a.Time,
	}, nil
}
