package workload

import (
	"strings"
	"testing"
	"time"
)

func TestBoundary(t *testing.T) {
	tests := []struct {
		name   string
		spec   Spec
		edges  []time.Duration // the attacked edges, all of them
		edgeNs time.Duration   // the effective Edge
	}{
		{
			// Defaults: Edge = Window/100 = 10ms, every 2 windows: edges at
			// 1s, 3s, 5s, 7s, 9s.
			name:   "defaults",
			spec:   Spec{Name: "boundary", Duration: 10 * time.Second, Limit: 100, Window: time.Second},
			edges:  []time.Duration{1e9, 3e9, 5e9, 7e9, 9e9},
			edgeNs: 10 * time.Millisecond,
		},
		{
			// Every window attacked: each window holds 2L, not just a span.
			name:   "every window",
			spec:   Spec{Name: "boundary", Duration: 3500 * time.Millisecond, Limit: 5, Window: time.Second, EveryWindows: 1, Edge: 100 * time.Millisecond},
			edges:  []time.Duration{1e9, 2e9, 3e9},
			edgeNs: 100 * time.Millisecond,
		},
		{
			// More arrivals than nanoseconds in Edge: instants repeat, the
			// counts still hold.
			name:   "crowded",
			spec:   Spec{Name: "boundary", Duration: 4 * time.Microsecond, Limit: 50, Window: time.Microsecond, Edge: 7},
			edges:  []time.Duration{1000, 3000},
			edgeNs: 7,
		},
		{
			// Limit 1: one arrival at edge-1, one at the edge.
			name:   "limit 1",
			spec:   Spec{Name: "boundary", Duration: 2500 * time.Millisecond, Limit: 1, Window: time.Second},
			edges:  []time.Duration{1e9},
			edgeNs: 10 * time.Millisecond,
		},
		{
			// Edge = Window: the attack fills two whole windows.
			name:   "whole window",
			spec:   Spec{Name: "boundary", Duration: 4 * time.Second, Limit: 3, Window: time.Second, Edge: time.Second},
			edges:  []time.Duration{1e9, 3e9},
			edgeNs: time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := collect(t, tt.spec)
			L := int(tt.spec.Limit)
			if len(as) != 2*L*len(tt.edges) {
				t.Fatalf("%d arrivals, want 2*%d for each of %d edges", len(as), L, len(tt.edges))
			}
			for _, edge := range tt.edges {
				before := countIn(as, edge-tt.edgeNs, edge)
				after := countIn(as, edge, edge+tt.edgeNs)
				if before != L || after != L {
					t.Errorf("edge %v: %d in [edge-Edge, edge) and %d in [edge, edge+Edge), want %d each", edge, before, after, L)
				}
				if countIn(as, edge-1, edge) == 0 || countIn(as, edge, edge+1) == 0 {
					t.Errorf("edge %v: want arrivals at edge-1 and at the edge itself", edge)
				}
				spread := L > 1 // a single arrival each side sits next to the edge
				if spread && (countIn(as, edge-tt.edgeNs, edge-tt.edgeNs+1) == 0 || countIn(as, edge+tt.edgeNs-1, edge+tt.edgeNs) == 0) {
					t.Errorf("edge %v: want arrivals at edge-Edge and edge+Edge-1, the ends of the spread", edge)
				}
			}
		})
	}
}

// TestBoundaryCut: Duration in the middle of an attack cuts it; nothing at
// or after Duration.
func TestBoundaryCut(t *testing.T) {
	as := collect(t, Spec{Name: "boundary", Duration: time.Second + 5*time.Millisecond, Limit: 100, Window: time.Second})
	if len(as) <= 100 || len(as) >= 200 {
		t.Fatalf("%d arrivals, want all 100 before the edge and part of the 100 after", len(as))
	}
}

// TestBoundaryPhase: EdgeOffset shifts every edge; AlignFirstRequest
// opens each key's window one Window before each attacked edge, and
// spaces attacks 3 windows apart by default.
func TestBoundaryPhase(t *testing.T) {
	tests := []struct {
		name  string
		spec  Spec
		opens []time.Duration // instants of the window-opening arrivals
		edges []time.Duration
	}{
		{name: "offset",
			spec:  Spec{Name: "boundary", Duration: 4 * time.Second, Limit: 4, Window: time.Second, EdgeOffset: 250 * time.Millisecond},
			edges: []time.Duration{1250 * time.Millisecond, 3250 * time.Millisecond}},
		{name: "first request",
			spec:  Spec{Name: "boundary", Duration: 6 * time.Second, Limit: 4, Window: time.Second, Keys: 2, Align: AlignFirstRequest},
			opens: []time.Duration{0, 3 * time.Second}, edges: []time.Duration{time.Second, 4 * time.Second}},
		{name: "first request with an offset",
			spec:  Spec{Name: "boundary", Duration: 3 * time.Second, Limit: 4, Window: time.Second, Keys: 1, Align: AlignFirstRequest, EdgeOffset: 100 * time.Millisecond},
			opens: []time.Duration{100 * time.Millisecond}, edges: []time.Duration{1100 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.spec
			if s.Keys == 0 {
				s.Keys = 1
			}
			as := collect(t, s)
			edge := max(s.Window/defaultEdgeDivisor, 1)
			L := int(s.Limit)
			if want := 2*L*len(tt.edges) + s.Keys*len(tt.opens); len(as) != want {
				t.Fatalf("%d arrivals, want %d", len(as), want)
			}
			for _, o := range tt.opens {
				if got := countIn(as, o, o+1); got != s.Keys {
					t.Errorf("%d arrivals at %v, want one per key (%d)", got, o, s.Keys)
				}
			}
			for _, e := range tt.edges {
				if before, after := countIn(as, e-edge, e), countIn(as, e, e+edge); before != L || after != L {
					t.Errorf("edge %v: %d before and %d after, want %d each", e, before, after, L)
				}
			}
		})
	}
}

func TestBoundaryPhaseInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		want string
	}{
		{name: "offset of a window", spec: Spec{EdgeOffset: time.Second}, want: "edge_offset 1s must be less than window 1s"},
		{name: "negative offset", spec: Spec{EdgeOffset: -1}, want: "edge_offset -1ns must be >= 0"},
		{name: "unknown align", spec: Spec{Align: "midnight"}, want: `align "midnight" is not epoch or first-request`},
		{name: "first request every 2", spec: Spec{Align: AlignFirstRequest, EveryWindows: 2}, want: "every_windows 2 must be >= 3 with align first-request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.spec
			s.Name, s.Duration, s.Limit, s.Window, s.Keys, s.Cost = "boundary", 10*time.Second, 5, time.Second, 1, 1
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}
