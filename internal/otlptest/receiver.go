// Package otlptest is a trace collector for tests: an OTLP/HTTP receiver on
// a loopback socket. It decodes what an exporter sends with the protocol's
// own protobuf types. It keeps every request's headers and raw bytes, so
// that a test can check what reached it and what did not.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, flattened.
type Span struct {
	Service       string // the resource's service.name
	Scope         string
	Name          string
	Kind          tracepb.Span_SpanKind
	TraceID       string // hex
	SpanID        string // hex
	ParentSpanID  string // hex, "" for a root
	Attrs         map[string]any
	StatusCode    tracepb.Status_StatusCode
	StatusMessage string
}

// Receiver is a running OTLP/HTTP receiver.
type Receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	spans   []Span
	raw     bytes.Buffer
	headers []http.Header
	status  int
	body    string
}

// Start runs a receiver on 127.0.0.1; the test's cleanup stops it.
func Start(t testing.TB) *Receiver {
	r := &Receiver{status: http.StatusOK}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// URL is the receiver's base URL; spans are taken at /v1/traces.
func (r *Receiver) URL() string { return r.srv.URL }

// Fail makes the receiver answer every later export with status and body.
func (r *Receiver) Fail(status int, body string) {
	r.mu.Lock()
	r.status, r.body = status, body
	r.mu.Unlock()
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "not an OTLP traces export", http.StatusNotFound)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &msg); err != nil {
		http.Error(w, "not an ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.headers = append(r.headers, req.Header.Clone())
	r.raw.Write(b)
	status, failBody := r.status, r.body
	if status == http.StatusOK {
		r.spans = append(r.spans, flatten(&msg)...)
	}
	r.mu.Unlock()
	if status != http.StatusOK {
		http.Error(w, failBody, status)
		return
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func flatten(msg *coltracepb.ExportTraceServiceRequest) []Span {
	var out []Span
	for _, rs := range msg.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					Service: service, Scope: ss.GetScope().GetName(), Name: s.GetName(), Kind: s.GetKind(),
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentSpanID:  hex.EncodeToString(s.GetParentSpanId()),
					Attrs:         map[string]any{},
					StatusCode:    s.GetStatus().GetCode(),
					StatusMessage: s.GetStatus().GetMessage(),
				}
				for _, kv := range s.GetAttributes() {
					sp.Attrs[kv.GetKey()] = value(kv.GetValue())
				}
				out = append(out, sp)
			}
		}
	}
	return out
}

func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	}
	return fmt.Sprint(v)
}

// Spans returns every span received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Raw returns every export's bytes as received, one after the other.
func (r *Receiver) Raw() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.raw.Bytes())
}

// Headers returns each export's request headers.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// Exports is the number of export requests received (failed or not).
func (r *Receiver) Exports() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.headers)
}

// Find returns the received spans named name.
func (r *Receiver) Find(name string) []Span {
	var out []Span
	for _, s := range r.Spans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// WaitFor polls, within a bound, until ok holds of the spans received,
// and returns them.
func (r *Receiver) WaitFor(t testing.TB, what string, ok func([]Span) bool) []Span {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		spans := r.Spans()
		if ok(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector never received %s; got %d spans: %+v", what, len(spans), spans)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
